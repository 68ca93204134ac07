#include "cli/option_checks.h"

#include <fmt/format.h>

#include <cmath>

#include "core/text.h"

namespace orrery {

CLI::Validator integer_in(int64_t lo, int64_t hi) {
  const std::string expected = fmt::format("an integer from {} to {}", lo, hi);
  return CLI::Validator(
      [=](const std::string& text) -> std::string {
        const auto v = parse_int64(trim(text));
        if (v && *v >= lo && *v <= hi) return "";
        return "expected " + expected + ", found '" + text + "'";
      },
      expected);
}

CLI::Validator number_in(double lo, double hi, bool lo_open) {
  const std::string expected = fmt::format("a number in {}{}, {}]", lo_open ? "(" : "[", lo, hi);
  return CLI::Validator(
      [=](const std::string& text) -> std::string {
        const auto v = parse_double(trim(text));
        if (v && std::isfinite(*v) && (lo_open ? *v > lo : *v >= lo) && *v <= hi) return "";
        return "expected " + expected + ", found '" + text + "'";
      },
      expected);
}

CLI::Validator number_at_least(double lo) {
  const std::string expected = fmt::format("a number of at least {}", lo);
  return CLI::Validator(
      [=](const std::string& text) -> std::string {
        const auto v = parse_double(trim(text));
        if (v && std::isfinite(*v) && *v >= lo) return "";
        return "expected " + expected + ", found '" + text + "'";
      },
      expected);
}

CLI::Validator not_empty(const std::string& expected) {
  return CLI::Validator(
      [=](const std::string& text) -> std::string {
        return text.empty() ? "expected " + expected + ", found ''" : "";
      },
      "");  // nothing to add to the help
}

}  // namespace orrery
