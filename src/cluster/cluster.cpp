#include "cluster/cluster.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster/cluster_presets.h"
#include "core/diagnostics.h"
#include "core/quantity.h"

namespace orrery {
namespace {

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    throw InputError({source_, node.Mark().line >= 0 ? node.Mark().line + 1 : 0}, message);
  }

  // Rejects keys outside `allowed` so typos do not pass silently.
  void check_keys(const YAML::Node& map, const std::set<std::string>& allowed,
                  const std::string& where) const {
    if (!map.IsMap()) fail(map, "expected " + where + " to be a mapping of keys to values");
    for (const auto& entry : map) {
      const auto key = entry.first.as<std::string>();
      if (allowed.count(key)) continue;
      std::string list;
      for (const auto& a : allowed)
        list += (list.empty() ? "" : ", ") + a;
      fail(entry.first, "unknown key '" + key + "' in " + where + "; expected one of: " + list);
    }
  }

  const YAML::Node required(const YAML::Node& map, const std::string& key,
                            const std::string& where) const {
    const YAML::Node node = map[key];
    if (!node) fail(map, "expected '" + key + "' in " + where);
    return node;
  }

  std::string text(const YAML::Node& node) const {
    if (!node.IsScalar()) fail(node, "expected a single value");
    return node.as<std::string>();
  }

  int64_t count(const YAML::Node& node, int64_t minimum) const {
    const std::string value = text(node);
    try {
      size_t used = 0;
      const long long v = std::stoll(value, &used);
      if (used == value.size() && v >= minimum) return v;
    } catch (const std::exception&) {
    }
    fail(node,
         "expected an integer of at least " + std::to_string(minimum) + ", found '" + value + "'");
  }

  template <typename Parse>
  auto quantity(const YAML::Node& node, Parse parse) const {
    try {
      return parse(text(node));
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
  }

  Tier tier(const YAML::Node& map, const std::string& bandwidth_key,
            const std::string& where) const {
    Tier t;
    t.bandwidth = quantity(required(map, bandwidth_key, where), parse_bandwidth);
    t.latency = map["latency"] ? quantity(map["latency"], parse_duration) : Time::zero();
    if (map["efficiency"]) {
      const auto value = quantity(map["efficiency"], [](const std::string& s) {
        size_t used = 0;
        const double v = std::stod(s, &used);
        if (used != s.size() || !(v > 0 && v <= 1))
          throw std::invalid_argument("expected an efficiency in (0, 1], found '" + s + "'");
        return v;
      });
      t.efficiency = value;
    }
    return t;
  }

  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

}  // namespace

std::vector<std::string> parse_placement(std::string_view text, const std::string& source) {
  std::vector<std::string> axes;
  std::string item;
  std::istringstream in{std::string(text)};
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    axes.push_back(item);
  }
  std::vector<std::string> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<std::string>{"dp", "ep", "pp", "tp"})
    throw InputError({source, 0},
                     "expected a placement naming tp, ep, dp and pp once each, "
                     "innermost first (e.g. 'tp,ep,dp,pp'), found '" +
                         std::string(text) + "'");
  return axes;
}

ServerNetwork Cluster::network() const {
  ServerNetwork n;
  n.gpus_per_server = gpus_per_server;
  n.scale_up = scale_up;
  n.scale_out = nic;
  n.scale_out.bandwidth =
      nic.bandwidth * (static_cast<double>(nics_per_server) / static_cast<double>(gpus_per_server));
  return n;
}

Cluster parse_cluster_yaml(std::string_view text, const std::string& source) {
  YamlReader r(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError({source, e.mark.line >= 0 ? e.mark.line + 1 : 0},
                     "expected valid YAML: " + e.msg);
  }
  if (!root || !root.IsMap())
    throw InputError({source, 1}, "expected a YAML mapping describing a cluster");
  r.check_keys(root,
               {"name", "description", "gpu", "gpus_per_server", "servers", "scale_up", "scale_out",
                "placement"},
               "the cluster");
  Cluster c;
  c.source = source;
  c.name = r.text(r.required(root, "name", "the cluster"));
  if (root["description"]) c.description = r.text(root["description"]);
  if (root["gpu"]) c.gpu = r.text(root["gpu"]);
  c.gpus_per_server = r.count(r.required(root, "gpus_per_server", "the cluster"), 1);
  if (root["servers"]) c.servers = r.count(root["servers"], 0);

  const YAML::Node up = r.required(root, "scale_up", "the cluster");
  r.check_keys(up, {"kind", "bandwidth", "latency", "efficiency"}, "scale_up");
  c.scale_up_kind = up["kind"] ? r.text(up["kind"]) : "nvswitch";
  c.scale_up = r.tier(up, "bandwidth", "scale_up");

  const YAML::Node out = r.required(root, "scale_out", "the cluster");
  r.check_keys(out, {"kind", "nics_per_server", "nic_bandwidth", "latency", "efficiency"},
               "scale_out");
  c.scale_out_kind = out["kind"] ? r.text(out["kind"]) : "fat-tree";
  c.nics_per_server = r.count(r.required(out, "nics_per_server", "scale_out"), 1);
  c.nic = r.tier(out, "nic_bandwidth", "scale_out");

  if (const YAML::Node p = root["placement"]) {
    if (!p.IsSequence()) r.fail(p, "expected placement as a list such as [tp, ep, dp, pp]");
    std::string joined;
    for (const auto& item : p)
      joined += (joined.empty() ? "" : ",") + r.text(item);
    try {
      c.placement = parse_placement(joined, source);
    } catch (const InputError&) {
      r.fail(p, "expected placement to name tp, ep, dp and pp once each, innermost first");
    }
  }
  return c;
}

Cluster load_cluster(const std::string& name_or_path) {
  if (const auto preset = cluster_preset_text(name_or_path)) {
    Cluster c = parse_cluster_yaml(*preset, "preset " + name_or_path);
    c.source = "preset";
    return c;
  }
  if (!std::filesystem::exists(name_or_path)) {
    std::string names;
    for (const auto& n : cluster_preset_names())
      names += (names.empty() ? "" : ", ") + n;
    throw InputError("--cluster '" + name_or_path + "': expected a preset (" + names +
                     ") or a YAML file; no such file");
  }
  std::ifstream in(name_or_path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_cluster_yaml(buffer.str(), name_or_path);
}

}  // namespace orrery
