#include "training/compute_pricing.h"

#include "hardware/device_file.h"
#include "hardware/op_cost.h"

namespace orrery {
namespace {

constexpr const char* kFallbackDevice = "H100-SXM5-80GB";

}  // namespace

bool has_compute_demands(const Workload& workload) {
  for (const Layer& layer : workload.program.layers)
    for (const Phase* phase : {&layer.forward, &layer.input_grad, &layer.weight_grad})
      if (!phase->kernels.empty()) return true;
  return false;
}

Device compute_device(const Cluster& cluster, const std::string& override,
                      Diagnostics& diagnostics) {
  if (!override.empty()) return load_device(override);
  if (!device_preset_text(cluster.gpu).empty()) return load_device(cluster.gpu);
  diagnostics.warn({}, "cluster '" + cluster.name + "' names no known device (gpu: '" +
                           cluster.gpu + "'); pricing compute on the " + kFallbackDevice +
                           " preset (use --device)");
  return load_device(kFallbackDevice);
}

void price_compute(Workload& workload, const Device& device) {
  for (Layer& layer : workload.program.layers) {
    for (Phase* phase : {&layer.forward, &layer.input_grad, &layer.weight_grad}) {
      if (phase->kernels.empty()) continue;
      Time total;
      for (const ComputeDemand& kernel : phase->kernels)
        total += kernel_time(device, kernel);
      phase->compute = total;
    }
  }
}

}  // namespace orrery
