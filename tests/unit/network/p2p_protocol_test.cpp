// NCCL's point-to-point path (network/p2p_protocol.h): its channel and protocol rules worked by
// hand from NCCL 2.27's (24 ring channels: a pool of 32), an all-to-all priced on it, and one on
// a mesh, which stays on the collective protocols.
#include "network/p2p_protocol.h"

#include <gtest/gtest.h>

#include <cmath>

#include "test_topologies.h"

namespace orrery {
namespace {

constexpr double kKiB = 1024, kMiB = 1024 * kKiB;

// A communicator of `ranks` with `channels` ring channels inside one NVSwitch domain.
P2pPath in_server(int64_t ranks, int64_t channels) {
  return p2p_path(channels, ranks, false);
}

TEST(P2pProtocol, SimpleTakesOneChannelPer64KiBUpToEachPeersShareOfThePool) {
  // 8 ranks share 32 channels: 4 each. 8 KiB: 1; 128 KiB: 2; 64 MiB: 4 (16 MiB each, not more).
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 8 * kKiB, in_server(8, 24)), 1);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 128 * kKiB, in_server(8, 24)), 2);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 64 * kMiB, in_server(8, 24)), 4);
  // Past 16 MiB (32 steps of 512 KiB) a channel, twice as many: 128 MiB on 4 -> 8.
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 128 * kMiB, in_server(8, 24)), 8);
  // 2 ranks: 16 each; 1 GiB -> 32 MiB on 16 -> 32 channels, the whole pool.
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 256 * kMiB, in_server(2, 24)), 16);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 1024 * kMiB, in_server(2, 24)), 32);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 0, in_server(8, 24)), 1);
}

TEST(P2pProtocol, LLTakesOneChannelPer8KiB) {
  // LL's step is 64 KiB, its smallest part an eighth: 8 KiB. 8 ranks: 8 KiB -> 1, 16 KiB -> 2,
  // 512 KiB -> 4 (the share; 128 KiB each, under 32 steps, so never doubled). 2 ranks: 16.
  EXPECT_EQ(p2p_channels_per_peer(Protocol::LL, 8 * kKiB, in_server(8, 24)), 1);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::LL, 16 * kKiB, in_server(8, 24)), 2);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::LL, 512 * kKiB, in_server(8, 24)), 4);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::LL, 512 * kKiB, in_server(2, 24)), 16);
}

TEST(P2pProtocol, AnAllToAllOccupiesEveryPeersChannelsUpToThePool) {
  EXPECT_EQ(p2p_channels_used(Protocol::LL, 64 * kKiB, in_server(8, 24)),
            8);  // LL, 8 KiB a peer: 8 peers x 1
  EXPECT_EQ(p2p_channels_used(Protocol::Simple, 512 * kMiB, in_server(8, 24)),
            32);  // Simple: 8 x 4
  EXPECT_EQ(p2p_channels_used(Protocol::Simple, 2 * 1024 * kMiB, in_server(2, 24)),
            32);  // Simple: 2 x 32, capped
}

TEST(P2pProtocol, LLUpTo16KiBTimesThePerPeerMostSimpleAboveNeverLL128) {
  // A pool of 32: LL up to 512 KiB a peer. 8 ranks: 4 MiB is LL, 8 MiB Simple; 2 ranks: 1 MiB
  // is LL, 2 MiB Simple.
  EXPECT_EQ(p2p_protocol((4 * kMiB) / 8, in_server(8, 24)), Protocol::LL);
  EXPECT_EQ(p2p_protocol((8 * kMiB) / 8, in_server(8, 24)), Protocol::Simple);
  EXPECT_EQ(p2p_protocol((1 * kMiB) / 2, in_server(2, 24)), Protocol::LL);
  EXPECT_EQ(p2p_protocol((2 * kMiB) / 2, in_server(2, 24)), Protocol::Simple);
  // 8 channels (a pool of 8): 128 KiB a peer. 8 ranks: 1 MiB is LL, 2 MiB Simple.
  EXPECT_EQ(p2p_protocol((1 * kMiB) / 8, in_server(8, 8)), Protocol::LL);
  EXPECT_EQ(p2p_protocol((2 * kMiB) / 8, in_server(8, 8)), Protocol::Simple);
}

