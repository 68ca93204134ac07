#include "training/compute_pricing.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/diagnostics.h"
#include "hardware/device_file.h"
#include "hardware/op_cost.h"

namespace orrery {
namespace {

constexpr const char* kFallbackDevice = "H100-SXM5-80GB";

// Task graphs (Chakra traces): every compute or memory task without a duration, one kernel each.
void price_graph(GraphProgram& graph, const Device& device) {
  constexpr int64_t kMaxTaskPs = int64_t{1} << 56;  // about 20 hours
  for (RankGraph& rank : graph.ranks)
    for (GraphTask& task : rank.tasks) {
      const std::optional<ComputeDemand> demand = compute_demand(task);
      if (task.duration || !demand) continue;
      std::optional<Time> t;
      try {
        t = kernel_time(device, *demand);
      } catch (const std::out_of_range&) {  // beyond Time's range: refused below
      }
      if (!t || t->ps() > kMaxTaskPs)
        throw InputError({rank.source, 0}, "node " + std::to_string(task.node) + " on " +
                                               device.name +
                                               ": expected a kernel under 20 hours, found "
                                               "more; its num_ops or tensor_size is implausible");
      task.duration = *t;
    }
}

}  // namespace

bool has_compute_demands(const Workload& workload) {
  if (workload.graph)
    for (const RankGraph& rank : workload.graph->ranks)
      for (const GraphTask& task : rank.tasks)
        if (!task.duration && task.has_demand) return true;
  for (const Layer& layer : workload.program.layers)
    for (const Phase* phase : {&layer.forward, &layer.input_grad, &layer.weight_grad})
      if (!phase->kernels.empty()) return true;
  return false;
}

Device compute_device(const Cluster& cluster, const std::string& override,
                      Diagnostics& diagnostics) {
  if (!override.empty()) return load_device(override);
  if (cluster.device) return *cluster.device;
  if (!device_preset_text(cluster.gpu).empty()) return load_device(cluster.gpu);
  diagnostics.warn({}, "cluster '" + cluster.name + "' names no known device (gpu: '" +
                           cluster.gpu + "'); pricing compute on the " + kFallbackDevice +
                           " preset (use --device)");
  return load_device(kFallbackDevice);
}

void price_compute(Workload& workload, const Device& device) {
  // The sum stays far inside Time's range (about 106 days), so that the simulators' sums of it
  // and of communication cannot overflow: a workload beyond it is implausible input.
  constexpr int64_t kMaxTotalPs = int64_t{1} << 62;  // about 53 days
  // GEMMs repeat from layer to layer: each distinct one is priced once (tile and split-K search).
  std::vector<std::pair<ComputeDemand, int64_t>> gemms;
  const auto picoseconds = [&](const ComputeDemand& kernel) {
    if (kernel.kind == KernelClass::Gemm)
      for (const auto& [gemm, ps] : gemms)
        if (gemm == kernel) return ps;
    int64_t ps = kMaxTotalPs;
    try {
      ps = kernel_time(device, kernel).ps();
    } catch (const std::out_of_range&) {  // beyond Time's range: caught by the caller
    }
    if (kernel.kind == KernelClass::Gemm) gemms.emplace_back(kernel, ps);
    return ps;
  };
  int64_t total_ps = 0;
  for (Layer& layer : workload.program.layers) {
    for (Phase* phase : {&layer.forward, &layer.input_grad, &layer.weight_grad}) {
      if (phase->kernels.empty()) continue;
      int64_t phase_ps = 0;
      for (const ComputeDemand& kernel : phase->kernels) {
        const int64_t ps = picoseconds(kernel);
        if (__builtin_add_overflow(phase_ps, ps, &phase_ps) ||
            __builtin_add_overflow(total_ps, ps, &total_ps) || total_ps > kMaxTotalPs)
          throw InputError({workload.source, layer.line},
                           "'" + layer.name + "' on " + device.name +
                               ": expected a workload whose compute per iteration stays under "
                               "53 days, found more; its sizes are implausible");
      }
      phase->compute = Time::from_ps(phase_ps);
      if (phase->overlapped) {
        const auto gemm =
            std::find_if(phase->kernels.begin(), phase->kernels.end(),
                         [](const ComputeDemand& k) { return k.kind == KernelClass::Gemm; });
        phase->overlapped->gemm =
            gemm == phase->kernels.end() ? Time::zero() : Time::from_ps(picoseconds(*gemm));
      }
    }
  }
  if (workload.graph) price_graph(*workload.graph, device);
}

}  // namespace orrery
