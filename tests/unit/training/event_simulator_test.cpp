#include "training/event_simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "formats/workload_reader.h"
#include "synthetic_workloads.h"
#include "training/analytical_simulator.h"
#include "training/iteration_plan.h"

namespace orrery {
namespace {

using testing::add_iteration_row;
using testing::comm;
using testing::layer;
using testing::ms;
using testing::parameter_gather_row;
using testing::test_cluster;
using testing::three_chunk_workload;
using testing::uniform_workload;
using testing::us;

Result run_event(const Workload& w, const Cluster& c = test_cluster(), SimulationOptions o = {}) {
  Diagnostics d;
  return EventSimulator().simulate(w, c, o, d);
}

Result run_analytical(const Workload& w, const Cluster& c = test_cluster(),
                      SimulationOptions o = {}) {
  Diagnostics d;
  return AnalyticalSimulator().simulate(w, c, o, d);
}

void expect_partitioned(const Result& r) {
  for (const StageTiming& s : r.stages)
    EXPECT_EQ(s.breakdown.total(), s.finish) << "stage " << s.stage;
  EXPECT_EQ(r.breakdown.total(), r.iteration_time);
}

TEST(EventSimulator, OneStageWithoutOverlapIsTheSumOfComputeAndComm) {
  // tp 8 (one server), dp 2 (two servers, one rank each). Per layer: fwd 10 us + TP all-reduce of
  // 8 MB, ig 20 us + TP all-gather of 8 MB, wg 30 us + DP all-reduce of 4 MB.
  //   TP all-reduce  = 2 * 7/8 * 8 MB / 100 GB/s = 140 us
  //   TP all-gather  =     7/8 * 8 MB / 100 GB/s =  70 us
  //   DP all-reduce  = 2 * 1/2 * 4 MB /  25 GB/s = 160 us   (one GPU per server: its 25 GB/s)
  // 2 micro-batches x 3 layers, plus an optimizer row of 50 us:
  //   6 * (10 + 20 + 30 + 140 + 70 + 160) + 50 = 2630 us.
  Layer body = layer("l", us(10), us(20), us(30));
  body.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Tensor, 8'000'000);
  body.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, 8'000'000);
  body.weight_grad.comm = comm(CollectiveKind::AllReduce, CommGroup::Data, 4'000'000);
  Workload w = uniform_workload(1, 2, 3, body, 1, 8, 16);
  add_iteration_row(w, layer("optimizer", us(50), Time::zero(), Time::zero()));
  SimulationOptions serial;
  serial.overlap = false;
  serial.algorithm = Algorithm::Ring;  // the times above are ring times
  const Result r = run_event(w, test_cluster(), serial);
  EXPECT_EQ(r.iteration_time, us(2630));
  EXPECT_EQ(r.breakdown.compute, us(6 * 60 + 50));
  EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Tensor), us(6 * 210));
  EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Data), us(6 * 160));
  expect_partitioned(r);
  EXPECT_EQ(run_analytical(w, test_cluster(), serial).iteration_time, us(2630));
}

TEST(EventSimulator, OverlapHidesCommBehindCompute) {
  // Same workload with overlap: each DP all-reduce (160 us) runs on its own stream and the TP
  // all-gather of the input gradient (70 us) runs beside the weight-gradient compute (30 us).
  Layer body = layer("l", us(10), us(20), us(30));
  body.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Tensor, 8'000'000);
  body.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, 8'000'000);
  body.weight_grad.comm = comm(CollectiveKind::AllReduce, CommGroup::Data, 4'000'000);
  const Workload w = uniform_workload(1, 2, 3, body, 1, 8, 16);
  SimulationOptions serial;
  serial.overlap = false;
  const Result overlapped = run_event(w);
  const Result blocking = run_event(w, test_cluster(), serial);
  EXPECT_LT(overlapped.iteration_time, blocking.iteration_time);
  EXPECT_LE(overlapped.breakdown.exposed_comm.at(CommGroup::Data),
            blocking.breakdown.exposed_comm.at(CommGroup::Data));
  expect_partitioned(overlapped);
}

