// What a model-level reader (torchviz graph, NeuSight table) knows about the model behind a
// workload, for reports: parameter count, model layers and forward FLOPs. Simulators ignore it.
#pragma once

#include <cstdint>
#include <optional>

namespace orrery {

struct ModelSummary {
  int64_t parameters = 0;              // trainable parameters (elements), whole model
  int64_t layers = 0;                  // model layers (transformer blocks)
  std::optional<double> forward_flop;  // one forward pass of the listed batch; absent if unknown
};

}  // namespace orrery
