#include "network/collective_flows.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include "network/rank_placement.h"
#include "test_topologies.h"

namespace orrery {
namespace {

using testing::Model;

std::vector<int64_t> first(int64_t n) {
  return testing::ranks(n);
}

// On an uncontended network the flow decomposition takes the analytical time.
// `gpus`: the job's GPUs (0: the group's), which a torus slice wraps around.
void expect_flow_equals_analytical(const Topology& t, Algorithm a, CollectiveKind kind, Bytes bytes,
                                   int64_t n, int64_t gpus = 0) {
  const Model m(t, {first(n)}, gpus);
  const CollectiveFlowRun run = run_collective_flows(m.model, kind, bytes, a);
  ASSERT_EQ(run.algorithm, a);
  const auto analytical = m.model.time(a, kind, bytes);
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

TEST(CollectiveFlows, TheRendezvousIsPaidOnceInBothForms) {
  // The network's per-call rendezvous rides on the base step in flow mode and is added once in
  // the closed form: the two still agree across servers.
  std::vector<Dimension> dims = testing::two_tier().dimensions();
  dims[1].rendezvous_latency = Time::from_us(7);
  Topology t(dims);
  t.set_ideal_links(true);
  for (const auto kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather})
    expect_flow_equals_analytical(t, Algorithm::Ring, kind, 1 << 24, 32);
  expect_flow_equals_analytical(t, Algorithm::Direct, CollectiveKind::AllToAll, 1 << 24, 16);
  expect_flow_equals_analytical(t, Algorithm::Direct, CollectiveKind::SendRecv, 1 << 24, 16);
}

TEST(CollectiveFlows, ChainsAcrossServersTakeTheAnalyticalTime) {
  // The chain streams along each channel's ring rotated to the root; its fill and its hops'
  // latencies are charged alike in both forms.
  const Topology t = testing::two_tier(true);
  for (const auto kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce})
    for (const int64_t n : {16, 32, 12})
      expect_flow_equals_analytical(t, Algorithm::Ring, kind, 1 << 28, n);
}

TEST(CollectiveFlows, RingChannelsCrossServersOnDistinctRails) {
  // 16 ranks on 2 servers: 8 channels; channel c enters each server at GPU c and leaves from
  // the GPU before it, relayed to GPU c's rail, so in each direction the 8 crossings land on 8
  // different rails and every NIC carries one channel.
  const Topology t = testing::two_tier();
  const auto steps =
      collective_steps(t, Algorithm::Ring, CollectiveKind::AllGather, 1 << 20, first(16));
  // One pass of 15 steps alike: 14 hops inside a server (1 us), 1 across (5 us).
  ASSERT_EQ(steps.size(), 1u);
  ASSERT_EQ(steps[0].runs.size(), 2u);
  EXPECT_EQ(steps[0].runs[0].count, 14);
  EXPECT_EQ(steps[0].runs[0].latency, Time::from_us(1));
  EXPECT_EQ(steps[0].runs[1].count, 1);
  EXPECT_EQ(steps[0].runs[1].latency, Time::from_us(5));
  std::set<int64_t> forward, back;
  for (const Transfer& x : steps[0].transfers) {
    if (x.src / 8 < x.dst / 8) forward.insert(x.dst % 8);
    if (x.src / 8 > x.dst / 8) back.insert(x.dst % 8);
  }
  EXPECT_EQ(forward.size(), 8u);
  EXPECT_EQ(back.size(), 8u);
}

// Servers of 8 GPUs (100 GB/s ports) with `rails` NICs of 25 GB/s.
Topology servers_with_rails(int64_t rails) {
  std::vector<Dimension> dims = testing::two_tier().dimensions();
  dims[1].rails = rails;
  dims[1].servers_per_leaf = 0;
  dims[1].oversubscription = 1;
  return testing::ideal(Topology(dims));
}

// Rings on servers joined by a fat-tree (8 rails, 3 rails on 8 GPUs, a 4-GPU mesh inside) among
// groups filling servers, spread over them, in parts of servers and out of GPU order / the ring
// of a group moved by k whole servers is the group's ring with every GPU id moved by k servers,
// transfer for transfer in the same order, because the analytical model decomposes one group of
// each arrangement and moves its transfers to the others (CollectiveModel::group_patterns).
TEST(CollectiveFlows, RingsMovedByWholeServersAreTheMovedGroupsRings) {
  std::vector<Dimension> mesh = testing::two_tier().dimensions();
  mesh[0].kind = DimensionKind::Mesh;
  mesh[0].size = 4;
  mesh[1].rails = 2;
  for (const Topology& t : {testing::two_tier(), servers_with_rails(3), Topology(mesh)}) {
    const int64_t g = t[0].size;
    const std::vector<std::vector<int64_t>> groups = {
        first(g), first(2 * g), {1, g + 1, 2 * g + 1}, {2, 3, g + 2, g + 3}, {g + 1, 1, 0, g}};
    for (const std::vector<int64_t>& group : groups)
      for (const CollectiveKind kind : {CollectiveKind::AllGather, CollectiveKind::AllReduce})
        for (const int64_t k : {1, 3}) {
          std::vector<int64_t> moved = group;
          for (int64_t& m : moved)
            m += k * g;
          const auto steps = collective_pattern(t, Algorithm::Ring, kind, group);
          const auto moved_steps = collective_pattern(t, Algorithm::Ring, kind, moved);
          ASSERT_EQ(moved_steps.size(), steps.size());
          for (size_t i = 0; i < steps.size(); ++i) {
            ASSERT_EQ(moved_steps[i].transfers.size(), steps[i].transfers.size());
            for (size_t x = 0; x < steps[i].transfers.size(); ++x) {
              EXPECT_EQ(moved_steps[i].transfers[x].src, steps[i].transfers[x].src + k * g);
              EXPECT_EQ(moved_steps[i].transfers[x].dst, steps[i].transfers[x].dst + k * g);
              EXPECT_EQ(moved_steps[i].transfers[x].bytes, steps[i].transfers[x].bytes);
            }
          }
        }
  }
}

TEST(CollectiveFlows, FewerNicsThanGpusCarryOneChannelEach) {
  // 4 rails on 8 GPUs (GPUs 2r and 2r + 1 share rail r): 4 channels, one per rail, so a
  // server's ring bandwidth is 4 x 25 = 100 GB/s = the port: 3 servers, 1 GiB all-reduce:
  // 2 x 23/24 x 1 GiB / 100 GB/s = 20.58 ms in both forms.
  for (const int64_t rails : {4, 3, 2}) {
    const Topology t = servers_with_rails(rails);
    expect_flow_equals_analytical(t, Algorithm::Ring, CollectiveKind::AllReduce, 1 << 30, 24);
    const auto rings =
        collective_steps(t, Algorithm::Ring, CollectiveKind::AllGather, 1 << 20, first(24));
    // Crossings from server 0 to 1 land on `rails` distinct rails.
    std::set<int64_t> rails_used;
    for (const Transfer& x : rings[0].transfers)
      if (x.src / 8 == 0 && x.dst / 8 == 1) rails_used.insert(t.rail_of(1, x.dst % 8));
    EXPECT_EQ(static_cast<int64_t>(rails_used.size()), rails);
  }
  // 3 rails: 3 x 25 = 75 GB/s < 100: 2 x 23/24 x 1 GiB / 75 GB/s + 2 x (21 x 1 + 2 x 5) us.
  const Topology three = servers_with_rails(3);
  EXPECT_NEAR(Model(three, {first(24)})
                  .model.time(Algorithm::Ring, CollectiveKind::AllReduce, 1 << 30)
                  ->seconds(),
              2.0 * 23 / 24 * 1073741824.0 / 75e9 + 62e-6, 1e-10);
}

TEST(CollectiveFlows, PartlyFilledServersLimitTheRingToTheirNics) {
  // One NIC per GPU: 9 ranks leave GPU 8 alone on server 1 with one 25 GB/s NIC, which every
  // channel crosses both ways: 2 x 8/9 x 1 GiB / 25 GB/s. 10 ranks: 2 NICs, 12 ranks: 4 NICs
  // (still below the 100 GB/s port).
  const Topology t = servers_with_rails(8);
  for (const auto& [n, nics] : {std::pair<int64_t, double>{9, 1}, {10, 2}, {12, 4}}) {
    const auto nn = static_cast<double>(n);
    // Latency: n - 2 hops inside, 1 across, per pass.
    const double expected =
        2 * (nn - 1) / nn * 1073741824.0 / (nics * 25e9) + 2 * ((nn - 2) * 1e-6 + 5e-6);
    EXPECT_NEAR(Model(t, {first(n)})
                    .model.time(Algorithm::Ring, CollectiveKind::AllReduce, 1 << 30)
                    ->seconds(),
                expected, 1e-9)
        << n;
    expect_flow_equals_analytical(t, Algorithm::Ring, CollectiveKind::AllReduce, 1 << 30, n);
    expect_flow_equals_analytical(t, Algorithm::Ring, CollectiveKind::Broadcast, 1 << 30, n);
    expect_flow_equals_analytical(t, Algorithm::Direct, CollectiveKind::AllToAll, 1 << 26, n);
  }
}

TEST(CollectiveFlows, TorusAndMeshExchangesTakeTheAnalyticalTime) {
  const Topology torus = testing::torus();
  for (const int64_t n : {8, 16, 32, 64}) {
    expect_flow_equals_analytical(torus, Algorithm::Direct, CollectiveKind::AllToAll, 1 << 26, n);
    expect_flow_equals_analytical(torus, Algorithm::Direct, CollectiveKind::AllReduce, 1 << 26, n);
    expect_flow_equals_analytical(torus, Algorithm::Ring, CollectiveKind::AllReduce, 1 << 26, n);
    expect_flow_equals_analytical(torus, Algorithm::Ring, CollectiveKind::Broadcast, 1 << 26, n);
    expect_flow_equals_analytical(torus, Algorithm::HalvingDoubling, CollectiveKind::AllReduce,
                                  1 << 26, n);
  }
  // A ring of 2 positions: one link each way (routing's), 50 GB/s, not 2 x 50.
  std::vector<Dimension> two = {testing::dimension("r", DimensionKind::Ring, 2, 50)};
  const Topology pair = testing::ideal(Topology(two));
  expect_flow_equals_analytical(pair, Algorithm::Ring, CollectiveKind::AllReduce, 1 << 30, 2);
  EXPECT_EQ(*Model(pair, {first(2)})
                 .model.time(Algorithm::Ring, CollectiveKind::AllReduce, 1'000'000'000),
            Time::from_us(20'000));  // 2 x 1/2 x 1 GB / 50 GB/s
  // A switch of 4 inside an open mesh (25 GB/s links): 64 ranks, all-to-all.
  std::vector<Dimension> sm = {testing::dimension("s", DimensionKind::Switch, 4, 100),
                               testing::dimension("m", DimensionKind::Mesh, 0, 25)};
  expect_flow_equals_analytical(testing::ideal(Topology(sm)), Algorithm::Direct,
                                CollectiveKind::AllToAll, 1 << 26, 64);
}

TEST(CollectiveFlows, FlowRunsTheAnalyticalChoiceOrItsFastestStandIn) {
  const Topology two = testing::two_tier(true), torus = testing::torus();
  for (const Topology* t : {&two, &torus})
    for (const auto kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                            CollectiveKind::AllToAll, CollectiveKind::Broadcast})
      for (const Bytes bytes : {Bytes{4096}, Bytes{1} << 20, Bytes{1} << 30})
        for (const int64_t n : {8, 16, 64}) {
          const Model m(*t, {first(n)});
          const Algorithm chosen = m.model.cost(kind, bytes).algorithm;
          const Algorithm flow = m.model.flow_algorithm(kind, bytes, Algorithm::Auto);
          if (decomposes(chosen)) {
            EXPECT_EQ(flow, chosen) << to_string(kind) << " " << bytes << " on " << n;
            continue;
          }
          // Tree: the fastest algorithm that decomposes, whether or not auto would pick it.
          const Time stand_in = *m.model.time(flow, kind, bytes);
          for (const Algorithm a : all_algorithms()) {
            const auto time = m.model.time(a, kind, bytes);
            if (decomposes(a) && time) {
              EXPECT_LE(stand_in, *time) << to_string(a);
            }
          }
        }
  // 64 ranks on 8 servers, 4 KiB: auto picks tree (2 (3 x 5 + 7 x 1) = 44 us of latency);
  // ring pays 2 (56 x 1 + 7 x 5) = 182 us, halving-doubling 2 (3 x 1 + 3 x 5) = 36 us, direct
  // (all peers at once, twice) 2 x 5 = 10 us: the flow mode runs direct, although auto never
  // picks it on a fat-tree. (Without NVLS: NVLS-Tree's 2 (3 x 5) + 4.9 x 1 = 35 us would win.)
  const Topology plain = testing::two_tier();
  const Model m(plain, {first(64)});
  EXPECT_EQ(m.model.cost(CollectiveKind::AllReduce, 4096).algorithm, Algorithm::Tree);
  EXPECT_EQ(m.model.flow_algorithm(CollectiveKind::AllReduce, 4096, Algorithm::Auto),
            Algorithm::Direct);
}

TEST(CollectiveFlows, TreeHasNoDecompositionAndFallsBack) {
  const Topology t = testing::two_tier();
  const Model m(t, {first(64)});
  EXPECT_FALSE(decomposes(Algorithm::Tree));
  EXPECT_NE(m.model.flow_algorithm(CollectiveKind::AllReduce, 4096, Algorithm::Tree),
            Algorithm::Tree);
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// A ring dimension of `size` positions (50 GB/s links, 1 us), and an open mesh of `size` (25 GB/s).
Topology one_ring(int64_t size) {
  return testing::ideal(Topology({testing::dimension("r", DimensionKind::Ring, size, 50)}));
}

// Groups that do not fill their dimensions: the closed form prices the decomposition on the
// group's own links, so it takes what the flows take, however the group lies.
TEST(CollectiveFlows, PartlyFilledRingsTorusAndMeshTakeTheFlowTime) {
  // 8 positions of a 16-ring (a job of 16): no wrap link between the group's ends, so the ring's
  // last hop routes back over the segment; slower than the closed ring of a job of 8.
  const Topology ring = one_ring(16);
  for (const auto kind : {CollectiveKind::AllReduce, CollectiveKind::AllToAll}) {
    const Algorithm a = kind == CollectiveKind::AllToAll ? Algorithm::Direct : Algorithm::Ring;
    expect_flow_equals_analytical(ring, a, kind, 1 << 28, 8, 16);
    EXPECT_GT(*Model(ring, {first(8)}, 16).model.time(a, kind, 1 << 28),
              *Model(ring, {first(8)}, 8).model.time(a, kind, 1 << 28))
        << to_string(kind);
  }
  for (const auto kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce})
    expect_flow_equals_analytical(ring, Algorithm::Ring, kind, 1 << 28, 8, 16);
  const Topology closed = one_ring(8);
  // Halving-doubling on a ring of 8: the distance-4 partners' transfers share links.
  expect_flow_equals_analytical(closed, Algorithm::HalvingDoubling, CollectiveKind::AllReduce,
                                1 << 28, 8);
  // 5 and 6 ranks of a 4 x 4 x 4 torus; a reduce retraces the broadcast's routes.
  const Topology torus = testing::torus();
  for (const int64_t n : {5, 6}) {
    for (const auto kind :
         {CollectiveKind::AllReduce, CollectiveKind::Broadcast, CollectiveKind::Reduce})
      expect_flow_equals_analytical(torus, Algorithm::Ring, kind, 1 << 28, n);
    expect_flow_equals_analytical(torus, Algorithm::Direct, CollectiveKind::AllToAll, 1 << 26, n);
    EXPECT_EQ(
        *Model(torus, {first(n)}).model.time(Algorithm::Ring, CollectiveKind::Reduce, 1 << 28),
        *Model(torus, {first(n)}).model.time(Algorithm::Ring, CollectiveKind::Broadcast, 1 << 28));
  }
  // 9 ranks of an open mesh of 8-GPU switches (25 GB/s mesh links): the ninth GPU's one mesh link
  // carries the 8 S/9 it receives from the first switch, 8/9 x 72 MB / 25 GB/s = 2.56 ms at least.
  const Topology mesh({testing::dimension("s", DimensionKind::Switch, 8, 100),
                       testing::dimension("m", DimensionKind::Mesh, 0, 25)});
  expect_flow_equals_analytical(mesh, Algorithm::Direct, CollectiveKind::AllToAll, 72'000'000, 9);
  EXPECT_GE(Model(mesh, {first(9)})
                .model.time(Algorithm::Direct, CollectiveKind::AllToAll, 72'000'000)
                ->seconds(),
            8.0 / 9 * 72e6 / 25e9 * (1 - 1e-12));
}

TEST(CollectiveFlows, UnevenRailsLoadTheirNicsUnevenly) {
  // 3 rails on 8 GPUs: rail 0 serves GPUs 0-2, so its NIC carries 3/8 of what a server sends out.
  // 16 ranks on 2 servers, all-to-all of 16 MB per rank: each rank sends 1 MB to each of the 8
  // on the other server; a server sends 64 MB, rail 0's NIC 24 MB at 25 GB/s = 960 us, + one
  // exchange's latency across servers (all peers at once: 5 us).
  const Topology t = servers_with_rails(3);
  EXPECT_EQ(
      *Model(t, {first(16)}).model.time(Algorithm::Direct, CollectiveKind::AllToAll, 16'000'000),
      Time::from_us(960 + 5));
  expect_flow_equals_analytical(t, Algorithm::Direct, CollectiveKind::AllToAll, 16'000'000, 16);
  expect_flow_equals_analytical(t, Algorithm::Direct, CollectiveKind::AllToAll, 12'000'000, 12);
  expect_flow_equals_analytical(servers_with_rails(4), Algorithm::HalvingDoubling,
                                CollectiveKind::AllReduce, 1 << 28, 16);
}

TEST(CollectiveFlows, ChainTimeNeverFallsWithTheSize) {
  // The pipeline fill is (n - 2) min(S, 1 MiB): one byte more never makes a broadcast faster.
  const Topology t = testing::two_tier();
  for (const int64_t n : {8, 64})
    for (const Bytes s : {kMiB - 1, kMiB, 2 * kMiB, 64 * kMiB}) {
      const Model m(t, {first(n)});
      for (const auto kind : {CollectiveKind::Broadcast, CollectiveKind::Reduce})
        EXPECT_LE(*m.model.time(Algorithm::Ring, kind, s),
                  *m.model.time(Algorithm::Ring, kind, s + 1))
            << n << " " << s;
    }
}

}  // namespace
}  // namespace orrery