TEST(EventSimulator, OneFOneBBubbleOnUniformStages) {
  // p = 4 stages, m = 8 micro-batches, F = 1 ms, B = 2 ms per stage, free transfers:
  // iteration = (m + p - 1)(F + B) = 33 ms, bubble fraction (p - 1)/(m + p - 1) = 3/11.
  const Workload w = uniform_workload(4, 8, 1, layer("l", ms(1), ms(1.5), ms(0.5)));
  const Result r = run_event(w);
  EXPECT_EQ(r.schedule, "1f1b");
  EXPECT_EQ(r.iteration_time, ms(33));
  EXPECT_EQ(r.breakdown.bubble, ms(9));
  EXPECT_DOUBLE_EQ(r.breakdown.bubble / r.iteration_time, 3.0 / 11.0);
  expect_partitioned(r);
  EXPECT_EQ(run_analytical(w).iteration_time, ms(33));
}

TEST(EventSimulator, InterleavingDividesTheBubbleByTheChunks) {
  // The same stage work split into v = 2 chunks (two layers of half the work each):
  // bubble = (p - 1)(F + B)/v = 4.5 ms; iteration = m (F + B) + 4.5 ms = 28.5 ms.
  const Workload w = uniform_workload(4, 8, 2, layer("l", ms(0.5), ms(0.75), ms(0.25)), 2);
  const Result r = run_event(w);
  EXPECT_EQ(r.schedule, "interleaved");
  EXPECT_EQ(r.breakdown.bubble, ms(4.5));
  EXPECT_EQ(r.iteration_time, ms(28.5));
  expect_partitioned(r);
  // And with v = 4 chunks: bubble 9/4 ms.
  const Workload w4 = uniform_workload(4, 8, 4, layer("l", ms(0.25), ms(0.375), ms(0.125)), 4);
  EXPECT_EQ(run_event(w4).breakdown.bubble, ms(2.25));
}

TEST(EventSimulator, TransfersSitOnTheCriticalPath) {
  // 2 stages, 1 micro-batch, F = B = 1 ms per stage, an 8 MB transfer across servers (tp 8 puts
  // the stages on different servers) at 25 GB/s = 320 us each way:
  // F0 + t + F1 + B1 + t + B0 = 4 ms + 640 us.
  Workload w = uniform_workload(2, 1, 1, layer("l", ms(1), ms(0.5), ms(0.5)), 1, 8, 16);
  w.stage_boundary_bytes = 8'000'000;
  const Result r = run_event(w);
  EXPECT_EQ(r.iteration_time, ms(4.64));
  EXPECT_EQ(r.breakdown.p2p, us(320));  // stage 0 waits for the returning gradient
  expect_partitioned(r);
  EXPECT_EQ(run_analytical(w).iteration_time, ms(4.64));
}

// A collective joining stages starts when the last of them reaches it: stage 1, done with its
// backward at 3 ms, waits for stage 0 (4 ms), both all-reduce until 4.32 ms and run the 1 ms
// optimizer: each stage ends at 5.32 ms (alone, stage 1 would end at 4.32 ms).
TEST(EventSimulator, CollectivesJoiningStagesStartTogether) {
  const Workload w = testing::end_stages_workload();
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result r = run_event(w, test_cluster(), ring);
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[0].finish, us(5320));
  EXPECT_EQ(r.stages[1].finish, us(5320));
  EXPECT_EQ(r.iteration_time, us(5320));
  // Stage 1's 1 ms wait for stage 0 is bubble; only the all-reduce's run is exposed.
  EXPECT_EQ(r.stages[1].breakdown.exposed_comm.at(CommGroup::Embedding), us(320));
  EXPECT_EQ(r.stages[1].breakdown.bubble, ms(1) + ms(1));  // its 1F1B wait and this one
  expect_partitioned(r);
  // The closed form prices the all-reduce on each stage without the wait.
  EXPECT_EQ(run_analytical(w, test_cluster(), ring).iteration_time, us(5320));
}

