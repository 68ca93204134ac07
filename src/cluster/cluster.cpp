#include "cluster/cluster.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "cluster/astra_sim_network.h"
#include "cluster/calculon_system.h"
#include "cluster/cluster_presets.h"
#include "core/diagnostics.h"
#include "core/quantity.h"
#include "core/text.h"
#include "core/yaml_fields.h"
#include "hardware/device_file.h"

namespace orrery {

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

std::optional<size_t> Cluster::scale_out() const {
  for (size_t d = 0; d < network.size(); ++d)
    if (network[d].kind == DimensionKind::FatTree) return d;
  return std::nullopt;
}

namespace {

// The largest value a size key may take: a network holds at most 2^40 GPUs
// (Topology::kMaxCapacity), and no server has more than 1,024 NICs.
constexpr int64_t kMaxPositions = Topology::kMaxCapacity;
constexpr int64_t kMaxRails = 1024;

// One entry of `network:`; a torus expands into one ring dimension per axis.
std::vector<Dimension> parse_dimension(const YamlFields& r, const YAML::Node& node, size_t index) {
  const std::string where = "network entry " + std::to_string(index + 1);
  r.only_keys(
      node,
      {"name", "kind", "size", "shape", "bandwidth", "latency", "base_latency", "efficiency",
       "nvls", "nvls_efficiency", "channels", "nvls_channels", "rails", "servers_per_leaf",
       "oversubscription", "ll_busbw_two_servers", "ll_busbw_more_servers", "rendezvous_latency"},
      where);
  const std::string kind = r.scalar(r.required(node, "kind", where));
  Dimension dim;
  dim.name = node["name"] ? r.scalar(node["name"]) : kind;
  const YAML::Node bandwidth = r.required(node, "bandwidth", where);
  dim.link_bandwidth = r.quantity(bandwidth, parse_bandwidth);
  const double bps = dim.link_bandwidth.in_bytes_per_second();
  if (!(bps >= Topology::kMinBandwidth && bps <= Topology::kMaxBandwidth))
    r.fail(bandwidth,
           "expected a bandwidth between 1 MB/s and 1 PB/s, found '" + r.scalar(bandwidth) + "'");
  for (const auto& [key, field] : {std::pair<const char*, Time*>{"latency", &dim.latency},
                                   {"base_latency", &dim.base_latency},
                                   {"rendezvous_latency", &dim.rendezvous_latency}}) {
    if (!node[key]) continue;
    *field = r.quantity(node[key], parse_duration);
    if (*field < Time::zero() || *field > Time::from_seconds(1))
      r.fail(node[key],
             "expected a latency between 0 and 1 s, found '" + r.scalar(node[key]) + "'");
  }
  if (node["efficiency"]) dim.efficiency = r.number(node["efficiency"], 0, true, 1);
  if (node["channels"]) dim.channels = r.integer(node["channels"], 1, 64);
  const auto only = [&](const char* key, const char* kinds) {
    if (node[key]) r.fail(node[key], std::string("'") + key + "' applies only to " + kinds);
  };
  if (kind != "switch") {
    only("nvls", "switch dimensions");
    only("nvls_efficiency", "switch dimensions");
    only("nvls_channels", "switch dimensions");
  }
  if (kind != "fat-tree") {
    only("rails", "fat-tree dimensions");
    only("servers_per_leaf", "fat-tree dimensions");
    only("oversubscription", "fat-tree dimensions");
    only("ll_busbw_two_servers", "fat-tree dimensions");
    only("ll_busbw_more_servers", "fat-tree dimensions");
    only("rendezvous_latency", "fat-tree dimensions");
  }
  if (kind != "torus") only("shape", "torus dimensions");

  if (kind == "torus") {
    if (node["size"]) r.fail(node["size"], "a torus takes 'shape: [x, y, ...]', not 'size'");
    const YAML::Node shape = r.required(node, "shape", where);
    if (!shape.IsSequence() || shape.size() < 1 || shape.size() > 3)
      r.fail(shape, "expected a torus shape of 1 to 3 sizes, e.g. [4, 4, 4]");
    std::vector<Dimension> rings;
    const char* axes[] = {"x", "y", "z"};
    for (size_t a = 0; a < shape.size(); ++a) {
      Dimension ring = dim;
      ring.kind = DimensionKind::Ring;
      ring.name = dim.name + "." + axes[a];
      ring.size = r.integer(shape[a], 1, kMaxPositions);
      rings.push_back(ring);
    }
    return rings;
  }
  if (kind == "switch")
    dim.kind = DimensionKind::Switch;
  else if (kind == "fat-tree")
    dim.kind = DimensionKind::FatTree;
  else if (kind == "ring")
    dim.kind = DimensionKind::Ring;
  else if (kind == "mesh")
    dim.kind = DimensionKind::Mesh;
  else
    r.fail(node["kind"],
           "unknown kind '" + kind + "'; expected switch, fat-tree, ring, torus or mesh");
  dim.size = r.integer(r.required(node, "size", where), 0, kMaxPositions);
  if (node["nvls"]) dim.nvls = r.scalar(node["nvls"]) == "true";
  if (node["nvls"] && !dim.nvls && r.scalar(node["nvls"]) != "false")
    r.fail(node["nvls"], "expected true or false");
  if (node["nvls_efficiency"]) dim.nvls_efficiency = r.number(node["nvls_efficiency"], 0, true, 1);
  if (node["nvls_channels"]) dim.nvls_channels = r.integer(node["nvls_channels"], 1, 64);
  if (node["rails"]) dim.rails = r.integer(node["rails"], 1, kMaxRails);
  if (node["servers_per_leaf"])
    dim.servers_per_leaf = r.integer(node["servers_per_leaf"], 0, kMaxPositions);
  if (node["oversubscription"])
    dim.oversubscription =
        r.number(node["oversubscription"], 1, false, std::numeric_limits<double>::infinity());
  for (const auto& [key, field] : {std::pair<const char*, std::optional<Bandwidth>*>{
                                       "ll_busbw_two_servers", &dim.ll_busbw_two_servers},
                                   {"ll_busbw_more_servers", &dim.ll_busbw_more_servers}}) {
    if (!node[key]) continue;
    *field = r.quantity(node[key], parse_bandwidth);
    const double cap = field->value().in_bytes_per_second();
    if (!(cap >= Topology::kMinBandwidth && cap <= Topology::kMaxBandwidth))
      r.fail(node[key],
             "expected a bandwidth between 1 MB/s and 1 PB/s, found '" + r.scalar(node[key]) + "'");
  }
  return {dim};
}

}  // namespace

Cluster parse_cluster_yaml(std::string_view text, const std::string& source) {
  const YamlFields r(source);
  const YAML::Node root = r.load(text);
  if (!root || !root.IsMap())
    throw InputError({source, 1}, "expected a YAML mapping describing a cluster");
  if (is_astra_sim_network(root)) return parse_astra_sim_network(r, root);
  r.only_keys(root,
              {"name", "aliases", "description", "gpu", "network", "placement",
               "price_per_gpu_hour", "price_source", "protocols"},
              "the cluster");
  Cluster c;
  c.source = source;
  c.name = r.scalar(r.required(root, "name", "the cluster"));
  if (const YAML::Node aliases = root["aliases"]) {
    if (!aliases.IsSequence()) r.fail(aliases, "expected aliases as a list such as [dgx-h100]");
    for (const auto& alias : aliases)
      c.aliases.push_back(r.scalar(alias));
  }
  if (root["description"]) c.description = r.scalar(root["description"]);
  if (root["gpu"]) c.gpu = r.scalar(root["gpu"]);
  if (const YAML::Node price = root["price_per_gpu_hour"]) {
    const std::string price_text = r.scalar(price);
    const auto usd = parse_double(trim(price_text));
    if (!usd || !(*usd > 0) || !std::isfinite(*usd))
      r.fail(price, "expected price_per_gpu_hour as a positive number of US dollars, found '" +
                        price_text + "'");
    c.price_per_gpu_hour = *usd;
  }
  if (root["price_source"]) c.price_source = r.scalar(root["price_source"]);

  const YAML::Node network = r.required(root, "network", "the cluster");
  if (!network.IsSequence() || network.size() == 0)
    r.fail(network, "expected 'network' to list the dimensions, innermost first");
  std::vector<Dimension> dims;
  for (size_t i = 0; i < network.size(); ++i)
    for (Dimension& d : parse_dimension(r, network[i], i))
      dims.push_back(std::move(d));
  try {
    c.network = Topology(std::move(dims));
  } catch (const std::invalid_argument& e) {
    r.fail(network, std::string("expected a consistent network: ") + e.what());
  }
  if (const YAML::Node p = root["protocols"]) {
    const std::string protocols = r.scalar(p);
    if (protocols != "nccl" && protocols != "ideal")
      r.fail(p, "expected protocols: nccl or ideal, found '" + protocols + "'");
    c.network.set_ideal_links(protocols == "ideal");
  }
  // A GPU with a device preset lends the network its memory bandwidth (own-shard copies) and the
  // simulators its compute units (collectives overlapping compute take some of them).
  if (const std::string_view device = device_preset_text(c.gpu);
      !c.gpu.empty() && !device.empty()) {
    const Device d = parse_device_yaml(device, "preset " + c.gpu);
    c.network.set_gpu_memory(d.memory_bandwidth);
    c.gpu_compute_units = d.compute_units;
    c.gpu_contention_overhead = d.contention_overhead;
  }

  if (const YAML::Node p = root["placement"]) {
    if (!p.IsSequence()) r.fail(p, "expected placement as a list such as [tp, ep, dp, pp]");
    std::string joined;
    for (const auto& item : p)
      joined += (joined.empty() ? "" : ",") + r.scalar(item);
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
                     "), a YAML file or Calculon's system JSON; no such file");
  }
  std::ifstream in(name_or_path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (std::filesystem::path(name_or_path).extension() == ".json")
    return parse_calculon_system(buffer.str(), name_or_path);
  return parse_cluster_yaml(buffer.str(), name_or_path);
}

}  // namespace orrery
