// Checks for command-line flags whose failures say what was expected, e.g.
// "--gpus: expected an integer from 1 to 1048576, found '0'". (CLI11's own range checks print
// the limits of double, which reads badly for integer flags.)
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace orrery {

// An integer in [lo, hi].
CLI::Validator integer_in(int64_t lo, int64_t hi);
// A finite number in [lo, hi], or (lo, hi] when `lo_open`.
CLI::Validator number_in(double lo, double hi, bool lo_open = false);
// A finite number >= lo.
CLI::Validator number_at_least(double lo);
// Any text but the empty one, which would otherwise read as the flag not given (`expected`: what
// the flag takes, e.g. "a preset name or a YAML file").
CLI::Validator not_empty(const std::string& expected);

}  // namespace orrery