TEST(EventSimulator, RecomputeReRunsTheForwardBeforeTheBackward) {
  // Layers a, b, c with forward 1, 2, 3 ms; checkpoint at a, trigger at c: a and b re-run.
  Workload w;
  w.name = "recompute";
  w.parallelism = {1, 1, 1, 1, 1, 1};
  for (const auto& [name, f] : {std::pair{"a", 1.0}, {"b", 2.0}, {"c", 3.0}})
    w.program.layers.push_back(layer(name, ms(f), ms(1), ms(1)));
  w.program.micro_batches = {{0, 3}};
  w.program.after = {3, 3};
  w.recompute = {{0}, {2}};
  const Result r = run_event(w);
  EXPECT_EQ(r.iteration_time, ms(6 + 6 + 3));
  EXPECT_EQ(r.layers[0].recomputes, 1);
  EXPECT_EQ(r.layers[2].recomputes, 0);
}

TEST(EventSimulator, GradientReductionOverlapNeverExposesMore) {
  // A 400 MB data-parallel reduce-scatter listed before the passes (as AICB's grad_param_comm),
  // dp = 2 across servers: 1/2 * 400 MB / 25 GB/s = 8 ms. With overlap it is bucketed over the
  // last micro-batch's backward; without, it runs after it.
  Workload w = uniform_workload(2, 4, 4, layer("l", ms(1), ms(1), ms(1)), 1, 8, 32);
  Layer reduce = layer("grad_param_comm", Time::zero(), Time::zero(), Time::zero());
  reduce.weight_grad.comm = comm(CollectiveKind::ReduceScatter, CommGroup::Data, 400'000'000);
  w.program.layers.insert(w.program.layers.begin(), reduce);
  for (LayerRange& r : w.program.micro_batches) {
    ++r.begin;
    ++r.end;
  }
  w.program.before = {0, 1};
  w.program.after = {w.program.layers.size(), w.program.layers.size()};
  SimulationOptions serial;
  serial.overlap = false;
  const Result blocking = run_event(w, test_cluster(), serial);
  const Result overlapped = run_event(w);
  EXPECT_EQ(blocking.breakdown.exposed_comm.at(CommGroup::Data), ms(8));
  const auto it = overlapped.breakdown.exposed_comm.find(CommGroup::Data);
  const Time exposed = it == overlapped.breakdown.exposed_comm.end() ? Time::zero() : it->second;
  EXPECT_LE(exposed, ms(8));
  EXPECT_LT(overlapped.iteration_time, blocking.iteration_time);
  expect_partitioned(overlapped);
}

// Megatron's overlap_param_gather on one stage of 4 layers (F = I = W = 1 ms), 2 micro-batches,
// dp = 2 across servers (tp 8): the parameter all-gather row of S bytes costs
// 1/2 x S / 25 GB/s. After the optimizer it is exposed whole: 2 x 4 x 3 ms + S's cost. Prefetched
// in buckets of B bytes (each layer's share S / 4, its share of the weight-gradient compute), the
// first bucket is issued as the forward starts and waited for; each next one is issued once the
// one before is gathered and runs beside the forward of the layer before it.
// - S = 200 MB, B = 50 MB: four 1 ms buckets, each next one done as the 1 ms layer before it
//   ends: only the first is exposed: 24 + 1 = 25 ms instead of 24 + 4 = 28 ms.
// - S = 400 MB, B = 100 MB: four 2 ms buckets, the first exposed whole and each next 1 ms longer
//   than the layer it overlaps: 24 + 2 + 3 x 1 = 29 ms instead of 24 + 8 = 32 ms.
// Both modes give these times; without overlap the gather stays after the optimizer.
TEST(EventSimulator, ParameterGatherOverlapsTheFirstForward) {
  const auto workload = [](Bytes gathered, std::optional<Bytes> bucket) {
    Workload w = uniform_workload(1, 2, 4, layer("l", ms(1), ms(1), ms(1)), 1, 8, 16);
    add_iteration_row(w, parameter_gather_row(gathered));
    w.param_gather_bucket_bytes = bucket;
    return w;
  };
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  for (const auto& [gathered, bucket, after, prefetched] :
       {std::tuple{200'000'000, 50'000'000, 28.0, 25.0}, {400'000'000, 100'000'000, 32.0, 29.0}}) {
    const Workload blocking = workload(gathered, std::nullopt);
    const Workload overlapped = workload(gathered, bucket);
    for (const Result& r : {run_event(blocking, test_cluster(), ring),
                            run_analytical(blocking, test_cluster(), ring)})
      EXPECT_EQ(r.iteration_time, ms(after)) << r.mode << " " << gathered;
    for (const Result& r : {run_event(overlapped, test_cluster(), ring),
                            run_analytical(overlapped, test_cluster(), ring)}) {
      EXPECT_EQ(r.iteration_time, ms(prefetched)) << r.mode << " " << gathered;
      EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Data), ms(prefetched - 24))
          << r.mode << " " << gathered;
      expect_partitioned(r);
    }
    SimulationOptions serial = ring;
    serial.overlap = false;
    EXPECT_EQ(run_event(overlapped, test_cluster(), serial).iteration_time, ms(after));
    EXPECT_EQ(run_analytical(overlapped, test_cluster(), serial).iteration_time, ms(after));
  }
}

