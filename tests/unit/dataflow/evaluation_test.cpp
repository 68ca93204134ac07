// DFModel's latency model on problems small enough to derive every number by hand.
#include "dataflow/evaluation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "dataflow/dataflow_graph.h"
#include "dataflow/sharding_plan.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

using test::edge;
using test::gemm;
using test::simd;

// X (element-wise, 8 x 4) -> W (GEMM 6 x 8 x 4, K split across TP, all-reduce) on a ring of 2
// chips carrying TP, 10 GB/s links.
DataflowProblem two_kernels() {
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 2, 10, ParallelRole::Tensor}});
  p.kernels = {simd(1, "X", 8, 4), gemm(2, "W", 6, 8, 4, TensorAxis::K)};
  p.edges = {edge(1, 1, 2)};
  return p;
}

Mapping kernel_by_kernel(const DataflowProblem& p, int64_t tp, int64_t pp, int64_t dp) {
  Mapping m;
  for (const TopologyDimension& d : p.system.dimensions) {
    m.shape.push_back(d.size);
    m.roles.push_back(d.role);
  }
  m.tp = tp;
  m.pp = pp;
  m.dp = dp;
  for (size_t k = 0; k < p.kernels.size(); ++k)
    m.config.push_back(static_cast<int64_t>(k));
  m.config_count = static_cast<int64_t>(p.kernels.size());
  return m;
}

Evaluation run(DataflowProblem& p, const Mapping& m, ModelOptions options = {}) {
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  return evaluate(p, g, sharding_from_file(p), m, options);
}

// The one FLOP formula of a DFModel kernel: 2 outer M K N for a GEMM, outer M N element-wise,
// times num_input when set; a tile's count is the same formula on its shard sizes.
TEST(DataflowEvaluation, KernelFlopFormula) {
  DataflowKernel w = gemm(2, "W", 6, 8, 4, TensorAxis::K);
  EXPECT_EQ(dataflow_flop(w), 2.0 * 6 * 8 * 4);
  w.outer = 3;
  w.num_input = 2;
  EXPECT_EQ(dataflow_flop(w), 2.0 * 18 * 8 * 4 * 2);
  EXPECT_EQ(dataflow_flop(w, 9, 4, 4), 2.0 * 9 * 4 * 4 * 2);
  const DataflowKernel x = simd(1, "X", 8, 4);
  EXPECT_EQ(dataflow_flop(x), 8.0 * 4);
}

TEST(DataflowEvaluation, KernelByKernelByHand) {
  DataflowProblem p = two_kernels();
  const Evaluation ev = run(p, kernel_by_kernel(p, 2, 1, 1));
  // 4 tiles of 1 token. X: shard 8 x 1 x 1, 8 FLOP per tile -> 4 * 8 / (0.5 * 32 GFLOPS) = 2 ns.
  // W: shard 6 x (8/2) x 1, 2*6*4*1 = 48 FLOP per tile -> 4 * 48 / 16 = 12 ns.
  EXPECT_EQ(ev.num_tile, 4);
  ASSERT_EQ(ev.configs.size(), 2u);
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.compute_ns, 2.0);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.compute_ns, 12.0);
  EXPECT_EQ(ev.shards[1].m, 6);
  EXPECT_EQ(ev.shards[1].k, 4);
  EXPECT_EQ(ev.shards[1].n, 1);
  // The edge holds 8 x 1 x 2 = 16 bytes per tile, written by X and read by W:
  // 4 * 16 / 100 GB/s = 0.64 ns in each configuration.
  EXPECT_DOUBLE_EQ(ev.edge_tile_bytes[0], 16.0);
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.memory_ns, 0.64);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.memory_ns, 0.64);
  // All-reduce of W's 6 x 1 x 2 = 12 bytes per tile among 2 chips on a 10 GB/s ring:
  // 2 * (2-1)/(2*10) * 12 * 4 tiles = 4.8 ns.
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.tp_network_ns, 4.8);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.ii_ns, 12 + 0.64 + 4.8);
  EXPECT_DOUBLE_EQ(ev.all_config_ii_ns, 2.64 + 17.44);
  // PP 1: 3 layers per stage, c = 2, phi = 1; 6 samples per replica; no p2p.
  EXPECT_EQ(ev.pipeline.layers_per_stage, 3);
  EXPECT_DOUBLE_EQ(ev.pipeline.pipeline_factor, 1.0);
  EXPECT_DOUBLE_EQ(ev.pipeline.p2p_ns, 0.0);
  EXPECT_DOUBLE_EQ(ev.final_ns, 20.08 * 3 * 6);
  // FLOP = 3 layers * 6 samples * (8*4 + 2*6*8*4) = 7488; util = FLOP / (T * 2 chips * 32).
  EXPECT_DOUBLE_EQ(ev.flop, 7488.0);
  EXPECT_DOUBLE_EQ(ev.utilization, 7488.0 / (361.44 * 2 * 32));
  // SRAM: the staged edge (16 bytes) in each, plus one byte of W's streamed weight.
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.sram_bytes, 16.0);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.sram_bytes, 17.0);
  EXPECT_TRUE(ev.misfits.empty());
  // The parts add up: compute 2.64 + 12.64, TP comm 4.8, per sample per layer.
  EXPECT_DOUBLE_EQ(ev.compute_ns, (2.64 + 12.64) * 18);
  EXPECT_DOUBLE_EQ(ev.tp_comm_ns, 4.8 * 18);
  EXPECT_DOUBLE_EQ(ev.bubble_ns, 0.0);
}

