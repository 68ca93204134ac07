#include "dataflow/sharding_search.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "formats/dfmodel_reader.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

const std::string kSeed = ORRERY_SOURCE_DIR "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

DataflowProblem seed_without_sharding() {
  std::ifstream in(kSeed);
  std::stringstream s;
  s << in.rdbuf();
  Diagnostics d;
  DataflowProblem p = read_dfmodel(kSeed, s.str(), d);
  for (DataflowKernel& k : p.kernels) {
    k.sharding.reset();
    if (k.collective == DataflowCollective::AllReduce) k.collective = DataflowCollective::None;
  }
  return p;
}

TEST(ShardingSearch, GptLayerOptimumIsFourActivationAllReduces) {
  DataflowProblem p = seed_without_sharding();
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  const ShardingPlan plan = choose_sharding(p, g, 0);
  // DFModel's stage-1 objective for this graph (its stage-1 MILP, arXiv:2412.16432): 4 x
  // 104,857,600 bytes.
  EXPECT_EQ(plan.communicated_bytes, 4 * 104857600.0);
  EXPECT_TRUE(plan.chosen);
  EXPECT_TRUE(plan.proven_optimal);

  std::map<std::string, size_t> index;
  for (size_t k = 0; k < p.kernels.size(); ++k)
    index[p.kernels[k].name] = k;
  const auto axis = [&](const std::string& name) { return plan.axis[index.at(name)]; };
  const auto collective = [&](const std::string& name) { return plan.collective[index.at(name)]; };
  // The rules: heads (outer > 1) split on outer; kernels owning a weight are split; a K split
  // brings an all-reduce; the gradient all-reduce stays.
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const DataflowKernel& kernel = p.kernels[k];
    if (kernel.outer > 1) {
      EXPECT_EQ(plan.axis[k], TensorAxis::Outer) << kernel.name;
    }
    if (kernel.variant == KernelVariant::GemmInputWeight) {
      EXPECT_NE(plan.axis[k], TensorAxis::None) << kernel.name;
    }
    EXPECT_EQ(plan.collective[k] == DataflowCollective::AllReduce, plan.axis[k] == TensorAxis::K)
        << kernel.name;
    EXPECT_NE(plan.axis[k], kernel.tiling) << kernel.name;
  }
  // Megatron's plan where the optimum is unique: row-parallel projection and FFN1 (K split +
  // all-reduce), column-parallel FFN0 (M).
  EXPECT_EQ(axis("PROJ_GEMM"), TensorAxis::K);
  EXPECT_EQ(axis("FFN1"), TensorAxis::K);
  EXPECT_EQ(axis("FFN0"), TensorAxis::M);
  EXPECT_EQ(axis("GeLU"), TensorAxis::M);
  EXPECT_EQ(axis("FFN0_bwd"), TensorAxis::K);
  EXPECT_EQ(collective("FFN1_bwd_weight_update"), DataflowCollective::AllReducePeriodic);
}

TEST(ShardingSearch, KeepsTheFilesShardingWhereGiven) {
  DataflowProblem p = seed_without_sharding();
  const auto at = [&](const std::string& name) -> DataflowKernel& {
    for (DataflowKernel& k : p.kernels)
      if (k.name == name) return k;
    throw std::logic_error(name);
  };
  at("FFN0").sharding = TensorAxis::K;  // forces an all-reduce of its 419,430,400-byte output
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  const ShardingPlan plan = choose_sharding(p, g, 0);
  size_t ffn0 = 0;
  while (p.kernels[ffn0].name != "FFN0")
    ++ffn0;
  EXPECT_EQ(plan.axis[ffn0], TensorAxis::K);
  EXPECT_GT(plan.communicated_bytes, 4 * 104857600.0);
}

TEST(ShardingSearch, ReLayoutCostsOneTensorWhenUnavoidable) {
  // a (weight GEMM, 64 x 8 x 4, forced M split -> rows split) feeds b (weight GEMM 8 x 64 x 4,
  // forced N split -> needs its input split on columns): an all-to-all of a's 512-byte output.
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 2, 10, ParallelRole::Tensor}});
  p.kernels = {test::gemm(1, "a", 64, 8, 4, TensorAxis::M),
               test::gemm(2, "b", 8, 64, 4, TensorAxis::N)};
  p.kernels[1].tiling = TensorAxis::None;
  p.edges = {test::edge(1, 1, 2)};
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  const ShardingPlan plan = choose_sharding(p, g, 0);
  EXPECT_EQ(plan.communicated_bytes, 64 * 4 * 2);
  EXPECT_EQ(plan.edge_collective[0], DataflowCollective::AllToAll);
  // Left free, b splits K (its input arrives split on rows, as a K split needs) and all-reduces
  // its own 64-byte output instead; M would need an all-gather, N an all-to-all of 512 bytes.
  p.kernels[1].sharding.reset();
  const ShardingPlan free = choose_sharding(p, g, 0);
  EXPECT_EQ(free.axis[1], TensorAxis::K);
  EXPECT_EQ(free.communicated_bytes, 8 * 4 * 2);
  EXPECT_EQ(free.edge_collective[0], DataflowCollective::None);
}

}  // namespace
}  // namespace orrery
