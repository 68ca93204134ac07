#include "core/compute_demand.h"

namespace orrery {

std::string_view to_string(KernelClass kind) {
  switch (kind) {
    case KernelClass::Gemm:
      return "gemm";
    case KernelClass::Softmax:
      return "softmax";
    case KernelClass::LayerNorm:
      return "layer-norm";
    case KernelClass::Elementwise:
      return "elementwise";
    case KernelClass::Reduction:
      return "reduction";
    case KernelClass::Copy:
      return "copy";
    case KernelClass::Attention:
      return "attention";
    case KernelClass::AttentionBackward:
      return "attention-backward";
  }
  return "?";
}

}  // namespace orrery
