#include "hardware/slowest_gpu.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace orrery {

double expected_max_of_normals(int64_t n) {
  if (n <= 1) return 0;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx, by Simpson's rule on [-9, 9]: what lies
  // outside is at most about n phi(9) (1e-12 at n = 2^20, Orrery's largest world), and 360 steps
  // are within 1e-9 of 3,600 up to n = 2^20 (within 2e-7 at 2^30). Larger n are taken as 2^30.
  n = std::min<int64_t>(n, int64_t{1} << 30);
  constexpr int kSteps = 360;
  constexpr double kLow = -9, kHigh = 9, kStep = (kHigh - kLow) / kSteps;
  const double count = static_cast<double>(n);
  auto density_times_x = [count](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double above = 0.5 * std::erfc(x / std::numbers::sqrt2);  // 1 - Phi(x)
    return x * count * phi * std::exp((count - 1) * std::log1p(-above));
  };
  double sum = density_times_x(kLow) + density_times_x(kHigh);
  for (int i = 1; i < kSteps; ++i)
    sum += (i % 2 ? 4 : 2) * density_times_x(kLow + i * kStep);
  return sum * kStep / 3;
}

double slowest_gpu_pace(double rate_spread, int64_t gpus) {
  return std::max(0.5, 1 - std::max(0.0, rate_spread) * expected_max_of_normals(gpus));
}

}  // namespace orrery