TEST(P2pProtocol, AcrossServersAPeerGetsTwoChannelsAndHalfAChunkToOneChunkEach) {
  // 16 ranks on 2 servers, a pool of 32: a network peer's 2 channels are every peer's most, so
  // the fair share is 2 too. Simple's 128 KiB network chunk: parts of 64 KiB to 128 KiB.
  const P2pPath path = p2p_path(24, 16, true);
  EXPECT_EQ(path.peer_most, 2);
  EXPECT_EQ(path.fair, 2);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 64 * kKiB, path), 1);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::Simple, 1 * kMiB, path), 2);
  EXPECT_EQ(p2p_channels_per_peer(Protocol::LL, 32 * kKiB, path), 1);  // LL: parts from 32 KiB
  // LL up to 16 KiB x 2 = 32 KiB a peer.
  EXPECT_EQ(p2p_protocol(32 * kKiB, path), Protocol::LL);
  EXPECT_EQ(p2p_protocol(32 * kKiB + 1, path), Protocol::Simple);
  // 128 ranks: 2 x 128 exceeds 4 x 32, so a network peer gets 1 channel.
  EXPECT_EQ(p2p_path(24, 128, true).peer_most, 1);
}

TEST(P2pProtocol, SimpleRampsToItsOwnSize) {
  EXPECT_DOUBLE_EQ(p2p_transfer_scale(Protocol::Simple, kP2pSimpleRampBytes), 2.0);
  EXPECT_DOUBLE_EQ(p2p_transfer_scale(Protocol::LL, 4096), transfer_scale(Protocol::LL, 4096));
}

// 8 GPUs joined by one dimension of `kind` at 100 GB/s, 1 us per step and 10 us base latency.
Topology eight_gpus(const char* name, DimensionKind kind) {
  Dimension d = testing::dimension(name, kind, 8, 100);
  d.latency = Time::from_us(1);
  d.base_latency = Time::from_us(10);
  return Topology({d});
}

