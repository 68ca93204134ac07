// Chakra execution traces at scale: GPT-3 175B on 1,024 A100s (TP 8, PP 16, GBS 1,024, mbs 1,
// seq 2048: 128 micro-batches) written once as traces of every rank (orrery convert --to chakra),
// then read (streaming, every rank's file) and simulated in event mode (finding the alike ranks
// included: 32 of the 1,024 are simulated; docs/chakra.md).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "cluster/cluster.h"
#include "core/allocator_tuning.h"
#include "formats/chakra_et_reader.h"
#include "formats/chakra_et_writer.h"
#include "models/model_file.h"
#include "scenario/scenario.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

const bool kAllocatorTuned = [] {
  keep_freed_memory_for_reuse();
  return true;
}();

const Cluster& a100() {
  static const Cluster c = load_cluster("dgx-a100");
  return c;
}

// The trace set's directory, written on first use, and its size in bytes.
const std::filesystem::path& gpt3_traces(int64_t* bytes) {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "orrery_bench_chakra_gpt3_1024";
  static const int64_t total = [] {
    Scenario s;
    s.cluster = a100();
    ModelScenario m;
    m.spec = load_model("gpt3-175b");
    m.plan.tp = 8;
    m.plan.pp = 16;
    m.plan.seq = 2048;
    m.global_batch = 1024;
    m.gpus = 1024;
    s.model = m;
    Diagnostics d;
    std::filesystem::remove_all(dir);
    write_chakra_traces(export_graph(s, d).graph, dir.string(), "gpt3");
    int64_t sum = 0;
    for (const auto& f : std::filesystem::directory_iterator(dir))
      sum += static_cast<int64_t>(f.file_size());
    return sum;
  }();
  *bytes = total;
  return dir;
}

void BM_ChakraReadGpt3On1024(benchmark::State& state) {
  int64_t bytes = 0;
  const std::string dir = gpt3_traces(&bytes).string();
  for (auto _ : state) {
    Diagnostics d;
    benchmark::DoNotOptimize(read_chakra_traces(dir, {}, d));
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_ChakraReadGpt3On1024)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ChakraSimulateGpt3On1024(benchmark::State& state) {
  int64_t bytes = 0;
  Diagnostics d;
  const Workload w = read_chakra_traces(gpt3_traces(&bytes).string(), {}, d);
  int64_t tasks = 0;
  for (auto _ : state) {
    const Result r = EventSimulator().simulate(w, a100(), {}, d);
    tasks = r.simulated_tasks;
  }
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_ChakraSimulateGpt3On1024)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace orrery