TEST(DataflowEvaluation, AllReduceFactorAndStagingBuffersAreOptions) {
  DataflowProblem p = two_kernels();
  ModelOptions later;
  later.allreduce_factor = 1;
  later.staging_buffers = 2;
  const Evaluation ev = run(p, kernel_by_kernel(p, 2, 1, 1), later);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.tp_network_ns, 2.4);
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.sram_bytes, 32.0);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.sram_bytes, 33.0);
}

TEST(DataflowEvaluation, OverlapStyles) {
  DataflowProblem p = two_kernels();
  p.run.overlap = OverlapStyle::Perfect;
  Evaluation ev = run(p, kernel_by_kernel(p, 2, 1, 1));
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.ii_ns, 2.0);   // max(2, 0.64, 0)
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.ii_ns, 12.0);  // max(12, 0.64, 4.8)
  EXPECT_DOUBLE_EQ(ev.tp_comm_ns, 0.0);                // hidden behind compute
  p.run.overlap = OverlapStyle::ComputeMemory;
  ev = run(p, kernel_by_kernel(p, 2, 1, 1));
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.ii_ns, 16.8);  // max(12, 0.64) + 4.8
}

TEST(DataflowEvaluation, FusedConfigurationKeepsItsEdgeOnChip) {
  DataflowProblem p = two_kernels();
  Mapping m = kernel_by_kernel(p, 2, 1, 1);
  m.style = ExecutionStyle::Dataflow;
  m.config = {0, 0};
  const Evaluation ev = run(p, m);
  ASSERT_EQ(ev.configs.size(), 1u);
  const ConfigTiming& t = ev.configs[0].timing;
  EXPECT_DOUBLE_EQ(t.compute_ns, 14.0);
  EXPECT_DOUBLE_EQ(t.memory_ns, 0.0);
  // The fused edge spans levels 0 -> 1: buffer depth 2, 2 * 16 bytes, plus W's weight byte.
  EXPECT_DOUBLE_EQ(t.sram_bytes, 33.0);
  EXPECT_DOUBLE_EQ(t.ii_ns, 18.8);
}

TEST(DataflowEvaluation, PipelineFactorAndStageToStageTerm) {
  // TP 2 on x (10 GB/s), PP 3 on y (20 GB/s): 3 layers -> 1 per stage, c = 1; 6 micro-batches.
  DataflowProblem p = test::tiny_problem("r_r", {{LinkKind::Ring, 2, 10, ParallelRole::Tensor},
                                                 {LinkKind::Ring, 3, 20, ParallelRole::Pipeline}});
  p.kernels = {simd(1, "X", 8, 4), gemm(2, "W", 6, 8, 4, TensorAxis::K, true)};
  p.edges = {edge(1, 1, 2)};
  const Evaluation ev = run(p, kernel_by_kernel(p, 2, 3, 1));
  EXPECT_DOUBLE_EQ(ev.all_config_ii_ns, 20.08);
  EXPECT_EQ(ev.pipeline.layers_per_stage, 1);
  EXPECT_EQ(ev.pipeline.micro_batches, 6);
  EXPECT_DOUBLE_EQ(ev.pipeline.pipeline_factor, 1.0 + 2.0 / 6.0);
  // A training graph (W is backward): 1/20 ns per byte * 2 * 8 * 4 * 2 bytes * 3 layers.
  EXPECT_DOUBLE_EQ(ev.pipeline.p2p_ns, 19.2);
  EXPECT_DOUBLE_EQ(ev.final_ns, 20.08 * (4.0 / 3.0) * 6 + 19.2);
  EXPECT_DOUBLE_EQ(ev.bubble_ns, 20.08 * (1.0 / 3.0) * 6);
  EXPECT_NEAR(ev.compute_ns + ev.tp_comm_ns + ev.dp_comm_ns + ev.bubble_ns + ev.pipeline.p2p_ns,
              ev.final_ns, 1e-9);
}

