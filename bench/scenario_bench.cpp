// Predictions from a model description, in-process, as design-space search makes them: generating
// the Megatron-LM iteration, pricing its kernels, and the event simulation (scenario/predict).
#include <benchmark/benchmark.h>

#include "cluster/cluster.h"
#include "core/allocator_tuning.h"
#include "models/model_file.h"
#include "scenario/scenario.h"

namespace orrery {
namespace {

// The benchmarks run predictions back to back, as a design-space sweep does: the allocator keeps
// freed memory for the next one (core/allocator_tuning.h), as the orrery binary sets it too.
const bool kAllocatorTuned = [] {
  keep_freed_memory_for_reuse();
  return true;
}();

Scenario model_scenario(const std::string& model, const std::string& cluster, int64_t gpus,
                        int64_t pp, int64_t gbs, int64_t seq) {
  Scenario s;
  s.cluster = load_cluster(cluster);
  ModelScenario m;
  m.spec = load_model(model);
  m.plan.tp = 8;
  m.plan.pp = pp;
  m.plan.seq = seq;
  m.global_batch = gbs;
  m.gpus = gpus;
  s.model = m;
  return s;
}

// GPT-3 175B on 1,536 A100s: TP 8, PP 16, VPP 1, GBS 1,536, mbs 1, seq 2048 (128 micro-batches).
void BM_ModelGpt3On1536A100(benchmark::State& state) {
  const Scenario s = model_scenario("gpt3-175b", "dgx-a100", 1536, 16, 1536, 2048);
  for (auto _ : state)
    benchmark::DoNotOptimize(predict(s));
}
BENCHMARK(BM_ModelGpt3On1536A100)->Unit(benchmark::kMillisecond);

// Llama-3.1-405B on 16,384 H100s: TP 8, PP 16, CP 1, VPP 1, seq 8192, GBS 2,048, mbs 1.
void BM_ModelLlama405bOn16384H100(benchmark::State& state) {
  const Scenario s = model_scenario("llama3.1-405b", "hgx-h100", 16384, 16, 2048, 8192);
  for (auto _ : state)
    benchmark::DoNotOptimize(predict(s));
}
BENCHMARK(BM_ModelLlama405bOn16384H100)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
