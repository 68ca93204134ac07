#include "core/yaml_fields.h"

#include <cmath>
#include <map>
#include <sstream>

#include "core/text.h"

namespace orrery {
namespace {

int64_t line_of(const YAML::Mark& mark) {
  return mark.line >= 0 ? mark.line + 1 : 0;
}

std::string shortest(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

YAML::Node YamlFields::load(std::string_view text) const {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError({source_, line_of(e.mark)}, "expected valid YAML: " + e.msg);
  }
}

void YamlFields::fail(const YAML::Node& node, const std::string& message) const {
  throw InputError({source_, line_of(node.Mark())}, message);
}

int64_t YamlFields::line(const YAML::Node& node) {
  return line_of(node.Mark());
}

void YamlFields::unique_keys(const YAML::Node& map) const {
  if (!map.IsMap()) return;
  std::map<std::string, int64_t> first_line;
  for (const auto& entry : map) {
    const std::string name = key(entry.first);
    const auto [at, inserted] = first_line.emplace(name, line_of(entry.first.Mark()));
    if (!inserted)
      fail(entry.first,
           "key '" + name + "' given twice (first at line " + std::to_string(at->second) + ")");
  }
}

void YamlFields::only_keys(const YAML::Node& map, const std::set<std::string>& allowed,
                           const std::string& where) const {
  if (!map.IsMap()) fail(map, "expected " + where + " to be a mapping of keys to values");
  unique_keys(map);
  for (const auto& entry : map) {
    const std::string name = key(entry.first);
    if (allowed.count(name)) continue;
    std::string list;
    for (const auto& a : allowed)
      list += (list.empty() ? "" : ", ") + a;
    fail(entry.first, "unknown key '" + name + "' in " + where + "; expected one of: " + list);
  }
}

YAML::Node YamlFields::required(const YAML::Node& map, const std::string& key,
                                const std::string& where) const {
  const YAML::Node node = map[key];
  if (!node) fail(map, "expected '" + key + "' in " + where);
  return node;
}

std::string YamlFields::key(const YAML::Node& node) const {
  if (node.IsScalar()) return node.as<std::string>();
  fail(node, std::string("expected a key name, found ") + (node.IsSequence() ? "a sequence"
                                                           : node.IsMap()    ? "a mapping"
                                                                             : "no name"));
}

std::string YamlFields::scalar(const YAML::Node& node) const {
  if (!node.IsScalar()) fail(node, "expected a single value");
  return node.as<std::string>();
}

int64_t YamlFields::integer(const YAML::Node& node, int64_t minimum, int64_t maximum) const {
  const std::string text = scalar(node);
  const auto v = parse_int64(trim(text));
  if (v && *v >= minimum && *v <= maximum) return *v;
  const std::string expected =
      maximum < std::numeric_limits<int64_t>::max()
          ? "expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum)
      : minimum == 1 ? std::string("expected a positive integer")
                     : "expected an integer of at least " + std::to_string(minimum);
  fail(node, expected + ", found '" + text + "'");
}

double YamlFields::number(const YAML::Node& node, double lo, bool lo_open, double hi) const {
  const std::string text = scalar(node);
  const auto v = parse_double(trim(text));
  if (v && (lo_open ? *v > lo : *v >= lo) && *v <= hi) return *v;
  const std::string range =
      std::isinf(hi)
          ? std::string(lo_open ? "a number above " : "a number of at least ") + shortest(lo)
          : "a number in " + std::string(lo_open ? "(" : "[") + shortest(lo) + ", " + shortest(hi) +
                "]";
  fail(node, "expected " + range + ", found '" + text + "'");
}

}  // namespace orrery
