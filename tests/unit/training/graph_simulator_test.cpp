// Event mode on task graphs (training/graph_simulator.h): times derived by hand on a small ring,
// messages matched across ranks, broken graphs refused naming the node, and alike ranks simulated
// once; the export of a layer-wise workload as task graphs (training/graph_export.h).
#include <gtest/gtest.h>

#include <chrono>

#include "cluster/cluster.h"
#include "synthetic_workloads.h"
#include "training/event_simulator.h"
#include "training/graph_export.h"
#include "training/graph_flow_simulator.h"
#include "training/graph_tasks.h"
#include "training/rank_classes.h"

namespace orrery {
namespace {

// A ring of n positions, 50 GiB/s each way, 500 ns per hop, ideal links.
Cluster ring(int64_t n) {
  return parse_cluster_yaml(
      "name: ring\nnetwork:\n  - name: r\n    kind: ring\n    size: " + std::to_string(n) +
          "\n    bandwidth: 50 GiB/s\n    latency: 500 ns\n"
          "protocols: ideal\n",
      "ring.yaml");
}

struct Builder {
  explicit Builder(int64_t ranks) { w.graph.emplace().ranks.resize(static_cast<size_t>(ranks)); }
  uint32_t add(int64_t rank, GraphTask t, std::vector<uint32_t> deps = {}) {
    RankGraph& g = w.graph->ranks[static_cast<size_t>(rank)];
    g.source = "r" + std::to_string(rank) + ".et";
    t.node = g.tasks.size();
    t.deps_begin = static_cast<uint32_t>(g.deps.size());
    g.deps.insert(g.deps.end(), deps.begin(), deps.end());
    t.deps_end = static_cast<uint32_t>(g.deps.size());
    g.tasks.push_back(t);
    return static_cast<uint32_t>(g.tasks.size() - 1);
  }
  Result run(const Cluster& c, bool flow = false) {
    w.name = "g";
    w.source = "g";
    w.format = "chakra";
    w.parallelism.world_size = static_cast<int64_t>(w.graph->ranks.size());
    Diagnostics d;
    Result r =
        flow ? simulate_task_graph_flows(w, c, {}, d) : EventSimulator().simulate(w, c, {}, d);
    warnings = d.warnings();
    return r;
  }
  Workload w;
  std::vector<Warning> warnings;
};

GraphTask compute(Time t) {
  GraphTask g;
  g.duration = t;
  return g;
}
GraphTask message(GraphTaskKind kind, int64_t peer, Bytes bytes, int64_t tag = 0) {
  GraphTask g;
  g.kind = kind;
  g.peer = peer;
  g.bytes = bytes;
  g.tag = tag;
  return g;
}
GraphTask all_reduce(Bytes bytes) {
  GraphTask g;
  g.kind = GraphTaskKind::Collective;
  g.bytes = bytes;
  return g;
}

// 10 us of compute, a 1 MiB message over one ring link (1 MiB / 50 GiB/s = 19.53125 us, plus
// 500 ns), then 5 us on the receiver: 35.03125 us.
TEST(GraphSimulator, MessageJoinsTwoRanks) {
  Builder b(2);
  const uint32_t c = b.add(0, compute(Time::from_us(10)));
  b.add(0, message(GraphTaskKind::Send, 1, Bytes{1} << 20), {c});
  const uint32_t r = b.add(1, message(GraphTaskKind::Recv, 0, Bytes{1} << 20));
  b.add(1, compute(Time::from_us(5)), {r});
  const Result result = b.run(ring(2));
  EXPECT_EQ(result.iteration_time, Time::from_ps(35'031'250));
  EXPECT_EQ(result.critical_stage, 1);
  EXPECT_EQ(result.breakdown.compute, Time::from_us(5));
  EXPECT_EQ(result.breakdown.p2p, Time::from_ps(30'031'250));
}

// A collective starts when its last member reaches it: rank 1 computes 7 us first. A 1 MiB
// all-reduce on a ring of 2: 2 steps, each rank sending S / 2 = 512 KiB to the other over its one
// link that way: 500 ns + 512 KiB / 50 GiB/s = 10.265625 us per step.
TEST(GraphSimulator, CollectiveWaitsForItsLastMember) {
  Builder b(2);
  b.add(0, all_reduce(Bytes{1} << 20));
  const uint32_t c = b.add(1, compute(Time::from_us(7)));
  b.add(1, all_reduce(Bytes{1} << 20), {c});
  const Result result = b.run(ring(2));
  EXPECT_NEAR(static_cast<double>(result.iteration_time.ps()), 7e6 + 2 * 10'265'625.0, 2);
}

TEST(GraphSimulator, ReceiveWithoutSendIsRefused) {
  Builder b(2);
  b.add(1, message(GraphTaskKind::Recv, 0, 8, 3));
  try {
    b.run(ring(2));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("r1.et: node 0: expected rank 0 to send message 1 with "
                                         "tag 3 to rank 1; it sends 0"),
              std::string::npos)
        << e.what();
  }
}

// Each rank receives before it sends: neither receive can ever end.
TEST(GraphSimulator, DeadlockAcrossRanksIsRefused) {
  Builder b(2);
  for (int64_t r = 0; r < 2; ++r) {
    const uint32_t recv = b.add(r, message(GraphTaskKind::Recv, 1 - r, 8));
    b.add(r, message(GraphTaskKind::Send, 1 - r, 8), {recv});
  }
  try {
    b.run(ring(2));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("waits forever"), std::string::npos) << e.what();
  }
}

