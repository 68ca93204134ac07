// A cluster: servers of GPUs joined by a scale-up fabric inside each server and a scale-out NIC
// network between servers, plus the default rank placement. Read from YAML (schema in
// docs/clusters.md) or taken from a built-in preset (data/presets/clusters/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "network/server_network.h"

namespace orrery {

struct Cluster {
  std::string name;
  std::string description;
  std::string source;  // "preset" or the file it was read from
  std::string gpu;     // accelerator model name

  int64_t gpus_per_server = 8;
  int64_t servers = 0;  // 0: as many as a job needs

  std::string scale_up_kind;  // e.g. "nvswitch"
  Tier scale_up;              // per GPU, per direction

  std::string scale_out_kind;  // e.g. "rail-optimized fat-tree"
  int64_t nics_per_server = 8;
  Tier nic;  // per NIC, per direction

  // Parallel axes innermost first; names from {tp, ep, dp, pp}, each exactly once.
  std::vector<std::string> placement = {"tp", "ep", "dp", "pp"};

  // The network with per-GPU scale-out bandwidth (NICs shared evenly by a server's GPUs).
  ServerNetwork network() const;
};

// Parses a cluster description; throws InputError naming `source` and the line.
Cluster parse_cluster_yaml(std::string_view text, const std::string& source);

// A preset name (see cluster_preset_names()) or a path to a YAML file; throws InputError.
Cluster load_cluster(const std::string& name_or_path);

// Validates and sets a placement order given as "tp,ep,dp,pp"; throws InputError.
std::vector<std::string> parse_placement(std::string_view text, const std::string& source);

}  // namespace orrery
