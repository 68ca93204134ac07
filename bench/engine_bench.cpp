// The discrete-event engine alone: a pipeline-like graph of `n` tasks on 16 streams. Its cost must
// grow with the number of tasks and dependencies, not with the simulated durations: the second
// argument scales every duration by 10^k and should not change the time per task.
#include <benchmark/benchmark.h>

#include "engine/task_graph.h"

namespace orrery::engine {
namespace {

void BM_EngineChainedStreams(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  int64_t scale = 1;
  for (int64_t k = 0; k < state.range(1); ++k)
    scale *= 10;
  TaskGraph g;
  std::vector<StreamId> streams;
  for (int s = 0; s < 16; ++s)
    streams.push_back(g.add_stream());
  for (uint32_t t = 0; t < n; ++t) {
    const TaskId id =
        g.add_task(streams[t % 16], Time::from_ns(static_cast<int64_t>(1 + t % 7) * scale));
    if (t >= 16) g.add_dependency(id - 15, id);  // the previous round, one stream over
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(simulate(g));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n);
}
BENCHMARK(BM_EngineChainedStreams)
    ->Args({10'000, 0})
    ->Args({100'000, 0})
    ->Args({100'000, 6})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery::engine
