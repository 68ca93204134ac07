#include "hardware/op_cost.h"

#include <algorithm>
#include <string>

#include "core/diagnostics.h"

namespace orrery {
namespace {

bool is_attention(KernelClass kind) {
  return kind == KernelClass::Attention || kind == KernelClass::AttentionBackward;
}

FlopRate peak(const Device& device, const std::map<DType, FlopRate>& rates, DType type,
              const char* unit) {
  const auto it = rates.find(type);
  if (it == rates.end())
    throw InputError("device '" + device.name + "' has no " + std::string(to_string(type)) +
                     " rate on its " + unit + " units; add one under '" + unit +
                     ":' in a device file");
  return it->second;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

double intensity(const GemmTile& t) {
  return static_cast<double>(t.m * t.n) / static_cast<double>(t.m + t.n);
}

// Seconds of a GEMM (arithmetic and memory, overlapped) on the device's best tile and K split,
// given the seconds its operands take to stream (`memory`).
//
// Split-K: when the output tiles leave units idle (fewer tiles than units), cuBLAS-like libraries
// split the reduction over k among s thread blocks per output tile; each computes a partial sum
// of ceil(k / s) steps (paying the tile's prologue and epilogue k0 again) and writes it as fp32
// (s m n 4 bytes, streamed with the operands), and the partial sums are read back and added
// after the arithmetic (s m n 4 bytes more, not overlapped). s runs from 1 to the device's
// split_k; the least time wins, as for the tiles.
double gemm_seconds(const Device& d, const GemmExtents& g, FlopRate peak_rate, double efficiency,
                    double memory) {
  const double rate = peak_rate.in_flop_per_second() * efficiency;
  if (d.gemm_tiles.empty())
    return std::max(2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) *
                        static_cast<double>(g.n) * static_cast<double>(g.k) / rate,
                    memory);
  double best_reuse = 0;
  for (const GemmTile& t : d.gemm_tiles)
    best_reuse = std::max(best_reuse, intensity(t) / (intensity(t) + d.tile_reuse));
  const double per_unit = rate / static_cast<double>(d.compute_units);
  const double bytes_per_second = d.memory_bandwidth.in_bytes_per_second() * d.memory_efficiency;
  const double partial_seconds = static_cast<double>(g.batch) * static_cast<double>(g.m) *
                                 static_cast<double>(g.n) * 4 /
                                 bytes_per_second;  // one split's fp32 partial sums, one way
  double best = -1;
  for (const GemmTile& t : d.gemm_tiles) {
    const double reuse = intensity(t) / (intensity(t) + d.tile_reuse) / best_reuse;
    const int64_t tiles = g.batch * ceil_div(g.m, t.m) * ceil_div(g.n, t.n);
    const int64_t splits = tiles < d.compute_units ? std::min(d.max_split_k, g.k) : 1;
    for (int64_t s = 1; s <= splits; ++s) {
      const auto waves = static_cast<double>(ceil_div(tiles * s, d.compute_units));
      const double tile_flop = 2.0 * static_cast<double>(t.m * t.n) *
                               static_cast<double>(ceil_div(g.k, s) + d.tile_k_overhead);
      const double compute = waves * tile_flop / (per_unit * reuse);
      const double partials = s > 1 ? static_cast<double>(s) * partial_seconds : 0;
      const double seconds = std::max(compute, memory + partials) + partials;
      if (best < 0 || seconds < best) best = seconds;
    }
  }
  return best;
}

// Seconds a GEMM's output traffic beyond a 16-bit write takes to stream.
double wide_output_seconds(const Device& d, const GemmExtents& g) {
  if (g.output_bytes <= 2) return 0;
  return static_cast<double>(g.batch) * static_cast<double>(g.m) * static_cast<double>(g.n) *
         static_cast<double>(g.output_bytes - 2) /
         (d.memory_bandwidth.in_bytes_per_second() * d.memory_efficiency);
}

// A GEMM whose output moves more than a 16-bit write: its main loop under the rest of its
// traffic, then the exposed share of the wide output's; never less than streaming every byte.
double gemm_with_epilogue_seconds(const Device& d, const GemmExtents& g, FlopRate peak_rate,
                                  double efficiency, double memory, DType type) {
  const auto share = d.exposed_epilogue_by_type.find(type);
  const double wide = wide_output_seconds(d, g);
  if (share == d.exposed_epilogue_by_type.end() || wide <= 0)
    return gemm_seconds(d, g, peak_rate, efficiency, memory);
  return std::max(gemm_seconds(d, g, peak_rate, efficiency, std::max(0.0, memory - wide)) +
                      share->second * wide,
                  memory);
}

}  // namespace

Time kernel_time(const Device& device, const ComputeDemand& demand) {
  const double memory = static_cast<double>(demand.bytes) /
                        (device.memory_bandwidth.in_bytes_per_second() * device.memory_efficiency);
  double seconds = memory;
  if (demand.kind == KernelClass::Gemm) {
    const GemmExtents& g = demand.gemm;
    if (g.batch > 0 && g.m > 0 && g.n > 0 && g.k > 0)
      seconds = gemm_with_epilogue_seconds(
          device, g, peak(device, device.matrix, demand.dtype, "matrix"),
          device.matrix_efficiency_for(demand.dtype) * device.sustained_matrix * device.pace,
          memory, demand.dtype);
  } else if (is_attention(demand.kind) && demand.flop > 0) {
    const bool backward = demand.kind == KernelClass::AttentionBackward;
    const auto n = static_cast<double>(demand.gemm.n);
    const auto half = static_cast<double>(backward ? device.attention_backward_half_sequence
                                                   : device.attention_half_sequence);
    const double rate =
        peak(device, device.matrix, demand.dtype, "matrix").in_flop_per_second() *
        (backward ? device.attention_backward_efficiency : device.attention_efficiency) *
        device.pace * n / (n + half);
    seconds = std::max(memory, demand.flop / rate);
  } else if (demand.flop > 0) {
    seconds = std::max(
        memory,
        demand.flop / (peak(device, device.vector, demand.dtype, "vector").in_flop_per_second() *
                       device.vector_efficiency));
  }
  return device.kernel_overhead + Time::from_seconds(seconds);
}

}  // namespace orrery