TEST(GraphSimulator, MembersDisagreeingOnACollectiveAreRefused) {
  Builder b(2);
  b.add(0, all_reduce(1024));
  b.add(1, all_reduce(2048));
  EXPECT_THROW(b.run(ring(2)), InputError);
  Builder c(2);
  c.add(0, all_reduce(1024));
  EXPECT_THROW(c.run(ring(2)), InputError);
}

// The flow mode refuses the graphs the event mode refuses, with one line naming the file and node,
// never a hang or a short time (the checks before any run refuse them, as for the event mode; the
// flow mode's own check after its run is a second guard no input reaching it can trip): receives
// before sends on both ranks (a cycle across ranks), an all-reduce rank 1 never reaches, and a
// cycle through a collective (rank 0's all-reduce waits for a receive whose send, on rank 1, waits
// for that all-reduce).
TEST(GraphSimulator, FlowModeRefusesGraphsThatCanNeverFinish) {
  const auto refused = [](Builder& b, const std::string& expected) {
    try {
      b.run(ring(2), true);
      ADD_FAILURE() << "ran: " << expected;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(expected), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  };
  Builder cycle(2);
  for (int64_t r = 0; r < 2; ++r) {
    const uint32_t recv = cycle.add(r, message(GraphTaskKind::Recv, 1 - r, 8));
    cycle.add(r, message(GraphTaskKind::Send, 1 - r, 8), {recv});
  }
  refused(cycle, "waits forever");
  Builder unmatched(2);
  unmatched.add(0, all_reduce(1024));
  refused(unmatched,
          "r0.et: node 0: expected rank 1 to issue this collective on the group of "
          "all ranks too; it issues 0 there, so this one would wait forever");
  Builder through(2);
  const uint32_t recv = through.add(0, message(GraphTaskKind::Recv, 1, 8));
  through.add(0, all_reduce(1024), {recv});
  const uint32_t reduce = through.add(1, all_reduce(1024));
  through.add(1, message(GraphTaskKind::Send, 0, 8), {reduce});
  refused(through, ".et: node ");
  refused(through, "waits forever");
}

// One repeated pattern on n ranks: compute, send to the next rank, receive from the previous,
// compute, all-reduce.
Builder ring_pattern(int64_t n) {
  Builder b(n);
  for (int64_t r = 0; r < n; ++r) {
    const uint32_t c = b.add(r, compute(Time::from_us(3)));
    b.add(r, message(GraphTaskKind::Send, (r + 1) % n, 4096), {c});
    const uint32_t recv = b.add(r, message(GraphTaskKind::Recv, (r + n - 1) % n, 4096));
    const uint32_t d = b.add(r, compute(Time::from_us(2)), {recv});
    b.add(r, all_reduce(Bytes{1} << 20), {d});
  }
  return b;
}

// 1,024 alike ranks are simulated as one: the same tasks as one rank's trace (5), under twice its
// cost, and the same time as every rank simulated (checked on 8 ranks, where both run).
TEST(GraphSimulator, AlikeRanksAreSimulatedOnce) {
  Builder big = ring_pattern(1024);
  const Cluster c = ring(1024);
  const auto start = std::chrono::steady_clock::now();
  const Result r = big.run(c);
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.simulated_tasks, 5);
  EXPECT_LT(r.simulated_tasks, 2 * 5);
  EXPECT_LT(seconds, 5.0);
  ASSERT_EQ(big.warnings.size(), 1u);
  EXPECT_NE(big.warnings[0].message.find("1024 ranks run alike in 1 class(es)"), std::string::npos);

  Builder small = ring_pattern(8);
  const Result collapsed = small.run(ring(8));
  EXPECT_EQ(collapsed.simulated_tasks, 5);
  // Rank 0 differs (a longer first compute): every rank is then simulated explicitly.
  Builder explicit_ranks = ring_pattern(8);
  explicit_ranks.w.graph->ranks[0].tasks[0].duration = Time::from_us(3);  // still alike
  explicit_ranks.w.graph->ranks[3].tasks[0].duration = Time::from_ps(3'000'001);
  const Result each = explicit_ranks.run(ring(8));
  EXPECT_EQ(each.simulated_tasks, 8 * 4 + 1);  // the all-reduce is one task for all
  EXPECT_GT(each.iteration_time, collapsed.iteration_time);
  EXPECT_LE(each.iteration_time - collapsed.iteration_time, Time::from_ps(1));
}

