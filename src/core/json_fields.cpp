#include "core/json_fields.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace orrery {

using nlohmann::json;

JsonFields::JsonFields(std::string text, std::string source, std::string what)
    : text_(std::move(text)), source_(std::move(source)), what_(std::move(what)) {}

json JsonFields::load() const {
  json root;
  try {
    root = json::parse(text_);
  } catch (const json::parse_error& e) {
    const auto offset = static_cast<std::ptrdiff_t>(std::min(e.byte, text_.size()));
    throw InputError({source_, 1 + std::count(text_.begin(), text_.begin() + offset, '\n')},
                     "expected " + what_ + ": " + e.what());
  }
  if (!root.is_object()) throw InputError({source_, 1}, "expected " + what_ + " as an object");
  return root;
}

int64_t JsonFields::line_of(const std::string& key) const {
  const size_t at = text_.find('"' + key + '"');
  if (at == std::string::npos) return 1;
  return 1 + std::count(text_.begin(), text_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
}

void JsonFields::fail(const std::string& key, const std::string& message) const {
  throw InputError({source_, line_of(key)}, "'" + key + "': " + message);
}

const json& JsonFields::required(const json& object, const std::string& key) const {
  const auto it = object.find(key);
  if (it == object.end())
    throw InputError({source_, 1}, "expected the key '" + key + "' in " + what_);
  return *it;
}

int64_t JsonFields::integer(const json& object, const std::string& key, int64_t minimum,
                            int64_t maximum) const {
  const json& v = required(object, key);
  if (!v.is_number_integer() || v.get<int64_t>() < minimum || v.get<int64_t>() > maximum)
    fail(key, "expected an integer from " + std::to_string(minimum) + " to " +
                  std::to_string(maximum) + ", found " + v.dump());
  return v.get<int64_t>();
}

double JsonFields::number(const json& object, const std::string& key, double lo, bool lo_open,
                          double hi) const {
  const json& v = required(object, key);
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  if (!(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
    std::ostringstream range;
    range << (lo_open ? "(" : "[") << lo << ", " << hi << "]";
    fail(key, "expected a number in " + range.str() + ", found " + v.dump());
  }
  return x;
}

bool JsonFields::boolean(const json& object, const std::string& key) const {
  const json& v = required(object, key);
  if (!v.is_boolean()) fail(key, "expected true or false, found " + v.dump());
  return v.get<bool>();
}

std::string JsonFields::choice(const json& object, const std::string& key,
                               const std::set<std::string>& allowed) const {
  const json& v = required(object, key);
  if (v.is_string() && allowed.count(v.get<std::string>()) > 0) return v.get<std::string>();
  std::string names;
  for (const std::string& name : allowed)
    names += (names.empty() ? "" : ", ") + name;
  fail(key, "expected one of " + names + ", found " + v.dump());
}

}  // namespace orrery
