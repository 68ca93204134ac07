// ASTRA-sim's analytical network description (its network YAML) read as an Orrery cluster.
//
// ASTRA-sim 2.0 describes a network as parallel lists, one entry per dimension, innermost first:
//   topology:   [Ring | FullyConnected | Switch, ...]
//   npus_count: [NPUs in the dimension, ...]
//   bandwidth:  [GB/s per link, ...]      ASTRA-sim's arithmetic counts a GB as 2^30 bytes
//   latency:    [ns per link traversal, ...]
// Mapping (docs/astra-sim.md): Ring -> a ring dimension, FullyConnected -> a mesh, Switch -> a
// switch; bandwidth -> the link bandwidth in GiB/s per direction at efficiency 1; latency -> the
// dimension's per-step latency; the links are ideal (protocols: ideal, the alpha-beta model
// ASTRA-sim's analytical backend uses). How ASTRA-sim's collectives use the links (one-way rings,
// chunks, endpoint delay) is its system file's business (astra_sim_system.h).
#pragma once

#include <string>

#include "cluster/cluster.h"
#include "core/yaml_fields.h"

namespace orrery {

// True when the YAML document is an ASTRA-sim network (it has `topology` and no `network`).
bool is_astra_sim_network(const YAML::Node& root);

// The network as a cluster named after `source`; keys other than the four above are reported in
// the cluster's warnings. Throws InputError naming the file, the line and what was expected.
Cluster parse_astra_sim_network(const YamlFields& fields, const YAML::Node& root);

}  // namespace orrery
