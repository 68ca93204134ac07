#include "network/collective_cost.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

// Servers of 8 GPUs: 100 GB/s and 1 us per step inside, 25 GB/s per GPU and 5 us between servers.
ServerNetwork test_network() {
  ServerNetwork n;
  n.gpus_per_server = 8;
  n.scale_up = {Bandwidth::gb_per_second(100), Time::from_us(1), 1.0};
  n.scale_out = {Bandwidth::gb_per_second(25), Time::from_us(5), 1.0};
  return n;
}

TEST(CollectiveCost, RingAllReduceInsideAServer) {
  // 2(n-1)/n * S / B + 2(n-1) * alpha = 1.75 * 800 MB / 100 GB/s + 14 us = 14 ms + 14 us.
  const Time t = collective_time(test_network(), CollectiveKind::AllReduce, 800'000'000, {8, 1, 8});
  EXPECT_EQ(t, Time::from_us(14'014));
}

TEST(CollectiveCost, AllGatherAndReduceScatterMoveHalfAsMuch) {
  // (n-1)/n * S / B + (n-1) * alpha = 0.875 * 800 MB / 100 GB/s + 7 us.
  const ServerNetwork n = test_network();
  EXPECT_EQ(collective_time(n, CollectiveKind::AllGather, 800'000'000, {8, 1, 8}),
            Time::from_us(7'007));
  EXPECT_EQ(collective_time(n, CollectiveKind::ReduceScatter, 800'000'000, {8, 1, 8}),
            Time::from_us(7'007));
}

TEST(CollectiveCost, AcrossServersTheNicsOfAllLocalRanksCarryTheRing) {
  const ServerNetwork n = test_network();
  // 16 ranks, 8 per server: min(100, 8 * 25) = 100 GB/s; alpha = 5 us over 30 steps.
  EXPECT_EQ(collective_time(n, CollectiveKind::AllReduce, 1'600'000'000, {16, 2, 8}),
            Time::from_us(30'000 + 150));
  // One rank per server (a data-parallel group beside TP = 8): its own 25 GB/s NIC share.
  EXPECT_EQ(collective_time(n, CollectiveKind::AllReduce, 1'600'000'000, {16, 16, 1}),
            Time::from_us(120'000 + 150));
  EXPECT_DOUBLE_EQ(ring_bus_bandwidth(n, {16, 16, 1}).in_gb_per_second(), 25);
  EXPECT_DOUBLE_EQ(ring_bus_bandwidth(n, {16, 4, 4}).in_gb_per_second(), 100);
}

TEST(CollectiveCost, AllToAllIsBoundByTheSlowerTier) {
  // 16 ranks over 2 servers, 16 MB per rank: 7 MB inside at 100 GB/s = 70 us, 8 MB out at
  // 25 GB/s = 320 us; plus one 5 us step.
  EXPECT_EQ(collective_time(test_network(), CollectiveKind::AllToAll, 16'000'000, {16, 2, 8}),
            Time::from_us(325));
  // Inside one server only the scale-up tier counts: 7/8 * 16 MB / 100 GB/s + 1 us.
  EXPECT_EQ(collective_time(test_network(), CollectiveKind::AllToAll, 16'000'000, {8, 1, 8}),
            Time::from_us(141));
}

TEST(CollectiveCost, SingleRankGroupsAreFree) {
  EXPECT_EQ(collective_time(test_network(), CollectiveKind::AllReduce, 1 << 30, {1, 1, 1}),
            Time::zero());
}

TEST(CollectiveCost, PointToPointUsesTheLinkBetweenTheRanks) {
  const ServerNetwork n = test_network();
  EXPECT_EQ(point_to_point_time(n, 100'000'000, true), Time::from_us(4'005));
  EXPECT_EQ(point_to_point_time(n, 100'000'000, false), Time::from_us(1'001));
}

TEST(CollectiveCost, EfficiencyScalesTheBandwidth) {
  ServerNetwork n = test_network();
  n.scale_up.efficiency = 0.5;
  EXPECT_EQ(collective_time(n, CollectiveKind::AllGather, 800'000'000, {8, 1, 8}),
            Time::from_us(14'007));
}

TEST(CollectiveCost, MoreBandwidthIsNeverSlower) {
  for (const auto kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::AllToAll}) {
    for (const GroupShape shape :
         {GroupShape{8, 1, 8}, GroupShape{16, 2, 8}, GroupShape{32, 32, 1}}) {
      ServerNetwork slow = test_network(), fast = test_network();
      fast.scale_up.bandwidth = fast.scale_up.bandwidth * 2;
      fast.scale_out.bandwidth = fast.scale_out.bandwidth * 1.5;
      EXPECT_LE(collective_time(fast, kind, 123'456'789, shape),
                collective_time(slow, kind, 123'456'789, shape));
    }
  }
}

}  // namespace
}  // namespace orrery
