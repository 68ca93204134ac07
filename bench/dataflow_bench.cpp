// DFModel problems (seed 004, GPT-1T on 4096 chips). Targets: the seed evaluates in
// <= 10 ms; a full search over every 2-D factorisation of 4096 chips, every TP/PP/DP assignment,
// micro-batch and tile size, with both execution styles, in <= 10 s.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "dataflow/dataflow_graph.h"
#include "dataflow/fusion.h"
#include "dataflow/mapping_search.h"
#include "dataflow/problem_scope.h"
#include "dataflow/sharding_search.h"
#include "formats/dfmodel_reader.h"

namespace orrery {
namespace {

const std::string kSeed = ORRERY_SOURCE_DIR "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

std::string seed_text() {
  std::ifstream in(kSeed);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Read, validate and evaluate the seed as `orrery simulate` does.
void BM_DfmodelSeedReadAndEvaluate(benchmark::State& state) {
  const std::string text = seed_text();
  for (auto _ : state) {
    Diagnostics d;
    DataflowProblem p = read_dfmodel(kSeed, text, d);
    check_modelled(p, d);
    const DataflowGraph g = DataflowGraph::build(p, d);
    benchmark::DoNotOptimize(solve_dataflow(p, g, {}, d));
  }
}
BENCHMARK(BM_DfmodelSeedReadAndEvaluate)->Unit(benchmark::kMillisecond);

// The seed with everything DFModel may choose left free: shape, TP/PP/DP, micro-batch and tile
// sizes, sharding (stage 1), and both execution styles.
struct FreeSeed {
  DataflowProblem problem;
  DataflowGraph graph;
  FreeSeed() {
    Diagnostics d;
    problem = read_dfmodel(kSeed, seed_text(), d);
    for (TopologyDimension& dim : problem.system.dimensions) {
      dim.size = 0;
      dim.role = ParallelRole::Unassigned;
    }
    problem.run.llm->micro_batch = 0;
    for (DataflowKernel& k : problem.kernels) {
      k.shard_outer_m = k.shard_k = k.shard_n = 0;
      k.sharding.reset();
      if (k.collective == DataflowCollective::AllReduce) k.collective = DataflowCollective::None;
    }
    graph = DataflowGraph::build(problem, d);
  }
};

// Wall time of the whole search (the CPU column is every thread's CPU time: on a shared machine
// wall time alone says little about the search's own cost).
// Both execution styles searched on `state.range(0)` threads (0: all CPUs).
void search_both_styles(benchmark::State& state, const FreeSeed& seed) {
  SearchOptions options;
  options.styles = {ExecutionStyle::KernelByKernel, ExecutionStyle::Dataflow};
  options.threads = state.range(0);
  int64_t evaluated = 0;
  for (auto _ : state) {
    Diagnostics d;
    const SearchOutcome out = solve_dataflow(seed.problem, seed.graph, options, d);
    evaluated = out.evaluated;
    benchmark::DoNotOptimize(out);
  }
  state.counters["candidates"] = static_cast<double>(evaluated);
}

void BM_DfmodelFullSearch4096Chips(benchmark::State& state) {
  search_both_styles(state, FreeSeed());
}
BENCHMARK(BM_DfmodelFullSearch4096Chips)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("threads")
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

// The same search in cycle mode (compute_util 0): every fused configuration splits the chip's
// cores among its kernels, so the DATAFLOW half costs far more per candidate.
void BM_DfmodelFullSearch4096ChipsCycleMode(benchmark::State& state) {
  FreeSeed seed;
  seed.problem.run.compute_util = 0;
  search_both_styles(state, seed);
}
BENCHMARK(BM_DfmodelFullSearch4096ChipsCycleMode)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("threads")
    ->Iterations(1)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMillisecond);

void BM_DfmodelShardingMilp(benchmark::State& state) {
  const FreeSeed seed;
  for (auto _ : state)
    benchmark::DoNotOptimize(choose_sharding(seed.problem, seed.graph, 0));
}
BENCHMARK(BM_DfmodelShardingMilp)->Unit(benchmark::kMillisecond);

// One DATAFLOW fusion of the 41 kernels (the inner step of the search).
void BM_DfmodelFusion(benchmark::State& state) {
  Diagnostics d;
  DataflowProblem p = read_dfmodel(kSeed, seed_text(), d);
  const DataflowGraph g = DataflowGraph::build(p, d);
  Mapping m;
  m.shape = {128, 32};
  m.roles = {ParallelRole::Pipeline, ParallelRole::Data};
  m.pp = 128;
  m.dp = 32;
  const ShardingPlan plan = sharding_from_file(p);
  for (auto _ : state) {
    const CostTerms terms(p, g, plan, m, {});
    benchmark::DoNotOptimize(fuse_kernels(p, g, terms, 0));
  }
}
BENCHMARK(BM_DfmodelFusion)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace orrery
