#include "scenario/training_metrics.h"

namespace orrery {
namespace {

// The error of each kind of prediction measured in docs/validation.md, by device family.
std::string error_band(const Device& device, SimulationMode mode, bool moe) {
  const std::string name = device.name;
  const bool a100 = name.rfind("A100", 0) == 0;
  const bool h100 = name.rfind("H100", 0) == 0;
  if (mode != SimulationMode::Event)
    return "not validated in " + std::string(to_string(mode)) +
           " mode (docs/validation.md validates the event mode)";
  if (moe) return "not validated: no MoE run is in docs/validation.md (dense models only)";
  if (a100)
    return "A100, event mode: 3.8 % mean error on Megatron's Table 5 runs, every one too fast "
           "(docs/validation.md)";
  if (h100)
    return "H100, event mode: 5.6 % mean error on NeMo 24.07 FP8 runs, 8 of 12 too fast (by up "
           "to 12 %), 4 too slow (by up to 8 %) (docs/validation.md)";
  return "not validated on " + name + " (docs/validation.md covers A100 and H100)";
}

}  // namespace

TrainingFigures training_figures(const TrainingWorkload& workload, const ModelScenario& model,
                                 const Device& device, const Cluster& cluster, const Result& result,
                                 SimulationMode mode) {
  TrainingFigures f;
  const double seconds = result.iteration_time.seconds();
  const auto gpus = static_cast<double>(result.parallelism.world_size);
  const DType dtype = model.plan.dtype;
  f.dtype = std::string(to_string(dtype));
  const auto peak = device.matrix.find(dtype);
  f.peak_tflops_per_gpu =
      peak == device.matrix.end() ? 0 : peak->second.in_flop_per_second() / 1e12;
  f.tokens_per_iteration = workload.tokens;
  f.error_band = error_band(device, mode, model.spec.moe.has_value());
  f.slowest_gpu_pace = device.pace;
  f.rate_spread = device.rate_spread;
  f.gpus = result.parallelism.world_size;
  if (seconds <= 0) return f;
  f.tokens_per_s = static_cast<double>(workload.tokens) / seconds;
  f.model_tflops_per_gpu = workload.model_flop / (seconds * gpus) / 1e12;
  f.hardware_tflops_per_gpu = workload.hardware_flop_per_gpu / seconds / 1e12;
  if (f.peak_tflops_per_gpu > 0) {
    f.mfu = f.model_tflops_per_gpu / f.peak_tflops_per_gpu;
    f.hfu = f.hardware_tflops_per_gpu / f.peak_tflops_per_gpu;
  }
  if (model.train_tokens) {
    f.train_tokens = *model.train_tokens;
    f.time_to_train_s = *model.train_tokens / f.tokens_per_s;
    f.gpu_hours = *f.time_to_train_s * gpus / 3600;
    if (cluster.price_per_gpu_hour) f.cost_usd = *f.gpu_hours * *cluster.price_per_gpu_hour;
    if (device.tdp_watts > 0 && device.idle_watts >= 0) {
      const double busy = result.breakdown.compute.seconds() / seconds;
      const double watts = device.idle_watts + busy * (device.tdp_watts - device.idle_watts);
      f.energy_j = *f.time_to_train_s * gpus * watts;
    }
  }
  return f;
}

}  // namespace orrery
