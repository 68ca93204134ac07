// NCCL's point-to-point path (network/p2p_protocol.h): its channel and protocol rules worked by
// hand from NCCL's (24 ring channels: a pool of 32), and an all-to-all priced on it.
#include "network/p2p_protocol.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_topologies.h"

namespace orrery {
namespace {

constexpr double kKiB = 1024, kMiB = 1024 * kKiB;

TEST(P2pProtocol, EachPeerTakesOneChannelPer64KiBUpToItsShareOfThePool) {
  // 8 ranks share 32 channels: 4 each. 8 KiB: 1; 128 KiB: 2; 64 MiB: 4 (16 MiB each, not more).
  EXPECT_EQ(p2p_channels_per_peer(8 * kKiB, 8, 24), 1);
  EXPECT_EQ(p2p_channels_per_peer(128 * kKiB, 8, 24), 2);
  EXPECT_EQ(p2p_channels_per_peer(64 * kMiB, 8, 24), 4);
  // Past 16 MiB a channel, twice as many: 128 MiB on 4 -> 8 (16 MiB each).
  EXPECT_EQ(p2p_channels_per_peer(128 * kMiB, 8, 24), 8);
  // 2 ranks: 16 each; 1 GiB -> 32 MiB on 16 -> 32 channels, the whole pool.
  EXPECT_EQ(p2p_channels_per_peer(256 * kMiB, 2, 24), 16);
  EXPECT_EQ(p2p_channels_per_peer(1024 * kMiB, 2, 24), 32);
  EXPECT_EQ(p2p_channels_per_peer(0, 8, 24), 1);
}

TEST(P2pProtocol, AnAllToAllOccupiesEveryPeersChannelsUpToThePool) {
  EXPECT_EQ(p2p_channels_used(64 * kKiB, 8, 24), 8);         // 8 peers x 1
  EXPECT_EQ(p2p_channels_used(512 * kMiB, 8, 24), 32);       // 8 x 4
  EXPECT_EQ(p2p_channels_used(2 * 1024 * kMiB, 2, 24), 32);  // 2 x 32, capped
}

TEST(P2pProtocol, LLUpTo16KiBAChannelSimpleAboveNeverLL128) {
  // 64 KiB on 8 ranks: 8 KiB a peer on 1 channel: LL. On 4: 16 KiB: LL. On 2: 32 KiB: Simple.
  EXPECT_EQ(p2p_protocol(64 * kKiB, 8, 24), Protocol::LL);
  EXPECT_EQ(p2p_protocol(64 * kKiB, 4, 24), Protocol::LL);
  EXPECT_EQ(p2p_protocol(64 * kKiB, 2, 24), Protocol::Simple);
  // 1 MiB on 8: 128 KiB a peer on 2 channels, more than 2 x 16 KiB: Simple.
  EXPECT_EQ(p2p_protocol(1 * kMiB, 8, 24), Protocol::Simple);
}

TEST(P2pProtocol, SimpleRampsToItsOwnSize) {
  EXPECT_DOUBLE_EQ(p2p_transfer_scale(Protocol::Simple, kP2pSimpleRampBytes), 2.0);
  EXPECT_DOUBLE_EQ(p2p_transfer_scale(Protocol::LL, 4096), transfer_scale(Protocol::LL, 4096));
}

TEST(P2pProtocol, AllToAllIsPricedOnThePointToPointPath) {
  // 8 GPUs on a 100 GB/s switch, 1 us per Simple step, 10 us base, no GPU memory (no own-shard
  // copy). 64 MiB: Simple, kP2pSimpleLatency x (10 + 1) us + 7/8 x S / 100 GB/s x the p2p ramp.
  Dimension d = testing::dimension("nvlink", DimensionKind::Switch, 8, 100);
  d.latency = Time::from_us(1);
  d.base_latency = Time::from_us(10);
  const Topology t({d});
  const testing::Model m(t, {{0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  const double s = 64 * kMiB;
  const CollectiveCost large = m.model.cost(CollectiveKind::AllToAll, static_cast<Bytes>(s));
  EXPECT_EQ(large.protocol, Protocol::Simple);
  EXPECT_EQ(large.channels, 32);
  EXPECT_NEAR(large.time.seconds(),
              kP2pSimpleLatency * 11e-6 +
                  0.875 * s / 100e9 * (1 + std::pow(kP2pSimpleRampBytes / s, kRampExponent)),
              1e-11);
  // 4 KiB: LL with LL's latencies, 10 x 6.6/8.4 + 0.6/3.4 us, at 0.38 of the link.
  const CollectiveCost small = m.model.cost(CollectiveKind::AllToAll, 4096);
  EXPECT_EQ(small.protocol, Protocol::LL);
  EXPECT_EQ(small.channels, 8);
  EXPECT_NEAR(small.time.seconds(), (10 * 6.6 / 8.4 + 0.6 / 3.4) * 1e-6 + 0.875 * 4096 / 38e9,
              1e-11);
}

}  // namespace
}  // namespace orrery
