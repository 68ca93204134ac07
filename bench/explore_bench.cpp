// Design-space search speed (docs/explore.md, "Speed"): one plan of GPT-3 175B on 1,024 A100s
// evaluated in analytical mode through scenario/ on its own (every run prices the network
// afresh), the default space's surviving plans evaluated as a one-thread search does (sharing
// the network's pricing between plans of one layout), and the enumeration and pruning of the
// whole default space. items_per_second is plans per second on one core.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "core/allocator_tuning.h"
#include "explore/point_evaluation.h"
#include "explore/search.h"
#include "models/model_file.h"

namespace orrery::explore {
namespace {

const bool kAllocatorTuned = [] {
  keep_freed_memory_for_reuse();
  return true;
}();

SearchRequest gpt3_on_1024() {
  SearchRequest r;
  r.spec = load_model("gpt3-175b");
  r.gbs = 1536;
  r.base.seq = 2048;
  ClusterAxes clusters;
  clusters.clusters = {"dgx-a100"};
  clusters.gpus = {1024};
  clusters.devices = {""};
  clusters.gpus_per_server = {std::nullopt};
  clusters.nic_busbw = clusters.nvlink_busbw = {std::nullopt};
  r.clusters = cluster_choices(clusters);
  return r;
}

// TP 8, PP 16, VPP 2, dp 8, mbs 1 (192 micro-batches), selective recompute, sequence
// parallelism, distributed optimizer.
void BM_ExploreAnalyticalPlanGpt3On1024(benchmark::State& state) {
  const SearchRequest r = gpt3_on_1024();
  PlanPoint point;
  point.plan = r.base;
  point.plan.tp = 8;
  point.plan.pp = 16;
  point.plan.vpp = 2;
  point.plan.dp = 8;
  point.plan.micro_batches = 192;
  point.plan.recompute = RecomputeMode::Selective;
  point.plan.sequence_parallel = true;
  point.plan.distributed_optimizer = true;
  point.plan.zero = 1;
  for (auto _ : state)
    benchmark::DoNotOptimize(
        evaluate_point(r.spec, r.gbs, point, r.clusters[0], SimulationMode::Analytical));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExploreAnalyticalPlanGpt3On1024)->Unit(benchmark::kMicrosecond);

// The plans of the default space that survive pruning, each evaluated in analytical mode as a
// one-thread search does: a fresh network-pricing cache per search, shared by its plans.
void BM_ExploreAnalyticalSpaceGpt3On1024(benchmark::State& state) {
  const SearchRequest r = gpt3_on_1024();
  SearchCounts counts;
  const std::vector<PlanPoint> survivors = survivors_of(r, counts);
  int64_t plans = 0;
  for (auto _ : state) {
    const auto pricing = std::make_shared<GroupPricingCache>();
    for (const PlanPoint& point : survivors)
      benchmark::DoNotOptimize(
          evaluate_point(r.spec, r.gbs, point, r.clusters[0], SimulationMode::Analytical, pricing));
    plans += static_cast<int64_t>(survivors.size());
  }
  state.SetItemsProcessed(plans);
}
BENCHMARK(BM_ExploreAnalyticalSpaceGpt3On1024)->Unit(benchmark::kMillisecond);

// Enumerating and pruning the default space (every rule, the memory model for each plan).
void BM_ExplorePruneDefaultSpaceGpt3On1024(benchmark::State& state) {
  const SearchRequest r = gpt3_on_1024();
  PruneContext context;
  context.spec = &r.spec;
  context.gbs = r.gbs;
  int64_t plans = 0;
  for (auto _ : state)
    for_each_point(r.spec, r.base, r.gbs, r.axes, r.clusters, [&](const PlanPoint& point) {
      ++plans;
      benchmark::DoNotOptimize(prune(point, r.clusters[0], context));
    });
  state.SetItemsProcessed(plans);
}
BENCHMARK(BM_ExplorePruneDefaultSpaceGpt3On1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::explore
