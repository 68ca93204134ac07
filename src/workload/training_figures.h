// What a prediction from a model description reports beside time: the memory each pipeline
// stage needs (bytes) and the throughput figures people compare runs by (definitions in
// docs/models.md: model FLOPs count Megatron's way, hardware FLOPs what the kernels execute).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace orrery {

// One GPU of a pipeline stage at its peak, in bytes.
struct StageMemory {
  int64_t stage = 0;
  int64_t layers = 0;
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double logits_bytes = 0;
  double peak_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + logits_bytes;
  }
};

struct MemoryEstimate {
  double capacity_bytes = 0;  // of one GPU
  std::vector<StageMemory> stages;
  bool fits() const {
    for (const StageMemory& s : stages)
      if (s.peak_bytes() > capacity_bytes) return false;
    return true;
  }
};

// Throughput of one iteration and, given the tokens to train on, the whole run (ideal: no
// failures, restarts or checkpoints).
struct TrainingFigures {
  int64_t tokens_per_iteration = 0;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  double peak_tflops_per_gpu = 0;  // dense peak of the device for the run's dtype
  std::string dtype;               // of that peak
  double mfu = 0, hfu = 0;         // model / hardware FLOP/s over the peak
  // The share of a typical GPU's matrix rate the job's GPUs compute at: that of the slowest of
  // `gpus` (the device's rate_spread; hardware/slowest_gpu.h). 1 with no spread or one GPU.
  double slowest_gpu_pace = 1;
  double rate_spread = 0;
  int64_t gpus = 1;
  // With --train-tokens:
  std::optional<double> train_tokens, time_to_train_s, gpu_hours, cost_usd, energy_j;
  std::string error_band;  // the validated error of this kind of prediction (docs/validation.md)
};

}  // namespace orrery