// A pipeline of 3 stages of 2 ranks: each rank receives from the rank 2 below (but in stage 0),
// computes 4 us, all-reduces 64 KiB with its stage partner and sends to the rank 2 above (but in
// stage 2). The stages are alike but the first and last lack a neighbour: 3 classes, one rank
// each simulated, to the same time as every rank simulated.
TEST(GraphSimulator, PipelineStagesAreSimulatedOncePerStage) {
  Builder b(6);
  b.w.graph->groups = {{0, 1}, {2, 3}, {4, 5}};
  b.w.graph->group_names = {"s0", "s1", "s2"};
  for (int64_t r = 0; r < 6; ++r) {
    const int64_t stage = r / 2;
    std::vector<uint32_t> deps;
    if (stage > 0) deps.push_back(b.add(r, message(GraphTaskKind::Recv, r - 2, 4096)));
    const uint32_t c = b.add(r, compute(Time::from_us(4)), deps);
    GraphTask ar = all_reduce(64 << 10);
    ar.group = static_cast<int32_t>(stage);
    const uint32_t a = b.add(r, ar, {c});
    if (stage < 2) b.add(r, message(GraphTaskKind::Send, r + 2, 4096), {a});
  }
  const Result collapsed = b.run(ring(6));
  ASSERT_EQ(b.warnings.size(), 1u);
  EXPECT_NE(b.warnings[0].message.find("6 ranks run alike in 3 class(es)"), std::string::npos)
      << b.warnings[0].message;
  EXPECT_EQ(collapsed.simulated_tasks, 3 + 4 + 3);  // ranks 0, 2 and 4: their own tasks
  const Cluster cluster = ring(6);                  // the pricer keeps a reference to its network
  GraphPricer pricer(*b.w.graph, cluster, Algorithm::Auto);
  const GraphTasks every = build_graph_tasks(*b.w.graph, every_rank(6), pricer);
  EXPECT_EQ(collapsed.iteration_time, engine::simulate(every.graph).makespan);
  EXPECT_EQ(every.graph.task_count(), 6 + 3 + 4 + 4u);  // computes, all-reduces, sends, receives
}

