#include "core/dtype.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace orrery {

std::string_view to_string(DType type) {
  switch (type) {
    case DType::FP64:
      return "fp64";
    case DType::FP32:
      return "fp32";
    case DType::TF32:
      return "tf32";
    case DType::FP16:
      return "fp16";
    case DType::BF16:
      return "bf16";
    case DType::FP8:
      return "fp8";
    case DType::INT8:
      return "int8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  std::string lower;
  for (const char c : name)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::array<std::pair<std::string_view, DType>, 13> kNames = {{
      {"fp64", DType::FP64},
      {"float64", DType::FP64},
      {"double", DType::FP64},
      {"fp32", DType::FP32},
      {"float32", DType::FP32},
      {"float", DType::FP32},
      {"tf32", DType::TF32},
      {"fp16", DType::FP16},
      {"float16", DType::FP16},
      {"half", DType::FP16},
      {"bf16", DType::BF16},
      {"bfloat16", DType::BF16},
      {"fp8", DType::FP8},
  }};
  for (const auto& [text, type] : kNames)
    if (lower == text) return type;
  if (lower == "int8") return DType::INT8;
  return std::nullopt;
}

int64_t size_in_bytes(DType type) {
  switch (type) {
    case DType::FP64:
      return 8;
    case DType::FP32:
    case DType::TF32:
      return 4;
    case DType::FP16:
    case DType::BF16:
      return 2;
    case DType::FP8:
    case DType::INT8:
      return 1;
  }
  return 4;
}

}  // namespace orrery
