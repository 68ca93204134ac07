// Reading the fields of one JSON object (a peer's input file, e.g. Calculon's model, execution and
// system files) where every failure is an InputError naming the file, the key's 1-based line and
// what was expected. Lives in its own library (orrery_json_fields) so that orrery_core stays
// std-only.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>

#include "core/diagnostics.h"

namespace orrery {

class JsonFields {
 public:
  // `what` names the format in messages ("Calculon's model JSON").
  JsonFields(std::string text, std::string source, std::string what);

  // The document, which must be a JSON object; a syntax error names its line.
  nlohmann::json load() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  // `object[key]`, which must be present.
  const nlohmann::json& required(const nlohmann::json& object, const std::string& key) const;
  // An integer in [minimum, maximum].
  int64_t integer(const nlohmann::json& object, const std::string& key, int64_t minimum,
                  int64_t maximum) const;
  // A number in (lo, hi] when lo_open, else [lo, hi].
  double number(const nlohmann::json& object, const std::string& key, double lo, bool lo_open,
                double hi) const;
  bool boolean(const nlohmann::json& object, const std::string& key) const;
  // A string, one of `allowed`.
  std::string choice(const nlohmann::json& object, const std::string& key,
                     const std::set<std::string>& allowed) const;

  // The 1-based line where "key" first appears (1 when absent): JSON parsers keep no positions.
  int64_t line_of(const std::string& key) const;
  const std::string& source() const { return source_; }

 private:
  std::string text_, source_, what_;
};

}  // namespace orrery
