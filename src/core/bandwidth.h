// Data sizes (Bytes, unsigned 64-bit) and bandwidths (bytes per second, double).
//
// Bandwidth constructors name their unit: GB/s is 1e9 B/s, GiB/s is 2^30 B/s, Gb/s is 1e9/8 B/s.
#pragma once

#include <cstdint>

#include "core/time.h"

namespace orrery {

using Bytes = uint64_t;

constexpr Bytes kKiB = 1024;
constexpr Bytes kMiB = 1024 * kKiB;
constexpr Bytes kGiB = 1024 * kMiB;

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  static constexpr Bandwidth gb_per_second(double v) { return Bandwidth(v * 1e9); }
  static constexpr Bandwidth gib_per_second(double v) { return Bandwidth(v * 1073741824.0); }
  static constexpr Bandwidth gbit_per_second(double v) { return Bandwidth(v * 1e9 / 8); }

  constexpr double in_bytes_per_second() const { return bps_; }
  constexpr double in_gb_per_second() const { return bps_ / 1e9; }
  constexpr double in_gib_per_second() const { return bps_ / 1073741824.0; }

  // Time to move `bytes` at this rate (bytes may be fractional, e.g. 2(n-1)/n of a buffer).
  Time time_for(double bytes) const { return Time::from_seconds(bytes / bps_); }

  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps_ * k); }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(double bps) : bps_(bps) {}
  double bps_ = 0;
};

}  // namespace orrery
