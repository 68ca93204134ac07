// What produced a result, written as the `provenance` object of result.json and `--json`: the
// Orrery version, the command line, the cluster as it ran (its preset or file, the overrides
// given and every dimension's numbers after them), the device that priced compute (none: the
// workload file's times) and the SHA-256 of each input file. No timestamps, so that the same run
// gives the same bytes; pinned reference outputs leave the object out (tests/reference/).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

struct ProvenanceDimension {
  std::string name, kind;
  int64_t size = 0;
  int64_t rails = 0;          // fat-trees: NICs per server
  double bandwidth_GBps = 0;  // per link, per direction, 10^9 B/s
  double efficiency = 1;      // achievable fraction of it
  double latency_us = 0;      // per step
};

struct Provenance {
  std::string orrery;   // "orrery 0.1.0"
  std::string command;  // the command line as given, arguments quoted where the shell needs it
  std::string cluster;  // the effective cluster's name
  std::string cluster_source;          // the preset or file it started from
  std::vector<std::string> overrides;  // the flags that changed it
  std::string gpu;                     // the cluster's accelerator
  std::vector<ProvenanceDimension> dimensions;
  std::vector<std::string> devices;  // that priced compute, one per job; "" for a file's times
  std::vector<std::pair<std::string, std::string>> inputs;  // path, SHA-256
};

nlohmann::ordered_json provenance_json(const Provenance& p);

}  // namespace orrery
