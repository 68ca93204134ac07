// Arithmetic throughput in floating-point operations per second (double), the compute analogue of
// Bandwidth. Constructors name their unit: TFLOP/s is 1e12 FLOP/s.
#pragma once

#include "core/time.h"

namespace orrery {

class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate flop_per_second(double v) { return FlopRate(v); }
  static constexpr FlopRate tflop_per_second(double v) { return FlopRate(v * 1e12); }

  constexpr double in_flop_per_second() const { return flops_; }
  constexpr double in_tflop_per_second() const { return flops_ / 1e12; }

  // Time to execute `flop` operations at this rate.
  Time time_for(double flop) const { return Time::from_seconds(flop / flops_); }

  constexpr FlopRate operator*(double k) const { return FlopRate(flops_ * k); }
  constexpr auto operator<=>(const FlopRate&) const = default;

 private:
  constexpr explicit FlopRate(double v) : flops_(v) {}
  double flops_ = 0;
};

}  // namespace orrery
