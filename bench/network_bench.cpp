// Network benchmarks: the analytical collective model, one collective in flow mode with every
// rank explicit, and a whole iteration in flow mode. Targets (issue 5): a 1 GiB all-reduce over
// 1,024 ranks on a fat-tree in flow mode <= 1 s; seed 001 in flow mode with all 1,024 ranks
// explicit <= 10 s. Flow cost must follow the number of flows and rate changes.
#include <benchmark/benchmark.h>

#include <numeric>

#include "cluster/cluster.h"
#include "formats/workload_reader.h"
#include "network/collective_algorithms.h"
#include "network/collective_flows.h"
#include "network/rank_placement.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

void BM_CollectiveCostAuto(benchmark::State& state) {
  const Cluster c = load_cluster("hgx-h100");
  GroupShape shape;
  shape.ranks = 64;
  shape.span = {8, 8};
  Bytes size = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(collective_cost(c.network, CollectiveKind::AllReduce, size, shape));
    size = size * 2 % (Bytes{1} << 34) + 1;
  }
}
BENCHMARK(BM_CollectiveCostAuto);

void BM_FlowAllReduce(benchmark::State& state) {
  const auto ranks = state.range(0);
  const Cluster c = load_cluster("dgx-a100");
  const RankPlacement placement({{"all", ranks}}, c.network);
  const std::vector<size_t> axis = {0};
  const GroupShape shape = placement.group_shape(axis);
  std::vector<int64_t> members(static_cast<size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  uint64_t flows = 0;
  for (auto _ : state) {
    const auto run = run_collective_flows(c.network, CollectiveKind::AllReduce, kGiB, members,
                                          shape, Algorithm::Ring);
    flows = run.flows;
    benchmark::DoNotOptimize(run);
  }
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_FlowAllReduce)->Arg(64)->Arg(1024)->Unit(benchmark::kMillisecond);

void BM_FlowSeed001(benchmark::State& state) {
  Diagnostics d;
  const Workload w = read_workload_file(
      ORRERY_SOURCE_DIR "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt", std::nullopt, d);
  const Cluster c = load_cluster("dgx-a100");
  int64_t flows = 0;
  for (auto _ : state) {
    const Result r = FlowSimulator().simulate(w, c, {}, d);
    flows = r.flows;
    benchmark::DoNotOptimize(r);
  }
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_FlowSeed001)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace orrery
