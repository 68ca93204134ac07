#include "models/model_spec.h"

namespace orrery {

int64_t ModelSpec::moe_layer_count() const {
  int64_t count = 0;
  for (int64_t layer = 0; layer < layers; ++layer)
    count += is_moe_layer(layer) ? 1 : 0;
  return count;
}

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::Gelu:
      return "gelu";
    case Activation::Swiglu:
      return "swiglu";
    case Activation::SquaredRelu:
      return "squared-relu";
  }
  return "";
}

std::string_view to_string(Norm n) {
  return n == Norm::LayerNorm ? "layernorm" : "rmsnorm";
}

std::string_view to_string(Position p) {
  return p == Position::Learned ? "learned" : "rope";
}

std::string_view to_string(AttentionKind k) {
  switch (k) {
    case AttentionKind::Mha:
      return "mha";
    case AttentionKind::Gqa:
      return "gqa";
    case AttentionKind::Mla:
      return "mla";
  }
  return "";
}

}  // namespace orrery
