// DATAFLOW fusion on a chain A -> B -> C of element-wise kernels (8 x 4, 4 tiles): each computes
// in 2 ns; each edge holds 16 bytes per tile, costs 4 * 16 / 100 = 0.64 ns of DRAM time at each
// end when staged, and 2 * 16 = 32 bytes of SRAM when fused (buffer depth 2).
#include "dataflow/fusion.h"

#include <gtest/gtest.h>

#include "dataflow/sharding_plan.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

using test::edge;
using test::simd;

DataflowProblem chain() {
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 1, 10, ParallelRole::Data}});
  p.kernels = {simd(1, "A", 8, 4), simd(2, "B", 8, 4), simd(3, "C", 8, 4)};
  p.edges = {edge(1, 1, 2), edge(2, 2, 3)};
  p.run.style = ExecutionStyle::Dataflow;
  return p;
}

Fusion fuse(DataflowProblem& p, int64_t num_config) {
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  Mapping m;
  m.shape = {1};
  m.roles = {ParallelRole::Data};
  const CostTerms terms(p, g, sharding_from_file(p), m, {});
  return fuse_kernels(p, g, terms, num_config);
}

TEST(Fusion, EverythingFusesWhenSramAllows) {
  DataflowProblem p = chain();
  const Fusion f = fuse(p, 0);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config_count, 3);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 6.0);
  EXPECT_EQ(f.config[0], f.config[1]);
  EXPECT_EQ(f.config[1], f.config[2]);
}

TEST(Fusion, SramLimitsTheGroups) {
  DataflowProblem p = chain();
  // 50 bytes: a pair fits (32 fused + 16 staged), all three (64) do not.
  p.system.sram_bytes = 50;
  Fusion f = fuse(p, 0);
  ASSERT_TRUE(f.found);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 6.0 + 2 * 0.64);
  EXPECT_TRUE((f.config[0] == f.config[1]) != (f.config[1] == f.config[2]));
  EXPECT_LE(f.config[0], f.config[1]);
  EXPECT_LE(f.config[1], f.config[2]);
  // 40 bytes: no pair fits, each kernel alone (B stages 32 bytes).
  p.system.sram_bytes = 40;
  f = fuse(p, 0);
  ASSERT_TRUE(f.found);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 6.0 + 4 * 0.64);
  // 20 bytes: B cannot even run alone.
  p.system.sram_bytes = 20;
  EXPECT_FALSE(fuse(p, 0).found);
}

TEST(Fusion, AtMostNumConfigConfigurations) {
  DataflowProblem p = chain();
  p.system.sram_bytes = 50;
  EXPECT_FALSE(fuse(p, 1).found);  // one configuration would need 64 bytes
  const Fusion two = fuse(p, 2);
  ASSERT_TRUE(two.found);
  EXPECT_DOUBLE_EQ(two.all_config_ii_ns, 6.0 + 2 * 0.64);
}

TEST(Fusion, ForwardAndBackwardHalves) {
  // A (forward) -> B (backward): with C = 2 configurations forward kernels take configuration 0
  // and backward ones 1, so they cannot fuse; with C = 3 both may take configuration 1.
  DataflowProblem p = chain();
  p.kernels.pop_back();
  p.edges.pop_back();
  p.kernels[1].backward = true;
  Fusion f = fuse(p, 2);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 4.0 + 2 * 0.64);
  f = fuse(p, 3);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config, (std::vector<int64_t>{1, 1}));
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 4.0);
}

TEST(Fusion, PinnedKernelsStayInTheirConfiguration) {
  DataflowProblem p = chain();
  p.kernels[1].config = 1;
  Fusion f = fuse(p, 3);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config, (std::vector<int64_t>{1, 1, 1}));
  p.kernels[0].config = 2;  // A after its consumer B: no ordered assignment exists
  f = fuse(p, 3);
  EXPECT_FALSE(f.found);
}

TEST(Fusion, HugeNumConfigCostsNoMoreThanItNeeds) {
  // Only n configuration numbers between two that matter can be used, so num_config 10^9 gives
  // the answers of a small num_config without 10^9-wide tables.
  DataflowProblem p = chain();
  Fusion f = fuse(p, 1'000'000'000);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config_count, 1'000'000'000);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 6.0);  // all three fused, as with num_config 0
  // A (forward) -> B (backward): with an odd count the middle configuration 500,000,000 takes
  // both (as configuration 1 of 3 does above); with an even one they cannot fuse.
  p.kernels.pop_back();
  p.edges.pop_back();
  p.kernels[1].backward = true;
  f = fuse(p, 1'000'000'001);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config, (std::vector<int64_t>{500'000'000, 500'000'000}));
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 4.0);
  f = fuse(p, 1'000'000'000);
  ASSERT_TRUE(f.found);
  EXPECT_LE(f.config[0], 499'999'999);
  EXPECT_GE(f.config[1], 500'000'000);
  EXPECT_LT(f.config[1], 1'000'000'000);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, 4.0 + 2 * 0.64);
  // A pin far out is kept exactly.
  p.kernels[1].config = 999'999'999;
  f = fuse(p, 1'000'000'000);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.config[1], 999'999'999);
}

TEST(Fusion, CycleModeFusionMatchesEveryContiguousSplit) {
  // Cycle mode grows each run with the previous run's cycles as a floor and stops a run once
  // the cores run out; the optimum must still be the best of every contiguous split, each
  // configuration priced on its own. Five GEMMs of different shapes on 3 cores: runs of four or
  // five kernels cannot have a core each.
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 1, 10, ParallelRole::Data}});
  p.system.cores = 3;
  p.run.compute_util = 0;
  p.run.style = ExecutionStyle::Dataflow;
  p.kernels = {
      test::gemm(1, "G1", 12, 3, 8, TensorAxis::M), test::gemm(2, "G2", 4, 9, 8, TensorAxis::M),
      test::gemm(3, "G3", 20, 2, 8, TensorAxis::M), test::gemm(4, "G4", 6, 5, 8, TensorAxis::M),
      test::gemm(5, "G5", 16, 4, 8, TensorAxis::M)};
  for (DataflowKernel& k : p.kernels)
    k.tiling = TensorAxis::None;
  p.edges = {edge(1, 1, 2), edge(2, 2, 3), edge(3, 3, 4), edge(4, 4, 5)};
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  Mapping m;
  m.shape = {1};
  m.roles = {ParallelRole::Data};
  const CostTerms terms(p, g, sharding_from_file(p), m, {});
  const Fusion f = fuse_kernels(p, g, terms, 0);
  ASSERT_TRUE(f.found);
  // Every split of 5 kernels into contiguous runs: a bit per boundary.
  double best = 1e300;
  for (int cuts = 0; cuts < 16; ++cuts) {
    std::vector<int64_t> config(5, 0);
    for (size_t k = 1; k < 5; ++k)
      config[k] = config[k - 1] + ((cuts >> (k - 1)) & 1);
    double total = 0;
    bool fits = true;
    for (int64_t c = 0; c <= config[4]; ++c) {
      std::vector<size_t> members;
      for (size_t k = 0; k < 5; ++k)
        if (config[k] == c) members.push_back(k);
      const ConfigTiming t = terms.config(members, [&](size_t k) { return config[k] == c; });
      fits = fits && t.fits;
      total += t.ii_ns;
    }
    if (fits) best = std::min(best, total);
  }
  EXPECT_LT(best, 1e300);
  EXPECT_DOUBLE_EQ(f.all_config_ii_ns, best);
}

}  // namespace
}  // namespace orrery
