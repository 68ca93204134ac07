// The SimAI seeds on a million GPUs (`orrery simulate SEED --gpus 1048576`): the event
// simulation's tasks do not change with the GPU count, and neither may the pricing of the
// collectives (network/group_kind.h). Target on the 2-core machine: 0.5 s and
// 100 MB per whole CLI run, in every mode but flow.
#include <benchmark/benchmark.h>

#include "cluster/cluster.h"
#include "formats/workload_reader.h"
#include "training/analytical_simulator.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

const std::string kSeed001 = ORRERY_SOURCE_DIR "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = ORRERY_SOURCE_DIR "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";
constexpr int64_t kMillion = int64_t{1} << 20;

// Reads `path` and simulates it with `Sim` on `cluster` over 2^20 GPUs.
template <typename Sim>
void million(benchmark::State& state, const std::string& path, const std::string& cluster_name) {
  const Cluster cluster = load_cluster(cluster_name);
  SimulationOptions options;
  options.world_size = kMillion;
  double seconds = 0;
  for (auto _ : state) {
    Diagnostics d;
    const Workload w = read_workload_file(path, std::nullopt, d);
    const Result r = Sim().simulate(w, cluster, options, d);
    seconds = r.iteration_time.seconds();
    benchmark::DoNotOptimize(r);
  }
  state.counters["iteration_s"] = seconds;
}

void BM_Seed001MillionGpusAnalytical(benchmark::State& state) {
  million<AnalyticalSimulator>(state, kSeed001, "dgx-a100");
}
BENCHMARK(BM_Seed001MillionGpusAnalytical)->Unit(benchmark::kMillisecond);

void BM_Seed001MillionGpusEvent(benchmark::State& state) {
  million<EventSimulator>(state, kSeed001, "dgx-a100");
}
BENCHMARK(BM_Seed001MillionGpusEvent)->Unit(benchmark::kMillisecond);

void BM_Seed003MillionGpusAnalytical(benchmark::State& state) {
  million<AnalyticalSimulator>(state, kSeed003, "dgx-a100");
}
BENCHMARK(BM_Seed003MillionGpusAnalytical)->Unit(benchmark::kMillisecond);

void BM_Seed003MillionGpusEvent(benchmark::State& state) {
  million<EventSimulator>(state, kSeed003, "dgx-a100");
}
BENCHMARK(BM_Seed003MillionGpusEvent)->Unit(benchmark::kMillisecond);

void BM_Seed003MillionGpusEventH100(benchmark::State& state) {
  million<EventSimulator>(state, kSeed003, "hgx-h100");
}
BENCHMARK(BM_Seed003MillionGpusEventH100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