// Collectives run beside their GEMMs (testing::gemm_overlap_workload; no SM counts known, so no
// slowdown; gemm_overlap_time.h):
//   forward: ring exchange over 8 ranks, max(60 x 7/8, 70) + 60 / 8 = 77.5 us: 100 - 60 + 77.5
//   input gradient: 4 chunks, max(40, 70) + 40 / 4 = 80 us: 50 - 40 + 80 = 90 us
//   weight gradient: bulk, max(80, 70) = 80 us
// Two layers: 2 x (117.5 + 90 + 80) = 575 us in event and analytical mode (the collectives are
// folded into the GEMMs' phases). What a GEMM does not hide is exposed tensor-parallel time:
// 77.5 - 60 = 17.5 us forward, 80 - 40 = 40 us input gradient, none beside the weight gradient,
// 2 x 57.5 = 115 us; compute 460 us. Without overlap each collective runs after its phase's
// compute: 2 x (230 + 3 x 70) = 880 us, 420 us of it exposed tensor-parallel time.
TEST(EventSimulator, CollectivesBesideTheirGemmsCostThePipelineOfChunks) {
  const Workload w = testing::gemm_overlap_workload();
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  for (const Result& r :
       {run_event(w, test_cluster(), ring), run_analytical(w, test_cluster(), ring)}) {
    EXPECT_EQ(r.iteration_time, us(575)) << r.mode;
    EXPECT_EQ(r.breakdown.compute, us(460)) << r.mode;
    EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Tensor), us(115)) << r.mode;
    expect_partitioned(r);
  }
  // The per-layer table shows each folded collective at its own cost (70 us) beside the phase's
  // kernels (100, 50 and 80 us: no SM counts, so no slowdown).
  SimulationOptions rows = ring;
  rows.layer_rows = true;
  const Result table = run_event(w, test_cluster(), rows);
  ASSERT_FALSE(table.layers.empty());
  const LayerTiming& l = table.layers.front();
  EXPECT_EQ(l.forward.compute, us(100));
  EXPECT_EQ(l.input_grad.compute, us(50));
  EXPECT_EQ(l.weight_grad.compute, us(80));
  for (const PhaseTiming* p : {&l.forward, &l.input_grad, &l.weight_grad}) {
    ASSERT_TRUE(p->comm);
    EXPECT_EQ(p->comm->cost, us(70));
  }
  SimulationOptions serial = ring;
  serial.overlap = false;
  for (const Result& r :
       {run_event(w, test_cluster(), serial), run_analytical(w, test_cluster(), serial)}) {
    EXPECT_EQ(r.iteration_time, us(880)) << r.mode;
    EXPECT_EQ(r.breakdown.compute, us(460)) << r.mode;
    EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Tensor), us(420)) << r.mode;
  }
}

