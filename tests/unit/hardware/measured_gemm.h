// What the hardware tests compare against this project's GEMM measurements (tests/data/h100_*,
// h200_*): one GEMM (m x k) . (k x n) as the measurement scripts run it, and the median of
// repeated timings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/compute_demand.h"

namespace orrery::test_data {

// A GEMM on `type` operands (1 byte for FP8, 2 otherwise) whose output moves `output_bytes` a
// value (2: a BF16 write; 4: an fp32 write; 8: accumulated into fp32).
inline ComputeDemand measured_gemm(int64_t m, int64_t n, int64_t k, DType type,
                                   int64_t output_bytes = 2) {
  ComputeDemand d;
  d.kind = KernelClass::Gemm;
  d.dtype = type;
  d.gemm = {1, m, n, k, output_bytes};
  d.flop = 2.0 * static_cast<double>(m * n * k);
  const int64_t operand = type == DType::FP8 ? 1 : 2;
  d.bytes = static_cast<Bytes>((m * k + k * n) * operand + m * n * output_bytes);
  return d;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace orrery::test_data