// Flow mode: alone on the network a message and a collective take their closed-form times (as in
// event mode); two messages on one link at once share it: 2 MiB / 50 GiB/s + 500 ns = 39.5625 us
// for both, where event mode, which prices each alone, ends both at 20.03125 us.
TEST(GraphSimulator, FlowModeSharesLinks) {
  Builder alone(2);
  alone.add(0, message(GraphTaskKind::Send, 1, Bytes{1} << 20));
  alone.add(1, message(GraphTaskKind::Recv, 0, Bytes{1} << 20));
  EXPECT_EQ(alone.run(ring(2), true).iteration_time, Time::from_ps(20'031'250));
  Builder both(2);
  for (int64_t tag = 0; tag < 2; ++tag) {
    both.add(0, message(GraphTaskKind::Send, 1, Bytes{1} << 20, tag));
    both.add(1, message(GraphTaskKind::Recv, 0, Bytes{1} << 20, tag));
  }
  EXPECT_EQ(both.run(ring(2)).iteration_time, Time::from_ps(20'031'250));
  const Result flow = both.run(ring(2), true);
  EXPECT_EQ(flow.iteration_time, Time::from_ps(39'562'500));
  EXPECT_EQ(flow.mode, "flow");
  EXPECT_EQ(flow.flows, 2);
  Builder collective = ring_pattern(8);
  const Result event = collective.run(ring(8));
  EXPECT_NEAR(static_cast<double>(collective.run(ring(8), true).iteration_time.ps()),
              static_cast<double>(event.iteration_time.ps()), 20);  // 1 ps per step
}

// A layer whose phases give kernels: forward 100 FLOP and 10 B (two kernels), input gradient 200
// FLOP and 20 B, weight gradient 300 FLOP and 30 B; 10, 20 and 30 us. Passes of 2 such layers, 2
// micro-batches, 2 stages; layers without a stage set run on every stage (as SimAI files describe
// one stage), so every rank's compute runs 2 x 2 layers: 4 x 600 = 2,400 FLOP, 4 x 60 = 240 B and
// 4 x 60 = 240 us, whichever tasks the schedule merges, because the exported trace must carry the
// work its durations price.
TEST(GraphExport, ComputeTasksCarryTheirKernelsWork) {
  Layer body = testing::layer("l", testing::us(10), testing::us(20), testing::us(30));
  const auto kernel = [](double flop, Bytes bytes) {
    ComputeDemand k;
    k.flop = flop;
    k.bytes = bytes;
    return k;
  };
  body.forward.kernels = {kernel(60, 4), kernel(40, 6)};
  body.input_grad.kernels = {kernel(200, 20)};
  body.weight_grad.kernels = {kernel(300, 30)};
  const Workload w = testing::uniform_workload(2, 2, 2, body);
  Diagnostics d;
  const GraphProgram g = export_task_graphs(w, testing::test_cluster(), {}, d);
  ASSERT_EQ(g.ranks.size(), 2u);
  for (const RankGraph& rank : g.ranks) {
    double flop = 0;
    Bytes bytes = 0;
    Time busy;
    for (const GraphTask& t : rank.tasks) {
      if (t.kind != GraphTaskKind::Compute) continue;
      EXPECT_FALSE(t.has_demand);  // priced already: the duration is what runs
      flop += t.flop;
      bytes += t.bytes;
      busy += t.duration.value_or(Time::zero());
    }
    EXPECT_DOUBLE_EQ(flop, 2400);
    EXPECT_EQ(bytes, 240u);
    EXPECT_EQ(busy, testing::us(240));
  }
}

}  // namespace
}  // namespace orrery