// Megatron-LM's aligned launch (align_param_gather) against the lazy chain, on one stage of three
// model chunks (vpp 3, interleaved), one layer each (F = I = W = 1 ms), one micro-batch, dp = 2
// across servers (tp 8). The parameter all-gather row of S bytes splits by weight-gradient compute
// into S / 3 per chunk, one bucket each (bucket size S / 3) of g = 1/2 x S / 3 / 25 GB/s. The
// schedule runs F0, F1, F2, then the three backwards (6 ms).
// - Lazy chain: each chunk's first forward issues its bucket and waits for it: 9 + 3 g.
// - Aligned: buckets 0 and 1 issued at the start, one after the other on the data-parallel
//   stream (done at g and 2 g); F0 waits until g; bucket 2 is issued as F1 starts (chunk 1's first
//   forward launches chunk 2 on stage 0), after bucket 1 on the stream.
//   S = 300 MB, g = 2 ms: F0 [2, 3], F1 waits for bucket 1 until 4 [4, 5], bucket 2 [4, 6], F2
//   [6, 7]: 13 ms, 4 ms exposed, against 15 ms lazily (and after the optimizer: 9 + 6).
//   S = 75 MB, g = 0.5 ms: F0 [0.5, 1.5], bucket 1 done at 1, bucket 2 [1.5, 2], F1 [1.5, 2.5],
//   F2 [2.5, 3.5]: 9.5 ms, 0.5 ms exposed, against 10.5 ms lazily.
// Event and analytical modes give these times.
TEST(EventSimulator, AlignedParameterGatherLaunchesEachChunkFromTheSchedule) {
  const auto workload = [](Bytes gathered, bool aligned) {
    Workload w = three_chunk_workload();
    add_iteration_row(w, parameter_gather_row(gathered));
    w.param_gather_bucket_bytes = gathered / 3;
    w.align_param_gather = aligned;
    return w;
  };
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  for (const auto& [gathered, lazy, aligned] :
       {std::tuple{300'000'000, 15.0, 13.0}, {75'000'000, 10.5, 9.5}}) {
    for (const auto& [align, expected] : {std::pair{false, lazy}, {true, aligned}}) {
      const Workload w = workload(gathered, align);
      Diagnostics d;
      EXPECT_EQ(plan_iteration(w, test_cluster(), ring, d).aligned_gathers, align);
      for (const Result& r :
           {run_event(w, test_cluster(), ring), run_analytical(w, test_cluster(), ring)}) {
        EXPECT_EQ(r.iteration_time, ms(expected)) << r.mode << " " << gathered << " " << align;
        EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Data), ms(expected - 9))
            << r.mode << " " << gathered << " " << align;
        expect_partitioned(r);
      }
    }
  }
}

