// Which transformer layers each pipeline stage builds, as Megatron-LM assigns them.
//
// The pp x vpp model chunks are virtual stages v = c * pp + s (chunk c of stage s) and hold
// consecutive layers in order of v. By default the layers are spread as evenly as possible over
// the virtual stages, the remainder going to the middle ones (the first carries the embedding, the
// last the LM head). --first-stage-layers / --last-stage-layers fix the first and last virtual
// stages' counts and spread the rest the same way (Megatron's num_layers_in_first/last_pipeline_
// stage; it asserts the rest divide evenly, Orrery spreads an uneven rest over the middle).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace orrery {

struct StageLayout {
  int64_t pp = 1, vpp = 1;
  std::vector<int64_t> layers;  // per virtual stage
  std::vector<int64_t> first;   // per virtual stage: its first layer (0-based)

  int64_t virtual_stages() const { return pp * vpp; }
  // Layers of stage `stage`, all its chunks together.
  std::vector<int64_t> stage_layer_indices(int64_t stage) const;
};

// Throws std::invalid_argument (its message names the flag) when the counts cannot fit: a virtual
// stage would get no layer, or the fixed first and last counts exceed the model's layers.
StageLayout stage_layout(int64_t layers, int64_t pp, int64_t vpp,
                         std::optional<int64_t> first_stage_layers,
                         std::optional<int64_t> last_stage_layers);

}  // namespace orrery
