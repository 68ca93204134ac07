#include "models/stage_layout.h"

#include <stdexcept>
#include <string>

#include "models/memory_model.h"

namespace orrery {

std::vector<int64_t> StageLayout::stage_layer_indices(int64_t stage) const {
  std::vector<int64_t> result;
  int64_t count = 0;
  for (int64_t c = 0; c < vpp; ++c)
    count += layers[static_cast<size_t>(c * pp + stage)];
  result.reserve(static_cast<size_t>(count));
  for (int64_t c = 0; c < vpp; ++c) {
    const auto v = static_cast<size_t>(c * pp + stage);
    for (int64_t l = first[v]; l < first[v] + layers[v]; ++l)
      result.push_back(l);
  }
  return result;
}

StageLayout stage_layout(int64_t layers, int64_t pp, int64_t vpp,
                         std::optional<int64_t> first_stage_layers,
                         std::optional<int64_t> last_stage_layers) {
  StageLayout layout;
  layout.pp = pp;
  layout.vpp = vpp;
  const int64_t v = pp * vpp;
  if (v == 1 && (first_stage_layers || last_stage_layers))
    throw std::invalid_argument(
        "--first-stage-layers/--last-stage-layers: expected pp x vpp above 1");
  if (v == 2 && first_stage_layers && last_stage_layers &&
      *first_stage_layers + *last_stage_layers != layers)
    throw std::invalid_argument("--first-stage-layers + --last-stage-layers: expected " +
                                std::to_string(layers) + " layers in all over two stages");
  const int64_t head = first_stage_layers.value_or(0);
  const int64_t tail = v > 1 ? last_stage_layers.value_or(0) : 0;
  const int64_t middle_stages = v - (first_stage_layers ? 1 : 0) - (last_stage_layers ? 1 : 0);
  const int64_t rest = layers - head - tail;
  if (rest < middle_stages || (middle_stages == 0 && rest != 0))
    throw std::invalid_argument(
        "expected at least one layer per model chunk: " + std::to_string(layers) +
        " layers over pp x vpp = " + std::to_string(v) + " chunks" +
        (first_stage_layers || last_stage_layers ? " with --first-stage-layers/--last-stage-layers"
                                                 : std::string(" (--pp or --vpp)")));
  const std::vector<int64_t> spread =
      middle_stages > 0 ? stage_layers(rest, middle_stages) : std::vector<int64_t>{};
  if (first_stage_layers) layout.layers.push_back(head);
  layout.layers.insert(layout.layers.end(), spread.begin(), spread.end());
  if (last_stage_layers) layout.layers.push_back(tail);
  int64_t next = 0;
  for (const int64_t n : layout.layers) {
    if (n < 1)
      throw std::invalid_argument(
          "--first-stage-layers/--last-stage-layers: expected at least "
          "one layer in every model chunk");
    layout.first.push_back(next);
    next += n;
  }
  return layout;
}

}  // namespace orrery