// The gather buckets of a program listing model chunks (pp 2, vpp 2: virtual stage v = chunk
// v / 2 of stage v % 2), every layer's weight gradient 1 ms. Stage 0 runs layers a, b (virtual
// stage 0) and x, z, w (virtual stage 2); stage 1 runs m (1) and y (3). Each model chunk gets its
// share of its stage's row by weight-gradient compute; the first chunk is split in backward order
// into buckets of at least 100 MB, a later chunk is one bucket (Megatron disables bucketing for
// every model chunk but the first); listed in forward order, each tied to its first layer:
// - stage 0's 400 MB: chunk 0 holds 2 of the 5 ms, 160 MB: b (80 MB) is under 100 MB, a closes
//   {a 160 MB}; chunk 1, 240 MB, would be {x 80, z 160} by the rule, is {x 240 MB};
// - stage 1's 200 MB: {m 100 MB} and {y 100 MB}.
// The rows become prefetches, and the pipeline runs them without deadlock.
TEST(EventSimulator, EachModelChunkGathersItsOwnBuckets) {
  Workload w = uniform_workload(2, 2, 7, layer("l", ms(1), ms(1), ms(1)), 2, 8, 32);
  w.program.layers.resize(7);
  w.program.micro_batches = {{0, 7}, {0, 7}};
  w.program.after = {7, 7};
  w.program.pass_per_model_chunk = true;
  const int64_t virtual_stage[] = {0, 0, 1, 2, 2, 2, 3};  // a, b, m, x, z, w, y
  const char* names[] = {"a", "b", "m", "x", "z", "w", "y"};
  for (int64_t v = 0; v < 4; ++v) {
    std::vector<bool> set(4, false);
    set[static_cast<size_t>(v)] = true;
    w.program.stage_sets.push_back(set);
  }
  for (size_t i = 0; i < 7; ++i) {
    w.program.layers[i].name = names[i];
    w.program.layers[i].stage_set = static_cast<int32_t>(virtual_stage[i]);
  }
  for (const auto& [stage, bytes] : {std::pair{0, 400'000'000}, {1, 200'000'000}}) {
    Layer row = parameter_gather_row(bytes);
    row.stage_set = stage;  // virtual stage `stage`: chunk 0 of that stage
    add_iteration_row(w, row);
  }
  w.param_gather_bucket_bytes = 100'000'000;
  Diagnostics d;
  const IterationPlan plan = plan_iteration(w, test_cluster(), {}, d);
  struct Expected {
    size_t layer, row;
    int64_t chunk;
    Bytes bytes;
  };
  const Expected expected[] = {{0, 7, 0, 160'000'000},
                               {3, 7, 1, 240'000'000},
                               {2, 8, 0, 100'000'000},
                               {6, 8, 1, 100'000'000}};
  ASSERT_EQ(plan.gather_buckets.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const CommBucket& b = plan.gather_buckets[i];
    EXPECT_EQ(b.layer, expected[i].layer) << i;
    EXPECT_EQ(b.row, expected[i].row) << i;
    EXPECT_EQ(b.chunk, expected[i].chunk) << i;
    EXPECT_EQ(b.bytes, expected[i].bytes) << i;
  }
  EXPECT_EQ(plan.layers[7].weight_grad.comm->role, CommRole::ParameterPrefetch);
  EXPECT_EQ(plan.layers[8].weight_grad.comm->role, CommRole::ParameterPrefetch);
  expect_partitioned(run_event(w));
  expect_partitioned(run_analytical(w));
}

TEST(EventSimulator, EverySchedulePartitionsTimeAndNeverDeadlocks) {
  for (const auto kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved})
    for (int64_t p : {1, 2, 3, 4, 6})
      for (int64_t m : {1, 2, 3, 4, 7, 8})
        for (int64_t v : {1, 2, 3}) {
          Workload w = uniform_workload(p, m, 3, layer("l", ms(1), ms(1), ms(0.5)), v);
          w.stage_boundary_bytes = 1'000'000;
          SimulationOptions o;
          o.schedule = kind;
          Result r;
          ASSERT_NO_THROW(r = run_event(w, test_cluster(), o))
              << to_string(kind) << " p" << p << " m" << m << " v" << v;
          expect_partitioned(r);
          EXPECT_GE(r.iteration_time, ms(2.5 * 3 * static_cast<double>(m)));
        }
}

TEST(EventSimulator, MoreBandwidthNeverMakesTheSeedsSlower) {
  for (const char* seed : {"gpt_tp8_pp16_ga16_1024gpus.txt", "moe_tp8_ep4_pp4_vpp8_128gpus.txt"}) {
    Diagnostics d;
    const Workload w = read_workload_file(std::string(ORRERY_SOURCE_DIR "/examples/simai/") + seed,
                                          std::nullopt, d);
    Cluster c = load_cluster("dgx-a100");
    Time previous = Time::max();
    for (const double scale : {1.0, 1.5, 2.0, 4.0}) {
      Cluster faster = c;
      std::vector<Dimension> dims = c.network.dimensions();
      for (Dimension& dim : dims)
        dim.link_bandwidth = dim.link_bandwidth * scale;
      faster.network = Topology(dims);
      const Result r = run_event(w, faster);
      EXPECT_LE(r.iteration_time, previous) << seed << " x" << scale;
      previous = r.iteration_time;
      expect_partitioned(r);
    }
  }
}

