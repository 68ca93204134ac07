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
  const GroupShape pp = p.neighbour_shape(3);
  EXPECT_EQ(pp.span, (std::vector<int64_t>{1, 2}));
  // The pipeline group (servers 0, 4, 8, 12) spans four leaves.
  const std::vector<size_t> pipeline = {3};
  EXPECT_TRUE(p.group_shape(pipeline).crosses_leaves);
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
