// Simulated time: a signed 64-bit count of picoseconds (range about +/-106 days).
//
// Every duration and instant in Orrery is a Time. Conversions to floating point exist only for
// printing and for formulas that end in a Time again (e.g. bytes / bandwidth).
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace orrery {

// A time that does not fit the +/-106-day range (or is not a number). It stems from input: sizes,
// durations or bandwidths far outside anything a training iteration has, so the CLI reports it as
// bad input.
class TimeOverflow : public std::overflow_error {
 public:
  TimeOverflow()
      : std::overflow_error(
            "a simulated time exceeds the range Orrery represents (about 106 days in "
            "picoseconds); check the workload's sizes and durations and the cluster's "
            "bandwidths") {}
};

// Every arithmetic operation is checked and throws TimeOverflow rather than wrapping around.
class Time {
 public:
  constexpr Time() = default;

  static constexpr Time from_ps(int64_t ps) { return Time(ps); }
  static constexpr Time from_ns(int64_t ns) { return Time(checked_product(ns, 1000)); }
  static constexpr Time from_us(int64_t us) { return Time(checked_product(us, 1000'000)); }
  // Nearest picosecond; throws TimeOverflow for NaN or values beyond the range.
  static Time from_seconds(double seconds) {
    const double ps = std::round(seconds * 1e12);
    if (!(std::fabs(ps) < 9.2e18)) throw TimeOverflow();
    return Time(static_cast<int64_t>(ps));
  }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double milliseconds() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double microseconds() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double nanoseconds() const { return static_cast<double>(ps_) * 1e-3; }

  // This time times a non-negative factor, to the nearest picosecond.
  Time scaled(double factor) const {
    return Time(static_cast<int64_t>(std::round(static_cast<double>(ps_) * factor)));
  }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const {
    int64_t sum = 0;
    if (__builtin_add_overflow(ps_, o.ps_, &sum)) throw TimeOverflow();
    return Time(sum);
  }
  constexpr Time operator-(Time o) const {
    int64_t difference = 0;
    if (__builtin_sub_overflow(ps_, o.ps_, &difference)) throw TimeOverflow();
    return Time(difference);
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(int64_t k) const { return Time(checked_product(ps_, k)); }
  // Ratio of two durations (e.g. a fraction of the iteration).
  constexpr double operator/(Time o) const {
    return static_cast<double>(ps_) / static_cast<double>(o.ps_);
  }

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  static constexpr int64_t checked_product(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) throw TimeOverflow();
    return product;
  }
  int64_t ps_ = 0;
};

constexpr Time operator*(int64_t k, Time t) {
  return t * k;
}

}  // namespace orrery
