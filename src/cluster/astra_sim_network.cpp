#include "cluster/astra_sim_network.h"

#include <map>
#include <stdexcept>
#include <vector>

namespace orrery {
namespace {

constexpr const char* kKeys[] = {"topology", "npus_count", "bandwidth", "latency"};

const std::map<std::string, DimensionKind>& topologies() {
  static const std::map<std::string, DimensionKind> kinds = {
      {"Ring", DimensionKind::Ring},
      {"FullyConnected", DimensionKind::Mesh},
      {"Switch", DimensionKind::Switch}};
  return kinds;
}

// One of the parallel lists; every list has one entry per dimension.
YAML::Node list(const YamlFields& r, const YAML::Node& root, const std::string& key,
                size_t dimensions) {
  const YAML::Node node = r.required(root, key, "the ASTRA-sim network");
  if (!node.IsSequence() || node.size() == 0)
    r.fail(node, "expected '" + key + "' as a list with one entry per dimension, e.g. [ 8, 4 ]");
  if (dimensions > 0 && node.size() != dimensions)
    r.fail(node, "expected " + std::to_string(dimensions) + " entries in '" + key +
                     "' (one per entry of 'topology'), found " + std::to_string(node.size()));
  return node;
}

}  // namespace

bool is_astra_sim_network(const YAML::Node& root) {
  return root.IsMap() && root["topology"] && !root["network"];
}

Cluster parse_astra_sim_network(const YamlFields& r, const YAML::Node& root) {
  r.unique_keys(root);
  Cluster c;
  c.source = r.source();
  c.name = "ASTRA-sim network " + r.source();
  c.description = "ASTRA-sim analytical network read from " + r.source();
  for (const auto& entry : root) {
    const std::string key = r.key(entry.first);
    bool known = false;
    for (const char* k : kKeys)
      known = known || key == k;
    if (!known)
      c.warnings.push_back(r.source() + ": ASTRA-sim network key '" + key +
                           "' has no counterpart in Orrery; ignored");
  }
  const YAML::Node topology = list(r, root, "topology", 0);
  const size_t n = topology.size();
  const YAML::Node npus = list(r, root, "npus_count", n);
  const YAML::Node bandwidth = list(r, root, "bandwidth", n);
  const YAML::Node latency = list(r, root, "latency", n);

  std::vector<Dimension> dims;
  for (size_t i = 0; i < n; ++i) {
    Dimension d;
    const std::string kind = r.scalar(topology[i]);
    const auto found = topologies().find(kind);
    if (found == topologies().end())
      r.fail(topology[i], "expected Ring, FullyConnected or Switch, found '" + kind + "'");
    d.kind = found->second;
    d.name = kind + " " + std::to_string(i + 1);
    d.size = r.integer(npus[i], 1, Topology::kMaxCapacity);
    const double gib = r.number(bandwidth[i], 0, true, 1e6);  // GB/s as 2^30 B/s
    const double bytes_per_s = gib * 1073741824.0;
    if (bytes_per_s < Topology::kMinBandwidth)
      r.fail(bandwidth[i],
             "expected a bandwidth of at least 0.001 GB/s, found '" + r.scalar(bandwidth[i]) + "'");
    d.link_bandwidth = Bandwidth::bytes_per_second(bytes_per_s);
    d.latency = Time::from_seconds(r.number(latency[i], 0, false, 1e9) * 1e-9);  // ns
    d.efficiency = 1;
    dims.push_back(std::move(d));
  }
  try {
    c.network = Topology(std::move(dims));
  } catch (const std::invalid_argument& e) {
    r.fail(topology, std::string("expected a consistent network: ") + e.what());
  }
  c.network.set_ideal_links(true);
  return c;
}

}  // namespace orrery
