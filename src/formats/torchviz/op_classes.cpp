#include "formats/torchviz/op_classes.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace orrery {
namespace {

bool is_one_of(const std::string& op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

}  // namespace

bool is_reshape(const std::string& op) {
  return is_one_of(op, {"View", "UnsafeView", "ReshapeAlias", "Reshape", "Flatten"});
}

bool keeps_shape(const std::string& op) {
  return is_one_of(op, {"ToCopy", "Clone",      "NativeDropout", "Dropout",  "Gelu",       "Relu",
                        "Silu",   "Tanh",       "Sigmoid",       "Softmax",  "LogSoftmax", "Exp",
                        "Log",    "Sqrt",       "Rsqrt",         "Neg",      "Abs",        "Pow",
                        "Erf",    "Sin",        "Cos",           "Hardtanh", "LeakyRelu",  "Elu",
                        "Clamp",  "MaskedFill", "Contiguous",    "Alias"});
}

bool is_binary_elementwise(const std::string& op) {
  return is_one_of(op, {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Where", "Lerp"});
}

bool is_linear(const std::string& op) {
  return is_one_of(op, {"Addmm", "Mm", "Linear"});
}

bool is_fused_attention(const std::string& op) {
  return is_one_of(op, {"ScaledDotProductFlashAttention", "ScaledDotProductEfficientAttention",
                        "ScaledDotProductCudnnAttention", "ScaledDotProductFlashAttentionForCpu"});
}

}  // namespace orrery