TEST(EventSimulator, InterleavingWithFewerMicroBatchesThanStages) {
  // p = 4 stages, m = 2 micro-batches, v = 2 chunks; per chunk f = 0.5 ms forward and b = 1 ms
  // backward. Each chunk round still takes p chunk steps, so the iteration is
  // (p v + m - 1)(f + b) = 9 x 1.5 ms = 13.5 ms: compute m v (f + b) = 6 ms, bubble 7.5 ms.
  const Workload w = uniform_workload(4, 2, 2, layer("l", ms(0.5), ms(0.75), ms(0.25)), 2);
  SimulationOptions forced;
  forced.schedule = ScheduleKind::Interleaved;
  const Result r = run_event(w, test_cluster(), forced);
  EXPECT_EQ(r.schedule, "interleaved");
  EXPECT_EQ(r.iteration_time, ms(13.5));
  EXPECT_EQ(r.breakdown.bubble, ms(7.5));
  expect_partitioned(r);
  EXPECT_EQ(run_analytical(w, test_cluster(), forced).iteration_time, ms(13.5));
  // Megatron interleaves only with m >= p, so auto runs 1F1B: (m + p - 1)(F + B) = 5 x 3 ms,
  // and says why.
  Diagnostics d;
  const Result automatic = EventSimulator().simulate(w, test_cluster(), {}, d);
  EXPECT_EQ(automatic.schedule, "1f1b");
  EXPECT_EQ(automatic.iteration_time, ms(15));
  EXPECT_TRUE(std::any_of(d.warnings().begin(), d.warnings().end(), [](const Warning& warning) {
    return warning.message.find("needs at least pp micro-batches") != std::string::npos;
  }));
}

TEST(EventSimulator, EveryModelChunkHoldsALayer) {
  // Three layers, the first with nearly all the work, over v = 3 chunks: by work alone the first
  // layer's midpoint (0.49 of the pass) falls in chunk 1 and chunk 0 would be empty.
  Workload w = uniform_workload(2, 2, 3, layer("l", ms(0.01), ms(0.01), ms(0.01)), 3);
  for (const LayerRange pass : w.program.micro_batches)
    w.program.layers[pass.begin] = layer("heavy", ms(1), ms(1), ms(1));
  Diagnostics d;
  const IterationPlan plan = plan_iteration(w, test_cluster(), {}, d);
  for (const auto& pass : plan.passes) {
    ASSERT_EQ(pass.size(), 3u);
    for (size_t c = 0; c < 3; ++c)
      EXPECT_EQ(pass[c].size(), 1u) << "chunk " << c;
  }
  // More chunks than layers cannot be: a chunk without a layer is no model chunk.
  w.parallelism.vpp = 4;
  SimulationOptions forced;
  forced.schedule = ScheduleKind::Interleaved;
  EXPECT_THROW(plan_iteration(w, test_cluster(), forced, d), InputError);
}

TEST(EventSimulator, RefusesIterationsBeyondTheTaskLimit) {
  // 64 stages x 1 pass of 60,000 layers x 6 tasks = 23 million tasks > 20 million.
  const Workload w = uniform_workload(64, 1, 60'000, layer("l", us(1), us(1), us(1)));
  Diagnostics d;
  EXPECT_THROW(plan_iteration(w, test_cluster(), {}, d), InputError);
  // A tenth of it plans.
  EXPECT_NO_THROW(plan_iteration(uniform_workload(64, 1, 6'000, layer("l", us(1), us(1), us(1))),
                                 test_cluster(), {}, d));
}

TEST(EventSimulator, RejectsParallelismThatDoesNotFit) {
  Workload w = uniform_workload(4, 2, 1, layer("l", ms(1), ms(1), ms(1)), 1, 8, 48);
  w.parallelism.ep = 4;  // dp = 48 / 32 = 1 is not a multiple of ep
  EXPECT_THROW(run_event(w), InputError);
  w.parallelism.ep = 1;
  w.parallelism.world_size = 40;  // not a multiple of tp * pp
  EXPECT_THROW(run_event(w), InputError);
  w.parallelism.world_size = kMaxWorldSize * 2;  // beyond any cluster Orrery takes
  EXPECT_THROW(run_event(w), InputError);
}

}  // namespace
}  // namespace orrery
