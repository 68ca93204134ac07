#include "core/quantity.h"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/text.h"
#include "core/time.h"

namespace orrery {
namespace {

// Splits "48.5 GiB/s" into the number 48.5 and the unit "GiB/s".
std::pair<std::optional<double>, std::string_view> split_number(std::string_view text) {
  text = trim(text);
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' || text[i] == 'e' ||
          text[i] == 'E' || text[i] == '+' || text[i] == '-')) {
    // An 'e' belongs to the number only when a digit or sign follows ("1e9"), not in "1 eb".
    if ((text[i] == 'e' || text[i] == 'E') &&
        (i + 1 >= text.size() || !(std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
                                   text[i + 1] == '-' || text[i + 1] == '+')))
      break;
    ++i;
  }
  return {parse_double(text.substr(0, i)), trim(text.substr(i))};
}

struct Unit {
  std::string_view name;
  double scale;
};

std::optional<double> scale_of(std::string_view unit, const auto& table) {
  for (const Unit& u : table)
    if (u.name == unit) return u.scale;
  return std::nullopt;
}

constexpr std::array kBandwidthUnits = {
    Unit{"B/s", 1},
    Unit{"KB/s", 1e3},
    Unit{"MB/s", 1e6},
    Unit{"GB/s", 1e9},
    Unit{"TB/s", 1e12},
    Unit{"PB/s", 1e15},
    Unit{"KiB/s", 1024.0},
    Unit{"PiB/s", 1125899906842624.0},
    Unit{"MiB/s", 1048576.0},
    Unit{"GiB/s", 1073741824.0},
    Unit{"TiB/s", 1099511627776.0},
    Unit{"b/s", 1.0 / 8},
    Unit{"Kb/s", 1e3 / 8},
    Unit{"Mb/s", 1e6 / 8},
    Unit{"Gb/s", 1e9 / 8},
    Unit{"Tb/s", 1e12 / 8},
    Unit{"bps", 1.0 / 8},
    Unit{"Kbps", 1e3 / 8},
    Unit{"Mbps", 1e6 / 8},
    Unit{"Gbps", 1e9 / 8},
    Unit{"Tbps", 1e12 / 8},
};

constexpr std::array kTimeUnits = {
    Unit{"ps", 1e-12}, Unit{"ns", 1e-9}, Unit{"us", 1e-6},
    Unit{"µs", 1e-6},  Unit{"ms", 1e-3}, Unit{"s", 1.0},
};

constexpr std::array kSizeUnits = {
    Unit{"B", 1},
    Unit{"KB", 1e3},
    Unit{"MB", 1e6},
    Unit{"GB", 1e9},
    Unit{"TB", 1e12},
    Unit{"PB", 1e15},
    Unit{"KiB", 1024.0},
    Unit{"MiB", 1048576.0},
    Unit{"GiB", 1073741824.0},
    Unit{"TiB", 1099511627776.0},
    Unit{"PiB", 1125899906842624.0},
};

constexpr std::array kFlopRateUnits = {
    Unit{"FLOP/s", 1}, Unit{"GFLOP/s", 1e9}, Unit{"TFLOP/s", 1e12}, Unit{"PFLOP/s", 1e15},
    Unit{"FLOPS", 1},  Unit{"GFLOPS", 1e9},  Unit{"TFLOPS", 1e12},  Unit{"PFLOPS", 1e15},
    Unit{"OPS", 1},    Unit{"GOPS", 1e9},    Unit{"TOPS", 1e12},    Unit{"POPS", 1e15},
};

[[noreturn]] void fail(std::string_view what, std::string_view example, std::string_view text) {
  throw std::invalid_argument("expected " + std::string(what) + " such as '" +
                              std::string(example) + "', found '" + std::string(text) + "'");
}

}  // namespace

Bandwidth parse_bandwidth(std::string_view text) {
  const auto [number, unit] = split_number(text);
  // A bare number is GB/s (10^9 B/s), on the command line and in YAML alike.
  const auto scale = unit.empty() ? std::optional<double>(1e9) : scale_of(unit, kBandwidthUnits);
  if (!number || !scale || *number <= 0) fail("a positive bandwidth", "300 GB/s", text);
  return Bandwidth::bytes_per_second(*number * *scale);
}

Time parse_duration(std::string_view text) {
  const auto [number, unit] = split_number(text);
  if (number && *number == 0 && unit.empty()) return Time::zero();
  const auto scale = scale_of(unit, kTimeUnits);
  if (!number || !scale || *number < 0) fail("a non-negative duration", "1.5 us", text);
  try {
    return Time::from_seconds(*number * *scale);
  } catch (const TimeOverflow&) {
    fail("a duration of at most 106 days", "1.5 us", text);
  }
}

Bytes parse_size(std::string_view text) {
  const auto [number, unit] = split_number(text);
  const auto scale = unit.empty() ? std::optional<double>(1.0) : scale_of(unit, kSizeUnits);
  if (!number || !scale || *number < 0) fail("a size", "64 MiB", text);
  const double bytes = *number * *scale;
  if (bytes != std::floor(bytes) || bytes >= 1.8e19)
    fail("a whole number of bytes", "64 MiB", text);
  return static_cast<Bytes>(bytes);
}

FlopRate parse_flop_rate(std::string_view text) {
  const auto [number, unit] = split_number(text);
  const auto scale = scale_of(unit, kFlopRateUnits);
  if (!number || !scale || *number <= 0) fail("a positive arithmetic rate", "989.4 TFLOP/s", text);
  return FlopRate::flop_per_second(*number * *scale);
}

std::string format_size(Bytes bytes) {
  constexpr std::array<std::pair<Bytes, const char*>, 4> units = {
      {{kGiB * 1024, "TiB"}, {kGiB, "GiB"}, {kMiB, "MiB"}, {kKiB, "KiB"}}};
  for (const auto& [size, name] : units)
    if (bytes >= size && bytes % size == 0) return std::to_string(bytes / size) + " " + name;
  return std::to_string(bytes) + " B";
}

}  // namespace orrery
