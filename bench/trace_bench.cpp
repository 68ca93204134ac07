// The cost of recording the timeline (--trace, --report) and of writing the trace, against the
// same runs without it: a run that does not ask must not slow down. Seed 001 (1,024
// GPUs) in event mode, seed 003 (128 GPUs) in flow mode, on dgx-a100.
#include <benchmark/benchmark.h>

#include <sstream>

#include "cluster/cluster.h"
#include "formats/workload_reader.h"
#include "report/trace_writer.h"
#include "training/event_simulator.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

const std::string kSeed001 = ORRERY_SOURCE_DIR "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = ORRERY_SOURCE_DIR "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";

// Simulates `path` (read once) with or without recording; `write`: also writes the trace.
template <typename Sim>
void run(benchmark::State& state, const std::string& path, bool record, bool write) {
  Diagnostics d;
  const Workload w = read_workload_file(path, std::nullopt, d);
  const Cluster cluster = load_cluster("dgx-a100");
  SimulationOptions options;
  options.record_timeline = record;
  size_t bytes = 0;
  for (auto _ : state) {
    Diagnostics run_diagnostics;
    std::vector<Result> r = {Sim().simulate(w, cluster, options, run_diagnostics)};
    if (write) {
      std::ostringstream out;
      write_trace(out, r);
      bytes = out.str().size();
    }
    benchmark::DoNotOptimize(r);
  }
  if (write) state.counters["trace_bytes"] = static_cast<double>(bytes);
}

void BM_EventSeed001Plain(benchmark::State& s) {
  run<EventSimulator>(s, kSeed001, false, false);
}
void BM_EventSeed001Recorded(benchmark::State& s) {
  run<EventSimulator>(s, kSeed001, true, false);
}
void BM_EventSeed001Traced(benchmark::State& s) {
  run<EventSimulator>(s, kSeed001, true, true);
}
void BM_FlowSeed003Plain(benchmark::State& s) {
  run<FlowSimulator>(s, kSeed003, false, false);
}
void BM_FlowSeed003Recorded(benchmark::State& s) {
  run<FlowSimulator>(s, kSeed003, true, false);
}
void BM_FlowSeed003Traced(benchmark::State& s) {
  run<FlowSimulator>(s, kSeed003, true, true);
}
BENCHMARK(BM_EventSeed001Plain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventSeed001Recorded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EventSeed001Traced)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlowSeed003Plain)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlowSeed003Recorded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FlowSeed003Traced)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
