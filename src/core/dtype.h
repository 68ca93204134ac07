// Numeric data types of tensors and of the arithmetic units that process them, with their sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace orrery {

enum class DType : uint8_t { FP64, FP32, TF32, FP16, BF16, FP8, INT8 };

// "fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8".
std::string_view to_string(DType type);
// Accepts the names above (any case) and the PyTorch spellings float32, float16, bfloat16, half,
// float, double.
std::optional<DType> parse_dtype(std::string_view name);

// Bytes per element in memory (TF32 is stored as fp32).
int64_t size_in_bytes(DType type);

}  // namespace orrery
