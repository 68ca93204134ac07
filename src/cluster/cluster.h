// A cluster: GPUs on a network of hierarchical dimensions (NVSwitch domains, fat-trees, tori,
// meshes) and the default rank placement. Read from YAML (schema in docs/clusters.md) or taken
// from a built-in preset (data/presets/clusters/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/device.h"
#include "network/topology.h"

namespace orrery {

struct Cluster {
  std::string name;
  std::string description;
  std::string source;  // "preset" or the file it was read from
  std::string gpu;     // accelerator model name
  // The accelerator itself where the cluster's file describes it (a Calculon system): it prices
  // compute in place of the device preset `gpu` would name.
  std::optional<Device> device;
  int64_t gpu_compute_units = 0;       // its SMs when a device preset knows it, else 0
  double gpu_contention_overhead = 0;  // its Device::contention_overhead, likewise

  // Other preset names it answers to, e.g. "dgx-h100" for hgx-h100.
  std::vector<std::string> aliases;
  // A public on-demand list price per GPU-hour in US dollars, and where and when it was listed.
  std::optional<double> price_per_gpu_hour;
  std::string price_source;

  Topology network;
  // What reading a peer's file (an ASTRA-sim network) could not map; the commands warn of each.
  std::vector<std::string> warnings;
  // Parallel axes innermost first; names from {tp, ep, dp, pp}, each exactly once.
  std::vector<std::string> placement = {"tp", "ep", "dp", "pp"};

  // GPUs in the innermost dimension (a server for switch + fat-tree clusters).
  int64_t gpus_per_server() const { return network[0].size; }
  // The first fat-tree dimension (the scale-out network), if any.
  std::optional<size_t> scale_out() const;
};

// Parses a cluster description; throws InputError naming `source` and the line.
Cluster parse_cluster_yaml(std::string_view text, const std::string& source);

// A preset name (see cluster_preset_names()), a path to a YAML file, or a path ending in .json to
// Calculon's system JSON (calculon_system.h); throws InputError.
Cluster load_cluster(const std::string& name_or_path);

// Validates a placement order given as "tp,ep,dp,pp"; throws InputError.
std::vector<std::string> parse_placement(std::string_view text, const std::string& source);

}  // namespace orrery
