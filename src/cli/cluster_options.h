// The cluster flags `orrery simulate` and `orrery collective` share: --cluster and the overrides
// of its links and servers. A bare bandwidth is GB/s (10^9 B/s); an override of one link keeps the
// preset's efficiency unless --nvlink-efficiency / --nic-efficiency say otherwise (SimAI's -nv and
// -nic, expanded by simai_flag_aliases, are SimAI's bus bandwidths in GiB/s at efficiency 1).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "network/collective_algorithms.h"

namespace orrery {

// The default cluster of every subcommand; SimAI-compatible runs default to simai-default.
constexpr const char* kDefaultCluster = "hgx-h100";
constexpr const char* kSimaiCluster = "simai-default";

struct ClusterArgs {
  std::string cluster;  // empty: the command's default
  std::optional<std::string> nvlink_busbw, nic_busbw;
  std::optional<double> nvlink_efficiency, nic_efficiency;
  std::optional<int64_t> nics_per_server, gpus_per_server;
  std::string placement;  // simulate only
  std::string system;     // ASTRA-sim system JSON (--system)

  // Whether any override of the cluster was given (not --cluster itself).
  bool overridden() const;
};

// Registers --cluster, --system, --nvlink-busbw, --nic-busbw, --nvlink-efficiency,
// --nic-efficiency, --nics-per-server and --gpus-per-server (and --placement when `placement`).
void add_cluster_options(CLI::App& command, ClusterArgs& args, const std::string& cluster_help,
                         bool placement);

// A cluster as the flags make it. Its name says what was overridden ("simai-default with
// --nic-busbw 25 GB/s"), never the preset's name alone for a modified preset.
struct EffectiveCluster {
  Cluster cluster;
  std::string source;                  // the preset name or file the flags started from
  std::vector<std::string> overrides;  // "--nic-busbw 25 GB/s", ... in a fixed order
  // The algorithm an ASTRA-sim system file names for every collective (nullopt: none named).
  std::optional<Algorithm> system_algorithm;
  std::vector<std::string> warnings;  // what a peer's cluster or system file could not map
};

// `fallback` names the cluster when --cluster is not given. Throws InputError naming the flag.
EffectiveCluster effective_cluster(const ClusterArgs& args, const std::string& fallback);

// The collective algorithm of a run: --algo when given (other than auto), else the one the
// ASTRA-sim system file names, else auto. A --algo that overrides the system file is warned of
// in `cluster.warnings`.
Algorithm run_algorithm(const std::string& algo_flag, EffectiveCluster& cluster);

}  // namespace orrery
