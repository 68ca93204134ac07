// Network benchmarks: the analytical collective model, one collective in flow mode with every
// rank explicit, and a whole iteration in flow mode. Targets: a 1 GiB all-reduce over
// 1,024 ranks on a fat-tree in flow mode <= 1 s; seed 001 in flow mode with all 1,024 ranks
// explicit <= 10 s. Flow cost must follow the number of flows and rate changes.
#include <benchmark/benchmark.h>

#include <numeric>

#include "cluster/cluster.h"
#include "formats/workload_reader.h"
#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

// A built model of the first `gpus` GPUs of hgx-h100, as one group, prices `kind` at every size
// from its cached step profiles.
void price_every_size(benchmark::State& state, int64_t gpus, CollectiveKind kind) {
  const Cluster c = load_cluster("hgx-h100");
  const LinkGraph links(c.network, gpus);
  std::vector<int64_t> members(static_cast<size_t>(gpus));
  std::iota(members.begin(), members.end(), 0);
  const CollectiveModel model(links, {members});
  Bytes size = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(model.cost(kind, size));
    size = size * 2 % (Bytes{1} << 34) + 1;
  }
}

// Every algorithm and protocol, 64 GPUs on 8 servers.
void BM_CollectiveCostAuto(benchmark::State& state) {
  price_every_size(state, 64, CollectiveKind::AllReduce);
}
BENCHMARK(BM_CollectiveCostAuto);

// An all-to-all inside one server (NCCL's point-to-point path).
void BM_CollectiveCostAllToAll(benchmark::State& state) {
  price_every_size(state, 8, CollectiveKind::AllToAll);
}
BENCHMARK(BM_CollectiveCostAllToAll);

// A sendrecv across 8 servers of 8 GPUs (NCCL's point-to-point path with the network's rules:
// its channels, protocol and the proxy's chunks for every size).
void BM_CollectiveCostSendRecvAcrossServers(benchmark::State& state) {
  price_every_size(state, 64, CollectiveKind::SendRecv);
}
BENCHMARK(BM_CollectiveCostSendRecvAcrossServers);

// Building the model of all data-parallel groups of a 1,024-GPU job (TP 8 inside servers, DP 128
// across them) and pricing one all-reduce: what a design sweep pays per configuration.
void BM_CollectiveModelBuild(benchmark::State& state) {
  const Cluster c = load_cluster("dgx-a100");
  const RankPlacement placement({{"tp", 8}, {"dp", 128}}, c.network);
  const std::vector<size_t> dp = {1};
  const std::vector<std::vector<int64_t>> groups = placement.groups(dp);
  const LinkGraph links(c.network, 1024);
  for (auto _ : state) {
    const CollectiveModel model(links, groups);
    benchmark::DoNotOptimize(model.cost(CollectiveKind::AllReduce, kGiB));
  }
}
BENCHMARK(BM_CollectiveModelBuild)->Unit(benchmark::kMillisecond);

void BM_FlowAllReduce(benchmark::State& state) {
  const auto ranks = state.range(0);
  const Cluster c = load_cluster("dgx-a100");
  const RankPlacement placement({{"all", ranks}}, c.network);
  const std::vector<size_t> axis = {0};
  const LinkGraph links(c.network, ranks);
  const CollectiveModel model(links, {placement.group_members(axis, 0)});
  uint64_t flows = 0;
  for (auto _ : state) {
    const auto run = run_collective_flows(model, CollectiveKind::AllReduce, kGiB, Algorithm::Ring);
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

// Seed 003 (MoE) declared on 2,048 H100s: its data-parallel rings of many groups cross the same
// leaf-spine links at once, so components of a hundred and more flows are re-solved each time
// one of them ends (the fair-share solver's contended path; seed 001's flows run mostly alone).
void BM_FlowSeed003Contended(benchmark::State& state) {
  Diagnostics d;
  const Workload w = read_workload_file(
      ORRERY_SOURCE_DIR "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt", std::nullopt, d);
  const Cluster c = load_cluster("hgx-h100");
  SimulationOptions options;
  options.world_size = 2048;
  int64_t flows = 0;
  for (auto _ : state) {
    const Result r = FlowSimulator().simulate(w, c, options, d);
    flows = r.flows;
    benchmark::DoNotOptimize(r);
  }
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_FlowSeed003Contended)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace orrery
