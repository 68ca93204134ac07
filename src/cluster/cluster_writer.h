// Writes a Cluster back as YAML in the schema parse_cluster_yaml() reads (docs/clusters.md), so
// that a cluster built or changed by Orrery (e.g. `orrery calibrate`) can be loaded with
// `--cluster FILE`. Every value reads back exactly: bandwidths in the shortest unit that parses
// back to the same value, latencies in us where that does, numbers as the shortest decimal that
// does. A torus is written as its ring dimensions.
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster.h"

namespace orrery {

// The cluster's YAML, preceded by `comment` as comment lines ("# " + line).
std::string cluster_yaml(const Cluster& cluster, const std::vector<std::string>& comment = {});

// "450 GB/s", "48.5 GiB/s": the shortest text parse_bandwidth() reads back as `bandwidth`; with
// `bits`, in Gb/s where that reads back and is short ("400 Gb/s", as NICs are sold).
std::string format_bandwidth_exact(Bandwidth bandwidth, bool bits = false);
// "3.42 us", "14 us", "0 us": in us where that reads back as `time`, else ns, ..., ps.
std::string format_duration_exact(Time time);

}  // namespace orrery
