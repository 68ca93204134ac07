#include "network/collective_algorithms.h"

#include <gtest/gtest.h>

#include "network/collective_flows.h"

#include "test_topologies.h"

namespace orrery {
namespace {

using testing::Model;
using testing::ranks;
using testing::shape;
using testing::torus;
using testing::two_tier;

Time us(double v) {
  return Time::from_seconds(v * 1e-6);
}

Time run(Algorithm a, CollectiveKind kind, Bytes bytes, const std::vector<int64_t>& members,
         const Topology& t = two_tier()) {
  const Model m(t, {members});
  const auto time = m.model.time(a, kind, bytes);
  EXPECT_TRUE(time.has_value()) << to_string(a);
  return time.value_or(Time::zero());
}

CollectiveCost cost(const Topology& t, CollectiveKind kind, Bytes bytes,
                    const std::vector<int64_t>& members, Algorithm a = Algorithm::Auto) {
  return Model(t, {members}).model.cost(kind, bytes, a);
}

bool runs(const Topology& t, Algorithm a, CollectiveKind kind,
          const std::vector<int64_t>& members) {
  return Model(t, {members}).model.time(a, kind, 1 << 20).has_value();
}

TEST(Ring, AllReduceInsideAServer) {
  // 2(n-1)/n * S / B + 2(n-1) * alpha = 1.75 * 800 MB / 100 GB/s + 14 * 1 us.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, 800'000'000, ranks(8)), us(14'014));
  // All-gather and reduce-scatter move half: 0.875 * 800 MB / 100 GB/s + 7 us.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllGather, 800'000'000, ranks(8)), us(7'007));
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::ReduceScatter, 800'000'000, ranks(8)), us(7'007));
}

TEST(Ring, AcrossServersEveryLocalRankBringsItsNicShare) {
  // 16 ranks, 8 per server: min(100, 8 x 25) = 100 GB/s: 1.875 x 1.6 GB / 100 GB/s = 30 ms.
  // Latency per step of the dimension its hop crosses: a pass of 15 hops from rank 0 crosses
  // servers once (7 -> 8) and stays inside 14 times: 2 x (14 x 1 + 1 x 5) us = 38 us.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, 1'600'000'000, ranks(16)), us(30'038));
  // One rank per server (beside TP 8): its own 25 GB/s.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, 1'600'000'000, ranks(16, 8)),
            us(120'150));
  // 16 servers span 4 leaves; rail 0's leaf has 4 x 25 / 2 = 50 GB/s to the spines (2:1). A ring
  // leaves a leaf once each way, one 25 GB/s flow: the oversubscription does not bind...
  EXPECT_EQ(Model(two_tier(), {ranks(16, 8)}, 128)
                .model.time(Algorithm::Ring, CollectiveKind::AllReduce, 1'600'000'000),
            us(120'150));
  // ...but an all-to-all does: 1 MB to each of 15 peers; a leaf's 4 members send 12 MB each out
  // of it, 48 MB / 50 GB/s = 960 us (their NICs alone: 15 MB / 25 GB/s = 600 us); + 5 us (all
  // peers at once: one exchange across the fabric).
  // The job's 8 groups, one per rail, do not meet: each rail has its own leaves.
  std::vector<std::vector<int64_t>> job;
  for (int64_t r = 0; r < 8; ++r)
    job.push_back(ranks(16, 8, r));
  for (const auto& groups : {std::vector<std::vector<int64_t>>{job.front()}, job})
    EXPECT_EQ(Model(two_tier(), groups, 128)
                  .model.time(Algorithm::Direct, CollectiveKind::AllToAll, 16'000'000),
              us(965));
}

// A ring's reduce-scatter, all-gather and all-reduce share one routing in the analytical model
// (the all-reduce counting each step twice). Ring decompositions on a server, across servers on
// rails, on a torus (rings both ways) and on a group in parts of two servers / the all-gather's
// transfers are the others' and its step counts half the all-reduce's, because that is what the
// sharing assumes; and a model pricing all three routes what the all-gather alone does.
TEST(Ring, ReduceScatterAllGatherAndAllReduceShareOneRouting) {
  const std::vector<std::pair<Topology, std::vector<int64_t>>> cases = {
      {two_tier(), ranks(8)},
      {two_tier(), ranks(32)},
      {two_tier(), ranks(16, 8, 3)},
      {two_tier(), {2, 3, 4, 10, 11, 12}},
      {torus(), ranks(16)}};
  for (const auto& [t, members] : cases) {
    const auto steps = [&](CollectiveKind kind) {
      return collective_pattern(t, Algorithm::Ring, kind, members);
    };
    const std::vector<FlowStep> gather = steps(CollectiveKind::AllGather);
    for (const CollectiveKind kind : {CollectiveKind::ReduceScatter, CollectiveKind::AllReduce}) {
      const std::vector<FlowStep> other = steps(kind);
      ASSERT_EQ(other.size(), gather.size());
      for (size_t i = 0; i < gather.size(); ++i) {
        ASSERT_EQ(other[i].transfers.size(), gather[i].transfers.size());
        for (size_t x = 0; x < gather[i].transfers.size(); ++x) {
          EXPECT_EQ(other[i].transfers[x].src, gather[i].transfers[x].src);
          EXPECT_EQ(other[i].transfers[x].dst, gather[i].transfers[x].dst);
          EXPECT_EQ(other[i].transfers[x].bytes, gather[i].transfers[x].bytes);
        }
        EXPECT_EQ(other[i].scale.share, gather[i].scale.share);
        EXPECT_EQ(other[i].base, gather[i].base);
        ASSERT_EQ(other[i].runs.size(), gather[i].runs.size());
        const int64_t times = kind == CollectiveKind::AllReduce && !gather[i].base ? 2 : 1;
        for (size_t r = 0; r < gather[i].runs.size(); ++r) {
          EXPECT_EQ(other[i].runs[r].count, times * gather[i].runs[r].count);
          EXPECT_EQ(other[i].runs[r].latency, gather[i].runs[r].latency);
        }
      }
    }
    const Model all(t, {members}), one(t, {members});
    for (const CollectiveKind kind :
         {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather})
      all.model.time(Algorithm::Ring, kind, 1 << 20);
    one.model.time(Algorithm::Ring, CollectiveKind::AllGather, 1 << 20);
    EXPECT_EQ(all.model.routed(), one.model.routed());
    EXPECT_EQ(all.model.transfer_seconds(Algorithm::Ring, CollectiveKind::AllReduce, 1e6),
              2 * one.model.transfer_seconds(Algorithm::Ring, CollectiveKind::AllGather, 1e6));
  }
}

TEST(Hierarchical, ReduceScatterUpThenAllGatherDown) {
  // 16 ranks, 8 x 2, S = 1.6 GB: inside 7/8 * 1.6 GB / 100 GB/s + 7 us = 14.007 ms; across, each
  // rank's 200 MB share: 1/2 * 200 MB / 25 GB/s + 5 us = 4.005 ms; all-reduce = 2 x 18.012 ms.
  EXPECT_EQ(run(Algorithm::Hierarchical, CollectiveKind::AllReduce, 1'600'000'000, ranks(16)),
            us(36'024));
  EXPECT_EQ(run(Algorithm::Hierarchical, CollectiveKind::ReduceScatter, 1'600'000'000, ranks(16)),
            us(18'012));
  EXPECT_FALSE(runs(two_tier(), Algorithm::Hierarchical, CollectiveKind::AllReduce, ranks(8)));
}

TEST(Tree, LogLatencyAndHalfTheNetworkTrafficOnTwoServers) {
  // 16 ranks, 8 x 2: ring bandwidth min(100, 2 x 8 x 25) = 100 GB/s at 80 %: 80 GB/s;
  // 2 * 15/16 * 1.6 GB / 80 GB/s = 37.5 ms; latency 2 (1 x 5 us + 7 x 1 us) = 24 us.
  EXPECT_EQ(run(Algorithm::Tree, CollectiveKind::AllReduce, 1'600'000'000, ranks(16)), us(37'524));
  // Only for all-reduce, only across servers.
  EXPECT_FALSE(runs(two_tier(), Algorithm::Tree, CollectiveKind::AllGather, ranks(16)));
  EXPECT_FALSE(runs(two_tier(), Algorithm::Tree, CollectiveKind::AllReduce, ranks(8)));
  // On 64 servers the latency grows with log2(64) = 6, not with 63.
  const Time small = run(Algorithm::Tree, CollectiveKind::AllReduce, 8, ranks(64, 8));
  EXPECT_LT(small, us(2 * 6 * 5 + 1));
}

TEST(Rendezvous, EveryCallAcrossServersPaysItOnceWhateverTheAlgorithm) {
  // two_tier() with a 7 us rendezvous on its fat-tree: a call spanning servers takes exactly
  // 7 us longer, however many network hops its algorithm makes (the later hops' buffers are
  // posted while the first is in flight), and one inside a server nothing more.
  Topology with = two_tier();
  {
    std::vector<Dimension> dims = with.dimensions();
    dims[1].rendezvous_latency = us(7);
    with = Topology(dims);
    with.set_ideal_links(true);
  }
  for (const Algorithm a :
       {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::HalvingDoubling})
    for (const int64_t n : {16, 64})
      EXPECT_EQ(run(a, CollectiveKind::AllReduce, 1 << 20, ranks(n), with),
                run(a, CollectiveKind::AllReduce, 1 << 20, ranks(n)) + us(7))
          << to_string(a) << " on " << n;
  EXPECT_EQ(run(Algorithm::Direct, CollectiveKind::AllToAll, 1 << 20, ranks(16), with),
            run(Algorithm::Direct, CollectiveKind::AllToAll, 1 << 20, ranks(16)) + us(7));
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, 1 << 20, ranks(8), with),
            run(Algorithm::Ring, CollectiveKind::AllReduce, 1 << 20, ranks(8)));
  // With NCCL's protocols, the rendezvous stays outside every protocol's scaling, the multi-server
  // ring's 1.4 plateau (Simple, 1 GiB) and the point-to-point path's factor (sendrecv, Simple).
  Topology real = two_tier(), real_with = with;
  real.set_ideal_links(false);
  real_with.set_ideal_links(false);
  for (const Bytes bytes : {Bytes{4096}, Bytes{1} << 30})
    EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, bytes, ranks(16), real_with),
              run(Algorithm::Ring, CollectiveKind::AllReduce, bytes, ranks(16), real) + us(7))
        << bytes;
  EXPECT_EQ(cost(real_with, CollectiveKind::SendRecv, 1 << 28, {0, 8}).time,
            cost(real, CollectiveKind::SendRecv, 1 << 28, {0, 8}).time + us(7));
}

TEST(Nvls, AllReduceAtTheSwitchRate) {
  // Each GPU moves S (1 + 1/n) each way at port x nvls efficiency, plus NVLS's latency of
  // kNvlsHops = (25 - 8.4) / 3.4 switch steps whatever the GPU count: 1 GB x 9/8 / 80 GB/s +
  // 4.882... x 1 us = 14,062.5 + 4.882 us.
  const Time nvls_latency = Time::from_us(1).scaled((25.0 - 8.4) / 3.4);
  EXPECT_EQ(
      run(Algorithm::Nvls, CollectiveKind::AllReduce, 1'000'000'000, ranks(8), two_tier(true)),
      us(14'062.5) + nvls_latency);
  // On 4 GPUs the switch's share of 1/n weighs more: 1 GB x 5/4 / 80 GB/s.
  EXPECT_EQ(
      run(Algorithm::Nvls, CollectiveKind::AllReduce, 1'000'000'000, ranks(4), two_tier(true)),
      us(15'625) + nvls_latency);
  EXPECT_FALSE(runs(two_tier(false), Algorithm::Nvls, CollectiveKind::AllReduce, ranks(8)));
  EXPECT_FALSE(runs(two_tier(true), Algorithm::Nvls, CollectiveKind::AllReduce, ranks(16)));
}

TEST(HalvingDoubling, LogStepsInnermostFirst) {
  // 16 ranks, 8 x 2, S = 1.6 GB: inside 0.8 + 0.4 + 0.2 GB at 100 GB/s = 14 ms + 3 us, across
  // 0.1 GB at 25 GB/s = 4 ms + 5 us; all-reduce twice that.
  EXPECT_EQ(run(Algorithm::HalvingDoubling, CollectiveKind::AllReduce, 1'600'000'000, ranks(16)),
            us(36'016));
  EXPECT_FALSE(runs(two_tier(), Algorithm::HalvingDoubling, CollectiveKind::AllReduce, ranks(6)));
}

TEST(Direct, AllToAllBoundByTheSlowerTier) {
  // 16 ranks over 2 servers, 16 MB per rank, 1 MB per peer. Routes first reach the
  // destination's local position inside the server, so a GPU's switch port carries its 14 peers
  // at other positions (7 here, 7 relayed for the other server): 14 MB / 100 GB/s = 140 us. A
  // server's 8 NICs carry its 8 ranks' 8 MB to the other server: 64 MB / 200 GB/s = 320 us.
  // Latency: every peer at once, one exchange across the outermost dimension spanned: 5 us.
  EXPECT_EQ(run(Algorithm::Direct, CollectiveKind::AllToAll, 16'000'000, ranks(16)), us(325));
  // On a 4-ring, 4 MB per rank: shortest paths load a link direction with 4^2/8 = 2 pairs' 1 MB:
  // 40 us, + 1 us.
  EXPECT_EQ(run(Algorithm::Direct, CollectiveKind::AllToAll, 4'000'000, ranks(4), torus()), us(41));
}

TEST(Direct, TorusPairsCrossEveryDimensionOnTheWay) {
  // 4 x 4 x 4 torus, 64 ranks, 64 MB per rank, 1 MB per peer. Dimension-order routing moves a
  // pair's bytes along x at the source's (y, z), then y, then z, so each dimension's ring links
  // carry n/k = 16 ranks' worth of pairs: 16 x 2 (the 4-ring load) x 1 MB = 32 MB per link
  // direction at 50 GB/s = 640 us; + 1 us.
  EXPECT_EQ(run(Algorithm::Direct, CollectiveKind::AllToAll, 64'000'000, ranks(64), torus()),
            us(641));
  // 8 ranks on 4 x 2: x carries 8/4 x 2 = 4 pairs, y (a ring of 2: one link each way, as routed)
  // 8/2 x 1 = 4 pairs of 1 MB: 4 MB / 50 GB/s = 80 us; + 1 us. A GPU sends 7 MB over its 3 links
  // in use (2 in x, 1 in y): never faster than 7/3 MB / 50 GB/s = 46.7 us.
  EXPECT_EQ(run(Algorithm::Direct, CollectiveKind::AllToAll, 8'000'000, ranks(8), torus()), us(81));
}

TEST(Torus, RingsUseBothDirectionsAndLevelsGoDimensionByDimension) {
  const Topology t = torus();
  // One axis: 2(n-1)/n * 1 GB / (2 x 50 GB/s) + 6 us.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::AllReduce, 1'000'000'000, ranks(4), t),
            us(15'006));
  // Two axes, dimension by dimension: x on 1 GB then y on 250 MB, reduce-scatter and all-gather.
  //   x: 3/4 * 1 GB / 100 GB/s + 3 us = 7.503 ms;  y: 3/4 * 250 MB / 100 GB/s + 3 us = 1.878 ms.
  EXPECT_EQ(run(Algorithm::Hierarchical, CollectiveKind::AllReduce, 1'000'000'000, ranks(16), t),
            us(2 * (7'503 + 1'878)));
}

TEST(Auto, PicksTheFastestOfTheLibrarysAlgorithms) {
  const Topology t = two_tier(true);
  // Large all-reduce in a server: NVLS (1 GB / 80 GB/s) beats ring (1.75 GB / 100 GB/s).
  EXPECT_EQ(cost(t, CollectiveKind::AllReduce, 1'000'000'000, ranks(8)).algorithm, Algorithm::Nvls);
  // Small all-reduce over 64 servers: tree's log latency beats ring's 126 steps.
  EXPECT_EQ(cost(t, CollectiveKind::AllReduce, 4096, ranks(64, 8)).algorithm, Algorithm::Tree);
  // Large all-reduce over 64 servers: ring's full bandwidth beats tree's 80 %.
  EXPECT_EQ(cost(t, CollectiveKind::AllReduce, 1ull << 32, ranks(64, 8)).algorithm,
            Algorithm::Ring);
  // Halving-doubling is never chosen on an NVSwitch/fat-tree network (NCCL does not implement
  // it)...
  for (const Algorithm a : auto_candidates(t, CollectiveKind::AllReduce))
    EXPECT_NE(a, Algorithm::HalvingDoubling);
  // ...but a forced algorithm runs, and one that cannot run falls back to the fastest that can.
  EXPECT_EQ(
      cost(t, CollectiveKind::AllReduce, 1 << 20, ranks(16), Algorithm::HalvingDoubling).algorithm,
      Algorithm::HalvingDoubling);
  EXPECT_NE(cost(t, CollectiveKind::AllGather, 1 << 20, ranks(8), Algorithm::Nvls).algorithm,
            Algorithm::Nvls);
}

TEST(Collectives, SingleRanksAreFreeAndBandwidthNeverHurts) {
  EXPECT_EQ(cost(two_tier(), CollectiveKind::AllReduce, 1 << 30, ranks(1)).time, Time::zero());
  std::vector<Dimension> faster = two_tier(true).dimensions();
  faster[0].link_bandwidth = faster[0].link_bandwidth * 2;
  faster[1].link_bandwidth = faster[1].link_bandwidth * 1.5;
  const Topology fast = testing::ideal(Topology(faster)), slow = two_tier(true);
  for (const auto kind :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::AllToAll})
    for (const std::vector<int64_t>& g : {ranks(8), ranks(16), ranks(32, 8)})
      for (const Algorithm a :
           {Algorithm::Auto, Algorithm::Ring, Algorithm::Tree, Algorithm::Direct})
        EXPECT_LE(cost(fast, kind, 123'456'789, g, a).time,
                  cost(slow, kind, 123'456'789, g, a).time);
}

TEST(PointToPoint, TheLinkBetweenThePair) {
  EXPECT_EQ(point_to_point_time(two_tier(), 100'000'000, shape(2, {1, 2})), us(4'005));
  EXPECT_EQ(point_to_point_time(two_tier(), 100'000'000, shape(2, {2, 1})), us(1'001));
  // A torus neighbour: one 50 GB/s link in one direction.
  EXPECT_EQ(point_to_point_time(torus(), 100'000'000, shape(2, {1, 2, 1})), us(2'001));
}

TEST(Collectives, BusFactors) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::AllGather, 8), 0.875);
  EXPECT_EQ(parse_algorithm("halving-doubling"), Algorithm::HalvingDoubling);
  EXPECT_FALSE(parse_algorithm("carrier-pigeon"));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

TEST(RootedAndPointToPoint, PipelinedChainsAndShifts) {
  const Topology t = testing::two_tier();
  // Broadcast of 64 MiB among 8 ranks of a switch: 64 chunks of 1 MiB stream through a chain of
  // 8; the last rank waits for the first chunk to fill 6 more links: 64 MiB (1 + 6/64) / 100 GB/s
  // = 734.0032 us, + 7 hops x 1 us.
  const Time bcast = run(Algorithm::Ring, CollectiveKind::Broadcast, 64 * kMiB, ranks(8), t);
  EXPECT_EQ(bcast, Time::from_seconds(741.0032e-6));
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::Reduce, 64 * kMiB, ranks(8), t), bcast);
  // A small message is one chunk, stored and forwarded n - 1 times.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::Broadcast, 1000, ranks(8), t),
            Time::from_seconds(7 * (1000 / 100e9 + 1e-6)));
  // The chunks grow with the message, so many ranks do not swamp a large one: 1 GiB over 1024
  // ranks of 8-GPU servers, ring bandwidth min(100, 8 x 25) = 100 GB/s, fills 1022 of 1024
  // chunks: 1 GiB x 2046/1024 / 100 GB/s = 21.453 ms; hops: 896 inside servers (1 us) and 127
  // across (5 us) = 1.531 ms.
  EXPECT_EQ(run(Algorithm::Ring, CollectiveKind::Broadcast, kGiB, ranks(1024), t),
            Time::from_seconds(1073741824.0 * 2046 / 1024 / 100e9 + 1531e-6));
  // Sendrecv over two servers: each rank sends 100 MB to the next; the crossing at 25 GB/s rules.
  EXPECT_EQ(cost(t, CollectiveKind::SendRecv, 100'000'000, ranks(16)).time, Time::from_us(4'005));
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::SendRecv, 8), 1.0);
}

}  // namespace
}  // namespace orrery
