#include "network/rank_placement.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

// tp 8, ep 2, dp 2, pp 4 on servers of 8 GPUs: 128 ranks.
RankPlacement megatron_like() {
  return RankPlacement({{"tp", 8}, {"ep", 2}, {"dp", 2}, {"pp", 4}}, 8);
}

TEST(RankPlacement, TensorParallelFillsOneServer) {
  const RankPlacement p = megatron_like();
  EXPECT_EQ(p.world_size(), 128);
  bool uniform = false;
  const std::vector<size_t> tp = {0};
  const GroupShape s = p.group_shape(tp, &uniform);
  EXPECT_TRUE(uniform);
  EXPECT_EQ(s.ranks, 8);
  EXPECT_EQ(s.servers, 1);
  EXPECT_EQ(s.ranks_per_server, 8);
}

TEST(RankPlacement, OuterAxesPutOneRankPerServer) {
  const RankPlacement p = megatron_like();
  const std::vector<size_t> data = {1, 2};  // ep and dp: all data-parallel replicas
  const GroupShape s = p.group_shape(data);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.servers, 4);
  EXPECT_EQ(s.ranks_per_server, 1);
  EXPECT_TRUE(p.neighbours_cross_servers(3));   // pp stride 32
  EXPECT_FALSE(p.neighbours_cross_servers(0));  // tp stride 1
}

TEST(RankPlacement, OrderDecidesWhatSharesAServer) {
  // Expert parallelism innermost: the 2 expert ranks share a server, tp straddles 2 servers.
  const RankPlacement p({{"ep", 2}, {"tp", 8}, {"dp", 2}, {"pp", 4}}, 8);
  const std::vector<size_t> ep = {0}, tp = {1};
  EXPECT_EQ(p.group_shape(ep).servers, 1);
  const GroupShape t = p.group_shape(tp);
  EXPECT_EQ(t.servers, 2);
  EXPECT_EQ(t.ranks_per_server, 4);
}

TEST(RankPlacement, UnevenGroupsReportTheMostSpreadOne) {
  // tp 3 on 8-GPU servers: {0,1,2} and {3,4,5} fit, {6,7,8} straddles two servers.
  const RankPlacement p({{"tp", 3}, {"dp", 8}}, 8);
  bool uniform = true;
  const std::vector<size_t> tp = {0};
  const GroupShape s = p.group_shape(tp, &uniform);
  EXPECT_FALSE(uniform);
  EXPECT_EQ(s.servers, 2);
  EXPECT_EQ(s.ranks_per_server, 2);
}

}  // namespace
}  // namespace orrery
