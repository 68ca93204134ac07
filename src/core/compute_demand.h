// The work of one GPU kernel, as a reader describes it when its file gives FLOPs and shapes but no
// time: the kernel's class, its data type, the floating-point operations it performs and the bytes
// it moves to and from device memory, plus the extents the cost model needs (GEMM sizes for
// tiling, independent rows for row-wise kernels). src/hardware/ turns a demand into a Time.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/bandwidth.h"
#include "core/dtype.h"

namespace orrery {

enum class KernelClass : uint8_t {
  Gemm,         // (batched) matrix multiply on the matrix units
  Softmax,      // row-wise: one row per thread block
  LayerNorm,    // row-wise: one row per thread block
  Elementwise,  // activation functions, dropout, arithmetic: a stream over the elements
  Reduction,    // sums and means over an axis
  Copy,         // casts, contiguous copies, concatenation, gathers and scatters (no arithmetic)
  Attention,    // fused (flash) attention: scores, softmax and context in one kernel; `gemm`
                // gives batch = sequences x heads, m = query and n = key positions, k = head width
  AttentionBackward,  // its backward pass (scores recomputed, then dQ, dK, dV); `gemm` as above
};

// "gemm", "softmax", "layer-norm", "elementwise", "reduction", "copy", "attention",
// "attention-backward".
std::string_view to_string(KernelClass kind);

// batch independent products of (m x k) . (k x n).
struct GemmExtents {
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  // Bytes each output value moves: 2 a 16-bit write, 4 an fp32 write, 8 an accumulation into
  // fp32 (read and written, as a weight gradient into Megatron's main_grad).
  int64_t output_bytes = 2;
  bool operator==(const GemmExtents&) const = default;
};

struct ComputeDemand {
  KernelClass kind = KernelClass::Elementwise;
  DType dtype = DType::FP32;  // of the arithmetic (GEMM: of the operands)
  double flop = 0;            // floating-point operations (a count)
  Bytes bytes = 0;            // read plus written in device memory
  GemmExtents gemm;           // Gemm, Attention and AttentionBackward only
  int64_t rows = 0;           // Softmax and LayerNorm: independent rows
  bool operator==(const ComputeDemand&) const = default;
};

}  // namespace orrery
