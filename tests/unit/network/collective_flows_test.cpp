#include "network/collective_flows.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "network/rank_placement.h"
#include "test_topologies.h"

namespace orrery {
namespace {

std::vector<int64_t> first(int64_t n) {
  std::vector<int64_t> m(static_cast<size_t>(n));
  std::iota(m.begin(), m.end(), 0);
  return m;
}

// On an uncontended network the flow decomposition takes the analytical time.
void expect_flow_equals_analytical(const Topology& t, Algorithm a, CollectiveKind kind, Bytes bytes,
                                   int64_t n) {
  const RankPlacement placement({{"all", n}}, t);
  const std::vector<size_t> axis = {0};
  const GroupShape shape = placement.group_shape(axis);
  const auto members = first(n);
  const CollectiveFlowRun run = run_collective_flows(t, kind, bytes, members, shape, a);
  ASSERT_EQ(run.algorithm, a);
  const auto analytical = algorithm_time(t, a, kind, bytes, shape);
  ASSERT_TRUE(analytical);
  // Within a picosecond per flow step (each flow's end is rounded up).
  EXPECT_NEAR(static_cast<double>(run.time.ps()), static_cast<double>(analytical->ps()), 4096)
      << to_string(a) << " " << to_string(kind) << " on " << n;
}

TEST(CollectiveFlows, UncontendedFlowsTakeTheAnalyticalTime) {
  const Topology two = testing::two_tier(true), torus = testing::torus();
  for (const auto kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
    expect_flow_equals_analytical(two, Algorithm::Ring, kind, 1 << 30, 8);
    expect_flow_equals_analytical(two, Algorithm::Ring, kind, 1 << 30, 32);  // 4 servers of 8
    expect_flow_equals_analytical(two, Algorithm::Hierarchical, kind, 1 << 30, 32);
    expect_flow_equals_analytical(two, Algorithm::HalvingDoubling, kind, 1 << 30, 32);
    expect_flow_equals_analytical(torus, Algorithm::Ring, kind, 1 << 30, 4);
    expect_flow_equals_analytical(torus, Algorithm::Hierarchical, kind, 1 << 30, 64);
  }
  expect_flow_equals_analytical(two, Algorithm::Direct, CollectiveKind::AllToAll, 1 << 26, 16);
  for (const auto kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce})
    expect_flow_equals_analytical(two, Algorithm::Ring, kind, 1 << 28, 8);
  expect_flow_equals_analytical(two, Algorithm::Direct, CollectiveKind::SendRecv, 1 << 28, 8);
  expect_flow_equals_analytical(two, Algorithm::Direct, CollectiveKind::SendRecv, 1 << 28, 16);
  expect_flow_equals_analytical(two, Algorithm::Nvls, CollectiveKind::AllReduce, 1 << 30, 8);
}

TEST(CollectiveFlows, ChainsAcrossServersAreNoSlowerThanTheClosedForm) {
  // The closed form charges every one of the C + n - 2 steps a full chunk on every GPU's port;
  // as flows, the ramp-up and drain steps have fewer busy ports and each channel's exit GPU
  // sends over its NIC, so 32 ranks on 4 servers finish 5-6 % sooner.
  const Topology t = testing::two_tier(true);
  const RankPlacement placement({{"all", 32}}, t);
  const std::vector<size_t> axis = {0};
  const GroupShape shape = placement.group_shape(axis);
  const auto members = first(32);
  for (const auto kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce}) {
    const Time flow = run_collective_flows(t, kind, 1 << 28, members, shape, Algorithm::Ring).time;
    const Time closed = *algorithm_time(t, Algorithm::Ring, kind, 1 << 28, shape);
    EXPECT_LE(flow, closed);
    EXPECT_GT(flow / closed, 0.9);
  }
}

TEST(CollectiveFlows, RingChannelsCrossServersOnDistinctRails) {
  // 16 ranks on 2 servers: 8 channels; in each direction the 8 crossings land on 8 different
  // rails (routing reaches the destination's rail first), so all NICs share the load.
  const Topology t = testing::two_tier();
  const auto steps =
      collective_steps(t, Algorithm::Ring, CollectiveKind::AllGather, 1 << 20, first(16));
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].repeat, 15);
  std::set<int64_t> forward, back;
  for (const Transfer& x : steps[0].transfers) {
    if (x.src / 8 < x.dst / 8) forward.insert(x.dst % 8);
    if (x.src / 8 > x.dst / 8) back.insert(x.dst % 8);
  }
  EXPECT_EQ(forward.size(), 8u);
  EXPECT_EQ(back.size(), 8u);
}

TEST(CollectiveFlows, TreeHasNoDecompositionAndFallsBack) {
  const Topology t = testing::two_tier();
  const RankPlacement placement({{"all", 64}}, t);
  const std::vector<size_t> axis = {0};
  const GroupShape shape = placement.group_shape(axis);
  EXPECT_FALSE(decomposes(Algorithm::Tree));
  EXPECT_NE(flow_algorithm(t, CollectiveKind::AllReduce, 4096, shape, Algorithm::Tree),
            Algorithm::Tree);
}

}  // namespace
}  // namespace orrery
