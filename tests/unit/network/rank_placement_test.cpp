#include "network/rank_placement.h"

#include <gtest/gtest.h>

#include "test_topologies.h"

namespace orrery {
namespace {

using testing::two_tier;

TEST(RankPlacement, TensorParallelFillsOneServer) {
  const Topology t = two_tier();
  const RankPlacement p({{"tp", 8}, {"ep", 2}, {"dp", 2}, {"pp", 4}}, t);
  EXPECT_EQ(p.world_size(), 128);
  bool uniform = false;
  const std::vector<size_t> tp = {0};
  const GroupShape s = p.group_shape(tp, &uniform);
  EXPECT_TRUE(uniform);
  EXPECT_EQ(s.ranks, 8);
  EXPECT_EQ(s.span, (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(s.outermost(), 0);
}

TEST(RankPlacement, OuterAxesPutOneRankPerServer) {
  const Topology t = two_tier();
  const RankPlacement p({{"tp", 8}, {"ep", 2}, {"dp", 2}, {"pp", 4}}, t);
  const std::vector<size_t> data = {1, 2};  // ep and dp: all data-parallel replicas
  const GroupShape s = p.group_shape(data);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.span, (std::vector<int64_t>{1, 4}));
  EXPECT_FALSE(s.crosses_leaves);  // servers 0..3 share the first leaf (4 servers per leaf)
  const GroupShape pp = p.shape_of(p.boundary_pair(3, 0));
  EXPECT_EQ(pp.span, (std::vector<int64_t>{1, 2}));
  // The pipeline group (servers 0, 4, 8, 12) spans four leaves.
  const std::vector<size_t> pipeline = {3};
  EXPECT_TRUE(p.group_shape(pipeline).crosses_leaves);
}

// TP 1, DP 4, PP 4 on servers of 8: stage s holds GPUs 4s to 4s + 3, so boundary 0 (0-4) and 2
// (8-12) lie inside a server, 1 (4-8) and the wrap-around 3 (12-0) across two; every data-parallel
// replica's pair lies alike, and the first (rank 0's) stands for each.
TEST(RankPlacement, EachBoundaryHasItsOwnPair) {
  const Topology t = two_tier();
  const RankPlacement p({{"tp", 1}, {"dp", 4}, {"pp", 4}}, t);
  EXPECT_EQ(p.boundary_pair(2, 0), (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(p.boundary_pair(2, 1), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(p.boundary_pair(2, 2), (std::vector<int64_t>{8, 12}));
  EXPECT_EQ(p.boundary_pair(2, 3), (std::vector<int64_t>{12, 0}));
  EXPECT_EQ(p.shape_of(p.boundary_pair(2, 0)).outermost(), 0);
  EXPECT_EQ(p.shape_of(p.boundary_pair(2, 1)).outermost(), 1);
  EXPECT_EQ(p.boundary_pair(1, 0), (std::vector<int64_t>{0, 1}));  // along dp
  const RankPlacement one({{"tp", 8}, {"pp", 1}}, t);
  EXPECT_EQ(one.boundary_pair(1, 0), (std::vector<int64_t>{0}));
}

// DP 6, PP 2 on servers of 8: boundary 0 pairs GPU g with g + 6; replicas 0 and 1 stay inside
// server 0, replicas 2 to 5 cross to server 1. The boundary takes the most spread pair, 2-8.
TEST(RankPlacement, ABoundaryWhoseReplicasDifferTakesTheSlowestPair) {
  const Topology t = two_tier();
  const RankPlacement p({{"dp", 6}, {"pp", 2}}, t);
  EXPECT_EQ(p.boundary_pair(1, 0), (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(p.shape_of(p.boundary_pair(1, 0)).outermost(), 1);
}

// Keeping the pipeline axis at its ends: the groups along it are {stage 0, stage 3} of each
// (tp, ep, dp) position, and stages 1 and 2 take part in none.
TEST(RankPlacement, EndsOfAnAxisPairTheFirstAndLastCoordinate) {
  const Topology t = two_tier();
  const RankPlacement p({{"tp", 8}, {"ep", 2}, {"dp", 2}, {"pp", 4}}, t);
  const RankPlacement ends = p.ends_of(3);
  EXPECT_EQ(ends.world_size(), 128);
  const std::vector<size_t> pipeline = {3};
  EXPECT_EQ(ends.group_members(pipeline, 5), (std::vector<int64_t>{5, 5 + 3 * 32}));
  const auto groups = ends.groups(pipeline);
  ASSERT_EQ(groups.size(), 32u);
  for (const auto& g : groups) {
    ASSERT_EQ(g.size(), 2u);
    EXPECT_LT(g[0], 32);         // stage 0
    EXPECT_EQ(g[1], g[0] + 96);  // stage 3
  }
  // An axis of one or two coordinates is its own ends.
  const RankPlacement two({{"tp", 8}, {"pp", 2}}, t);
  EXPECT_EQ(two.ends_of(1).group_members(std::vector<size_t>{1}, 0),
            two.group_members(std::vector<size_t>{1}, 0));
}

TEST(RankPlacement, OrderDecidesWhatSharesAServer) {
  const Topology t = two_tier();
  const RankPlacement p({{"ep", 2}, {"tp", 8}, {"dp", 2}, {"pp", 4}}, t);
  const std::vector<size_t> ep = {0}, tp = {1};
  EXPECT_EQ(p.group_shape(ep).span, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(p.group_shape(tp).span, (std::vector<int64_t>{4, 2}));
}

TEST(RankPlacement, UnevenGroupsReportTheMostSpreadOne) {
  // tp 3 on 8-GPU servers: {0,1,2} fits, {6,7,8} straddles two servers.
  const Topology t = two_tier();
  const RankPlacement p({{"tp", 3}, {"dp", 8}}, t);
  bool uniform = true;
  const std::vector<size_t> tp = {0};
  const GroupShape s = p.group_shape(tp, &uniform);
  EXPECT_FALSE(uniform);
  EXPECT_EQ(s.span, (std::vector<int64_t>{2, 2}));
}

TEST(RankPlacement, JobsLargerThanTheNetworkAreRefused) {
  const Topology t({testing::dimension("only", DimensionKind::Switch, 8, 1)});
  EXPECT_THROW(RankPlacement({{"tp", 16}}, t), std::invalid_argument);
}

}  // namespace
}  // namespace orrery