TEST(P2pProtocol, AllToAllIsPricedOnThePointToPointPath) {
  // 8 GPUs on a 100 GB/s switch, 1 us per Simple step, 10 us base, no GPU memory (no own-shard
  // copy). 64 MiB: Simple, kP2pSimpleLatency x (10 + 1) us + 7/8 x S / 100 GB/s x the p2p ramp.
  const Topology t = eight_gpus("nvlink", DimensionKind::Switch);
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

TEST(P2pProtocol, SendRecvInsideAServerIsPricedOnThePointToPointPath) {
  // Every rank sends S to the next through the 100 GB/s switch: S / 100 GB/s on its port.
  // 64 MiB: Simple, kP2pSimpleLatency x (10 + 1) us + S / 100 GB/s x the p2p ramp, on the fair
  // share of 4 channels (16 MiB a channel, not past 32 steps of 512 KiB).
  const Topology t = eight_gpus("nvlink", DimensionKind::Switch);
  const testing::Model m(t, {{0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  const double s = 64 * kMiB;
  const CollectiveCost large = m.model.cost(CollectiveKind::SendRecv, static_cast<Bytes>(s));
  EXPECT_EQ(large.protocol, Protocol::Simple);
  EXPECT_EQ(large.channels, 4);
  EXPECT_NEAR(large.time.seconds(),
              kP2pSimpleLatency * 11e-6 +
                  s / 100e9 * (1 + std::pow(kP2pSimpleRampBytes / s, kRampExponent)),
              1e-11);
  // 512 KiB (16 KiB x 32): LL with LL's latencies, at 0.38 of the link; 512 KiB + 1: Simple.
  const CollectiveCost ll = m.model.cost(CollectiveKind::SendRecv, 512 * 1024);
  EXPECT_EQ(ll.protocol, Protocol::LL);
  EXPECT_NEAR(ll.time.seconds(), (10 * 6.6 / 8.4 + 0.6 / 3.4) * 1e-6 + 512 * kKiB / 38e9, 1e-11);
  EXPECT_EQ(m.model.cost(CollectiveKind::SendRecv, 512 * 1024 + 1).protocol, Protocol::Simple);
}

TEST(P2pProtocol, SendRecvAcrossServersTakesTheNetworkRules) {
  // GPU 0 of server 0 and GPU 0 of server 1 exchange S over their 25 GB/s NICs (5 us a step, no
  // base latency). 1 MiB: Simple on 2 channels, kP2pSimpleLatency x 5 us + S / 25 GB/s with no
  // ramp: the proxy's 4 chunks of 128 KiB a channel (12 us) hide under the 42 us transfer.
  Topology t = testing::two_tier();
  t.set_ideal_links(false);
  const testing::Model m(t, {{0, 8}}, 16);
  const double s = 1 * kMiB;
  const CollectiveCost c = m.model.cost(CollectiveKind::SendRecv, static_cast<Bytes>(s));
  EXPECT_EQ(c.protocol, Protocol::Simple);
  EXPECT_EQ(c.channels, 2);
  EXPECT_NEAR(c.time.seconds(), kP2pSimpleLatency * 5e-6 + s / 25e9, 1e-11);
  // 64 KiB: Simple on one channel in 2 chunks of 32 KiB: the proxy's 2 x 3 us exceed the 2.6 us
  // on the link.
  const CollectiveCost proxied = m.model.cost(CollectiveKind::SendRecv, 64 * 1024);
  EXPECT_EQ(proxied.protocol, Protocol::Simple);
  EXPECT_EQ(proxied.channels, 1);
  EXPECT_NEAR(proxied.time.seconds(), kP2pSimpleLatency * 5e-6 + 2 * kProxyChunkSeconds, 1e-11);
  // 32 KiB: LL at NCCL's LL network hop (2.7 / 14 of Simple's), 0.38 of the link, one channel.
  const CollectiveCost ll = m.model.cost(CollectiveKind::SendRecv, 32 * 1024);
  EXPECT_EQ(ll.protocol, Protocol::LL);
  EXPECT_EQ(ll.channels, 1);
  EXPECT_NEAR(ll.time.seconds(), 5e-6 * 2.7 / 14 + 32 * kKiB / 25e9 / 0.38, 1e-11);
}

TEST(P2pProtocol, APairsTransferSplitsIntoTheFlowModesRateAndLatency) {
  // GPUs 0 and 1 on the 100 GB/s switch, 64 MiB: the sendrecv's time, the p2p ramp as the factor
  // on the bytes, kP2pSimpleLatency x (10 + 1) us as the latency.
  const Topology t = eight_gpus("nvlink", DimensionKind::Switch);
  const testing::Model m(t, {{0, 1}}, 8);
  const double s = 64 * kMiB;
  const TransferCost c = point_to_point_cost(m.model, static_cast<Bytes>(s));
  const double ramp = 1 + std::pow(kP2pSimpleRampBytes / s, kRampExponent);
  EXPECT_NEAR(c.rate, ramp, 1e-12);
  ASSERT_TRUE(c.latency.has_value());
  EXPECT_NEAR(c.latency->seconds(), kP2pSimpleLatency * 11e-6, 1e-12);
  EXPECT_NEAR(c.time.seconds(), kP2pSimpleLatency * 11e-6 + s / 100e9 * ramp, 1e-11);
  // Ideal links: the link at its rate plus one step's latency, the route's latency in flow mode.
  const testing::Model ideal(testing::ideal(t), {{0, 1}}, 8);
  const TransferCost plain = point_to_point_cost(ideal.model, static_cast<Bytes>(s));
  EXPECT_NEAR(plain.time.seconds(), 1e-6 + s / 100e9, 1e-11);
  EXPECT_EQ(plain.rate, 1);
  EXPECT_FALSE(plain.latency.has_value());
}

TEST(P2pProtocol, AMeshAllToAllKeepsTheCollectiveProtocols) {
  // The same 8 GPUs on a mesh (a 100 GB/s link per pair, as on an xGMI mesh): each pair's own
  // link carries S / 8. 1 GiB: Simple at the collective latency (x1, not kP2pSimpleLatency) and its
  // ramp R_Simple, 10 + 1 us + S / 8 / 100 GB/s x (1 + (R_Simple / S)^kRampExponent).
  const Topology t = eight_gpus("xgmi", DimensionKind::Mesh);
  const testing::Model m(t, {{0, 1, 2, 3, 4, 5, 6, 7}}, 8);
  const double s = 1024 * kMiB;
  const CollectiveCost c = m.model.cost(CollectiveKind::AllToAll, static_cast<Bytes>(s));
  EXPECT_EQ(c.protocol, Protocol::Simple);
  EXPECT_NEAR(c.time.seconds(), 11e-6 + s / 8 / 100e9 * transfer_scale(Protocol::Simple, s), 1e-11);
}

}  // namespace
}  // namespace orrery
