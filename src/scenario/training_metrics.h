// The figures people compare training runs by, from one simulated iteration of a model scenario
// (definitions in docs/models.md, "What the numbers mean"):
//   tokens_per_s            = tokens per iteration / iteration time
//   model_tflops_per_gpu    = Megatron's model FLOPs per iteration / (iteration time x GPUs)
//   hardware_tflops_per_gpu = FLOPs the kernels execute per GPU (recompute, causal saving and
//                             the flash backward's extra work included) / iteration time
//   mfu, hfu                = those over the device's dense matrix peak for the run's dtype
// With --train-tokens T: time = T / tokens_per_s (ideal: no failures, restarts or checkpoints),
// GPU-hours = time x GPUs / 3600, cost = GPU-hours x the cluster's price per GPU-hour, and energy
// = time x GPUs x (idle + busy x (TDP - idle)) W, busy = the critical stage's compute fraction
// (absent when the device preset does not give both powers).
#pragma once

#include <string>

#include "cluster/cluster.h"
#include "hardware/device.h"
#include "models/training_workload.h"
#include "scenario/scenario.h"
#include "training/simulation_mode.h"
#include "workload/result.h"

namespace orrery {

TrainingFigures training_figures(const TrainingWorkload& workload, const ModelScenario& model,
                                 const Device& device, const Cluster& cluster, const Result& result,
                                 SimulationMode mode);

}  // namespace orrery