TEST(DataflowEvaluation, GradientAllReduceIsSpreadOverMicroBatches) {
  // TP 2 on x (10 GB/s), DP 4 on y (20 GB/s); batch 8 -> 2 micro-batches per replica.
  DataflowProblem p = test::tiny_problem("r_r", {{LinkKind::Ring, 2, 10, ParallelRole::Tensor},
                                                 {LinkKind::Ring, 4, 20, ParallelRole::Data}});
  p.run.llm->global_batch = 8;
  DataflowKernel g = gemm(2, "G", 6, 4, 8, TensorAxis::M, true);
  g.variant = KernelVariant::GemmInputInput;
  g.tiling = TensorAxis::K;
  g.collective = DataflowCollective::AllReducePeriodic;
  p.kernels = {simd(1, "X", 8, 4), g};
  p.edges = {edge(1, 1, 2)};
  const Evaluation ev = run(p, kernel_by_kernel(p, 2, 1, 4));
  // G: shard M 6/2 = 3, K 4/4 tiles = 1, N 8: 2*3*1*8 = 48 FLOP per tile -> 12 ns.
  EXPECT_EQ(ev.shards[1].m, 3);
  EXPECT_EQ(ev.shards[1].k, 1);
  EXPECT_EQ(ev.shards[1].n, 8);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.compute_ns, 12.0);
  // Local gradient 3 * 8 * 2 = 48 bytes, all-reduced among DP 4 on 20 GB/s once per global
  // batch, a 1/2 share per micro-batch: 2 * 3/(4*20) * 48 / 2 = 1.8 ns.
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.dp_network_ns, 1.8);
  EXPECT_DOUBLE_EQ(ev.pipeline.samples_per_replica, 2.0);
}

TEST(DataflowEvaluation, SramMisfitIsReported) {
  DataflowProblem p = two_kernels();
  p.system.sram_bytes = 16.5;  // W needs 17 bytes
  const Evaluation ev = run(p, kernel_by_kernel(p, 2, 1, 1));
  ASSERT_EQ(ev.misfits.size(), 1u);
  EXPECT_NE(ev.misfits[0].find("configuration 1 (W) needs 17 bytes of SRAM"), std::string::npos)
      << ev.misfits[0];
}

TEST(DataflowEvaluation, CycleModeSharesCoresAmongFusedKernels) {
  DataflowProblem p = two_kernels();
  p.run.compute_util = 0;  // cycle model, 4 cores of a 2 x 2 systolic array at 1 GHz
  Mapping m = kernel_by_kernel(p, 2, 1, 1);
  Evaluation ev = run(p, m);
  // X alone (SIMD, shard 8 x 1): lanes up to ceil(8/2) = 4 -> ceil(8/(4*2)) * 1 = 1 cycle per
  // tile -> 4 ns. W alone (shard 6 x 4 x 1): 3 lanes -> ceil(6/6) * ceil(1/2) * 4 = 4 cycles
  // -> 16 ns.
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.compute_ns, 4.0);
  EXPECT_DOUBLE_EQ(ev.configs[1].timing.compute_ns, 16.0);
  // Fused, the 4 cores split: W needs 3 lanes for 4 cycles, X's 1 core gives 4 cycles too
  // (ceil(8/2) = 4): max = 4 cycles -> 16 ns.
  m.style = ExecutionStyle::Dataflow;
  m.config = {0, 0};
  ev = run(p, m);
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.compute_ns, 16.0);
}

TEST(DataflowEvaluation, CycleModeMatchesABruteForceCoreSplit) {
  // One GEMM 100 x 7 x 37 (no tiling) on 16 cores of a 4 x 3 systolic array: the fewest cycles
  // over every lanes x stages <= 16 is ceil(100 / (lanes 4)) ceil(37 / (stages 3)) 7.
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 1, 10, ParallelRole::Data}});
  p.system.cores = 16;
  p.system.systolic_width = 4;
  p.system.systolic_height = 3;
  p.run.compute_util = 0;
  p.kernels = {gemm(1, "G", 100, 7, 37, TensorAxis::M)};
  p.kernels[0].tiling = TensorAxis::None;
  int64_t best = INT64_MAX;
  for (int64_t lanes = 1; lanes <= 16; ++lanes)
    for (int64_t stages = 1; lanes * stages <= 16; ++stages)
      best = std::min(
          best, ((100 + 4 * lanes - 1) / (4 * lanes)) * ((37 + 3 * stages - 1) / (3 * stages)) * 7);
  const Evaluation ev = run(p, kernel_by_kernel(p, 1, 1, 1));
  EXPECT_DOUBLE_EQ(ev.configs[0].timing.compute_ns, 4.0 * static_cast<double>(best));
}

}  // namespace
}  // namespace orrery
