// NCCL's protocols: each term of network/protocol.h against its formula, and a collective priced
// with the fastest protocol.
#include "network/protocol.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_topologies.h"

namespace orrery {
namespace {

TEST(Protocol, RateFactorIsTheRampOverThePayloadShare) {
  // At S = R_p the ramp adds as much again: (1 + 1) / fraction.
  EXPECT_DOUBLE_EQ(transfer_scale(Protocol::Simple, 4.48e6), 2.0);
  EXPECT_DOUBLE_EQ(transfer_scale(Protocol::LL128, 4.16e5), 2.0 / 0.92);
  // LL has no ramp: half a line of payload, capped further, at every size.
  EXPECT_DOUBLE_EQ(transfer_scale(Protocol::LL, 1e3), 1 / 0.38);
  EXPECT_DOUBLE_EQ(transfer_scale(Protocol::Simple, 4.48e8), 1 + std::pow(0.01, kRampExponent));
}

TEST(Protocol, ChannelsGrowWithTheMessageUpToTheMaximum) {
  EXPECT_EQ(channels_used(Protocol::Simple, 1, 24), 1);
  EXPECT_EQ(channels_used(Protocol::Simple, 5 * 32768.0, 24), 5);  // 32 KiB per Simple channel
  EXPECT_EQ(channels_used(Protocol::LL, 8 * 4096.0, 24), 8);       // 4 KiB per LL channel
  EXPECT_EQ(channels_used(Protocol::Simple, 1e12, 24), 24);
}

TEST(Protocol, OwnShardCopiesOnlyShardedCollectivesWithAKnownMemory) {
  const Bandwidth m = Bandwidth::gb_per_second(2000);
  // 3.49 x (8 MB / 8) / 2 TB/s = 1.745 us.
  EXPECT_EQ(own_shard_time(CollectiveKind::AllGather, 8e6, 8, m), Time::from_ps(1'745'000));
  EXPECT_EQ(own_shard_time(CollectiveKind::Broadcast, 8e6, 8, m), Time::zero());
  EXPECT_EQ(own_shard_time(CollectiveKind::AllGather, 8e6, 8, std::nullopt), Time::zero());
}

// 8 GPUs on a 100 GB/s switch, 1 us per Simple step, 10 us base: an all-gather of S is 7 steps of
// S / 8 at the port.
Topology switch_of_8() {
  Dimension d = testing::dimension("nvlink", DimensionKind::Switch, 8, 100);
  d.latency = Time::from_us(1);
  d.base_latency = Time::from_us(10);
  return Topology({d});
}

TEST(Protocol, CollectivesRunTheFastestProtocol) {
  const Topology t = switch_of_8();
  const testing::Model m(t, {{0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  // Large: Simple, 10 + 7 x 1 us + 7/8 x 8 GB / 100 GB/s x (1 + (4.48 MB / 8 GB)^0.613).
  const double s = 8e9;
  const CollectiveCost large = m.model.cost(CollectiveKind::AllGather, 8'000'000'000);
  EXPECT_EQ(large.protocol, Protocol::Simple);
  EXPECT_NEAR(large.time.seconds(), 17e-6 + 0.875 * s / 100e9 * transfer_scale(Protocol::Simple, s),
              1e-11);
  EXPECT_EQ(large.channels, 24);
  // Small: LL, 10 x 6.6/8.4 + 7 x 0.6/3.4 us + 7/8 x 4 KiB / (0.38 x 100 GB/s).
  const CollectiveCost small = m.model.cost(CollectiveKind::AllGather, 4096);
  EXPECT_EQ(small.protocol, Protocol::LL);
  EXPECT_NEAR(small.time.seconds(), (10 * 6.6 / 8.4 + 7 * 0.6 / 3.4) * 1e-6 + 0.875 * 4096 / 38e9,
              1e-11);
  EXPECT_EQ(small.channels, 1);
  // Ideal links: one protocol, no ramp.
  const Topology ideal = testing::ideal(switch_of_8());
  const testing::Model mi(ideal, {{0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  EXPECT_NEAR(mi.model.cost(CollectiveKind::AllGather, 8'000'000'000).time.seconds(),
              17e-6 + 0.875 * s / 100e9, 1e-11);
}

TEST(Protocol, NetworkHopsTakeTheProtocolsNetworkLatency) {
  // Two servers (8-GPU switches) on a fat-tree of 25 GB/s NICs with 14 us per step and 10 us of
  // base latency; one GPU on each. A 4 KiB all-gather is one ring step across the network: LL pays
  // 10 x 6.6/8.4 us of base and 14 x 2.7/14 us for the hop (NCCL's network LL latency, not the
  // NVLink ratio), and moves 2 KiB at 0.38 x 25 GB/s.
  Dimension nvlink = testing::dimension("nvlink", DimensionKind::Switch, 8, 100);
  nvlink.latency = Time::from_us(1);
  nvlink.base_latency = Time::from_us(10);
  Dimension fabric = testing::dimension("fabric", DimensionKind::FatTree, 0, 25);
  fabric.rails = 8;
  fabric.latency = Time::from_us(14);
  fabric.base_latency = Time::from_us(10);
  const Topology t({nvlink, fabric});
  const testing::Model m(t, {{0, 8}}, 16);
  const CollectiveCost c = m.model.cost(CollectiveKind::AllGather, 4096);
  EXPECT_EQ(c.protocol, Protocol::LL);
  EXPECT_NEAR(c.time.seconds(), (10 * 6.6 / 8.4 + 2.7) * 1e-6 + 2048 / (0.38 * 25e9), 1e-11);
}

}  // namespace
}  // namespace orrery
