#include "hardware/op_cost.h"

#include <algorithm>
#include <string>

#include "core/diagnostics.h"

namespace orrery {
namespace {

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

// Seconds of arithmetic for a GEMM on the device's best tile.
double gemm_seconds(const Device& d, const GemmExtents& g, FlopRate peak_rate) {
  const double rate = peak_rate.in_flop_per_second() * d.matrix_efficiency;
  if (d.gemm_tiles.empty())
    return 2.0 * static_cast<double>(g.batch) * static_cast<double>(g.m) *
           static_cast<double>(g.n) * static_cast<double>(g.k) / rate;
  double best_reuse = 0;
  for (const GemmTile& t : d.gemm_tiles)
    best_reuse = std::max(best_reuse, intensity(t) / (intensity(t) + d.tile_reuse));
  const double per_unit = rate / static_cast<double>(d.compute_units);
  double best = -1;
  for (const GemmTile& t : d.gemm_tiles) {
    const double reuse = intensity(t) / (intensity(t) + d.tile_reuse) / best_reuse;
    const int64_t tiles = g.batch * ceil_div(g.m, t.m) * ceil_div(g.n, t.n);
    const auto waves = static_cast<double>(ceil_div(tiles, d.compute_units));
    const double tile_flop =
        2.0 * static_cast<double>(t.m * t.n) * static_cast<double>(g.k + d.tile_k_overhead);
    const double seconds = waves * tile_flop / (per_unit * reuse);
    if (best < 0 || seconds < best) best = seconds;
  }
  return best;
}

}  // namespace

Time kernel_time(const Device& device, const ComputeDemand& demand) {
  double compute = 0;
  if (demand.kind == KernelClass::Gemm) {
    const GemmExtents& g = demand.gemm;
    if (g.batch > 0 && g.m > 0 && g.n > 0 && g.k > 0)
      compute = gemm_seconds(device, g, peak(device, device.matrix, demand.dtype, "matrix"));
  } else if (demand.flop > 0) {
    compute =
        demand.flop / (peak(device, device.vector, demand.dtype, "vector").in_flop_per_second() *
                       device.vector_efficiency);
  }
  const double memory = static_cast<double>(demand.bytes) /
                        (device.memory_bandwidth.in_bytes_per_second() * device.memory_efficiency);
  return device.kernel_overhead + Time::from_seconds(std::max(compute, memory));
}

}  // namespace orrery
