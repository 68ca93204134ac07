// Whole-run benchmarks on the bundled seeds: read, SimAI-exact analytical, Orrery analytical and
// event mode. Targets on a 2-core machine: SimAI-exact <= 5 ms and event <= 50 ms for
// seed 001 (1024 GPUs, 557 records).
#include <benchmark/benchmark.h>

#include "cluster/cluster.h"
#include "compat/simai_analytical.h"
#include "formats/workload_reader.h"
#include "training/analytical_simulator.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

const std::string kSeed001 = ORRERY_SOURCE_DIR "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = ORRERY_SOURCE_DIR "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";

Workload load(const std::string& path) {
  Diagnostics d;
  return read_workload_file(path, std::nullopt, d);
}

void BM_ReadSeed001(benchmark::State& state) {
  for (auto _ : state)
    benchmark::DoNotOptimize(load(kSeed001));
}
BENCHMARK(BM_ReadSeed001)->Unit(benchmark::kMicrosecond);

void BM_SimaiCompatSeed001(benchmark::State& state) {
  for (auto _ : state) {
    const Workload w = load(kSeed001);
    simai::Options o;
    o.gpus = w.parallelism.world_size;
    Diagnostics d;
    benchmark::DoNotOptimize(simai::run_analytical(w, o, d));
  }
}
BENCHMARK(BM_SimaiCompatSeed001)->Unit(benchmark::kMicrosecond);

template <typename Sim>
void simulate_seed(benchmark::State& state, const std::string& path) {
  const Cluster cluster = load_cluster("dgx-a100");
  int64_t tasks = 0;
  for (auto _ : state) {
    const Workload w = load(path);
    Diagnostics d;
    const Result r = Sim().simulate(w, cluster, {}, d);
    tasks = r.simulated_tasks;
    benchmark::DoNotOptimize(r);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
}

void BM_EventSeed001(benchmark::State& state) {
  simulate_seed<EventSimulator>(state, kSeed001);
}
BENCHMARK(BM_EventSeed001)->Unit(benchmark::kMillisecond);

void BM_EventSeed003(benchmark::State& state) {
  simulate_seed<EventSimulator>(state, kSeed003);
}
BENCHMARK(BM_EventSeed003)->Unit(benchmark::kMillisecond);

void BM_AnalyticalSeed001(benchmark::State& state) {
  simulate_seed<AnalyticalSimulator>(state, kSeed001);
}
BENCHMARK(BM_AnalyticalSeed001)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace orrery
