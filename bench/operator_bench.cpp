// Operator-level workloads end to end: read (file included), price the compute on a device and
// simulate in event mode. Targets: seed 000 (2,872 nodes) <= 100 ms; a synthetic
// torchviz graph of 1,000,000 nodes <= 10 s. Also the NeuSight seed at GPT-2 Large depth and the
// kernel cost model's hot path.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cluster/cluster.h"
#include "formats/workload_reader.h"
#include "hardware/device_file.h"
#include "hardware/op_cost.h"
#include "training/backward_estimate.h"
#include "training/compute_pricing.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

const std::string kSeed000 = ORRERY_SOURCE_DIR "/examples/torchviz/moe_qformer_b4_s45.dot";
const std::string kSeed002 = ORRERY_SOURCE_DIR "/examples/neusight/gpt2_large_block_b16_s1024.txt";

// Reads, estimates a missing backward, prices and simulates one iteration on `dp` ranks of the
// cluster; returns the tasks.
int64_t run(const std::string& path, const ReaderOptions& options, const Cluster& cluster,
            int64_t dp) {
  Diagnostics d;
  Workload w = read_workload_file(path, std::nullopt, options, d);
  estimate_backward(w, kDefaultBackwardRatio, d);  // a NeuSight table's, as scenario/ does
  if (has_compute_demands(w)) price_compute(w, compute_device(cluster, "", d));
  SimulationOptions o;
  o.world_size = dp;
  const Result r = EventSimulator().simulate(w, cluster, o, d);
  benchmark::DoNotOptimize(r);
  return r.simulated_tasks;
}

void BM_TorchvizSeed000EndToEnd(benchmark::State& state) {
  const Cluster cluster = load_cluster("dgx-a100");
  int64_t tasks = 0;
  for (auto _ : state)
    tasks = run(kSeed000, {}, cluster, 8);
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_TorchvizSeed000EndToEnd)->Unit(benchmark::kMillisecond);

// A torchviz graph of residual MLP blocks (hidden 256, FFN 1024) in make_dot's style, about
// `nodes` nodes: per block 6 parameters, 6 AccumulateGrad, 2 T, 4 View, 2 Addmm, Gelu,
// NativeDropout, Add and NativeLayerNorm.
std::string synthetic_graph(int64_t nodes) {
  std::string dot = "digraph {\n";
  int64_t next = 0;
  const auto node = [&](const std::string& label, const char* fill = nullptr) {
    const std::string id = std::to_string(140000000000000 + 16 * next++);
    dot +=
        id + " [label=\"" + label + "\"" + (fill ? std::string(" fillcolor=") + fill : "") + "]\n";
    return id;
  };
  const auto edge = [&](const std::string& from, const std::string& to) {
    dot += from + " -> " + to + "\n";
  };
  const auto parameter = [&](const std::string& name, const std::string& shape) {
    const std::string p = node(name + " (" + shape + ")", "lightblue");
    const std::string grad = node("AccumulateGrad");
    edge(p, grad);
    return grad;
  };
  const auto op = [&](const std::string& label, std::initializer_list<std::string> inputs) {
    const std::string id = node(label);
    for (const std::string& in : inputs)
      edge(in, id);
    return id;
  };
  std::string x = op("EmbeddingBackward0", {parameter("wte.weight", "1000, 256")});
  for (int64_t b = 0; next + 24 < nodes; ++b) {
    const std::string p = "blocks." + std::to_string(b) + ".";
    const std::string w1 = op("TBackward0", {parameter(p + "fc1.weight", "1024, 256")});
    const std::string mm1 =
        op("AddmmBackward0", {parameter(p + "fc1.bias", "1024"), op("ViewBackward0", {x}), w1});
    const std::string gelu = op("GeluBackward0", {op("ViewBackward0", {mm1})});
    const std::string w2 = op("TBackward0", {parameter(p + "fc2.weight", "256, 1024")});
    const std::string mm2 =
        op("AddmmBackward0", {parameter(p + "fc2.bias", "256"), op("ViewBackward0", {gelu}), w2});
    const std::string drop = op("NativeDropoutBackward0", {op("ViewBackward0", {mm2})});
    x = op("NativeLayerNormBackward0",
           {op("AddBackward0", {drop, x}), parameter(p + "ln.weight", "256"),
            parameter(p + "ln.bias", "256")});
  }
  edge(x, node(" (8, 128, 256)", "darkolivegreen1"));
  return dot + "}\n";
}

void BM_TorchvizSynthetic(benchmark::State& state) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "orrery_bench_synthetic.dot";
  std::ofstream(path) << synthetic_graph(state.range(0));
  const Cluster cluster = load_cluster("hgx-h100");
  int64_t tasks = 0;
  for (auto _ : state)
    tasks = run(path.string(), {}, cluster, 8);
  std::filesystem::remove(path);
  state.counters["nodes"] = static_cast<double>(state.range(0));
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_TorchvizSynthetic)
    ->Arg(100'000)
    ->Arg(1'000'000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

void BM_NeusightSeed002Gpt2Large(benchmark::State& state) {
  const Cluster cluster = load_cluster("dgx-a100");
  ReaderOptions o;
  o.layers = 36;
  int64_t tasks = 0;
  for (auto _ : state)
    tasks = run(kSeed002, o, cluster, 8);
  state.counters["tasks"] = static_cast<double>(tasks);
}
BENCHMARK(BM_NeusightSeed002Gpt2Large)->Unit(benchmark::kMillisecond);

void BM_KernelTimeGemm(benchmark::State& state) {
  const Device h100 = load_device("H100");
  ComputeDemand d;
  d.kind = KernelClass::Gemm;
  d.dtype = DType::BF16;
  d.gemm = {1, 4096, 12288, 4096};
  d.flop = 2.0 * 4096 * 12288 * 4096;
  d.bytes = (4096u * 4096 + 4096u * 12288 + 4096u * 12288) * 2;
  for (auto _ : state)
    benchmark::DoNotOptimize(kernel_time(h100, d));
}
BENCHMARK(BM_KernelTimeGemm);

}  // namespace
}  // namespace orrery
