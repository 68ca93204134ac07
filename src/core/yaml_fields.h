// Reading the fields of one YAML document (a cluster, a device, a graph config) where every
// failure is an InputError at the offending node's 1-based line. Lives in its own library
// (orrery_yaml_fields) so that orrery_core itself stays std-only.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/diagnostics.h"

namespace orrery {

class YamlFields {
 public:
  explicit YamlFields(std::string source) : source_(std::move(source)) {}

  // Parses `text`; a syntax error becomes "source:line: expected valid YAML: ...".
  YAML::Node load(std::string_view text) const;

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const;
  // The node's 1-based line (0 when unknown), for a check made after reading.
  static int64_t line(const YAML::Node& node);

  // Rejects a key given twice in `map` (YAML parsers keep one silently).
  void unique_keys(const YAML::Node& map) const;
  // Rejects keys outside `allowed` so typos do not pass silently, and repeated keys.
  void only_keys(const YAML::Node& map, const std::set<std::string>& allowed,
                 const std::string& where) const;
  YAML::Node required(const YAML::Node& map, const std::string& key,
                      const std::string& where) const;

  // The name of a mapping's key: it must be a scalar (YAML also allows null, sequence and
  // mapping keys, which no Orrery schema has).
  std::string key(const YAML::Node& node) const;
  std::string scalar(const YAML::Node& node) const;
  // An integer in [minimum, maximum].
  int64_t integer(const YAML::Node& node, int64_t minimum,
                  int64_t maximum = std::numeric_limits<int64_t>::max()) const;
  // A number in [lo, hi], or (lo, hi] when lo_open.
  double number(const YAML::Node& node, double lo, bool lo_open, double hi) const;

  // A quantity parsed by `parse`, which throws std::invalid_argument saying what it expected.
  template <typename Parse>
  auto quantity(const YAML::Node& node, Parse parse) const {
    const std::string text = scalar(node);
    try {
      return parse(text);
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

}  // namespace orrery
