#include "cluster/astra_sim_system.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "core/diagnostics.h"
#include "core/json_fields.h"

namespace orrery {
namespace {

using nlohmann::json;

// Keys that change nothing Orrery models, with why.
const std::map<std::string, std::string>& ignored_keys() {
  static const std::map<std::string, std::string> keys = {
      {"scheduling-policy", "Orrery issues collectives in the trace's dependency order"},
      {"intra-dimension-scheduling", "Orrery issues collectives in the trace's dependency order"},
      {"inter-dimension-scheduling", "Orrery issues collectives in the trace's dependency order"},
      {"collective-optimization", "Orrery sizes each dimension's phase by the data it holds"},
      {"boost-mode", "Orrery itself simulates ranks that run alike once"},
      {"roofline-enabled", "compute is priced by Orrery's device model"},
      {"peak-perf", "compute is priced by Orrery's device model"},
      {"replay-only", "not a simulation setting"},
      {"track-local-mem", "not a simulation setting"},
      {"local-mem-trace-filename", "not a simulation setting"}};
  return keys;
}

const std::map<std::string, Algorithm>& implementations() {
  static const std::map<std::string, Algorithm> names = {
      {"ring", Algorithm::Ring},
      {"direct", Algorithm::Direct},
      {"halvingDoubling", Algorithm::HalvingDoubling},
      {"doubleBinaryTree", Algorithm::Tree}};
  return names;
}

}  // namespace

AstraSimSystem parse_astra_sim_system(const std::string& text, const std::string& source) {
  const JsonFields fields(text, source, "ASTRA-sim's system JSON");
  const json root = fields.load();
  AstraSimSystem s;
  const auto names = [&](const std::string& key) {
    std::vector<std::string> out;
    const json& v = root[key];
    if (!v.is_array() || v.empty())
      fields.fail(key, "expected a list of implementations, one per dimension");
    for (const json& item : v) {
      if (!item.is_string()) fields.fail(key, "expected implementation names such as \"ring\"");
      out.push_back(item.get<std::string>());
    }
    return out;
  };
  constexpr int64_t kMostChunks = 4096;
  for (const auto& item : root.items()) {
    const std::string& key = item.key();
    if (key == "preferred-dataset-splits") {
      s.dataset_splits = fields.integer(root, key, 1, kMostChunks);
    } else if (key == "active-chunks-per-dimension") {
      s.active_chunks = fields.integer(root, key, 1, kMostChunks);
    } else if (key == "endpoint-delay") {  // nanoseconds
      s.endpoint_delay = Time::from_seconds(fields.number(root, key, 0, false, 1e9) * 1e-9);
    } else if (key == "local-mem-bw") {  // GB/s
      s.local_memory = Bandwidth::gb_per_second(fields.number(root, key, 0, true, 1e6));
    } else if (key == "all-reduce-implementation") {
      s.all_reduce = names(key);
    } else if (key == "all-gather-implementation") {
      s.all_gather = names(key);
    } else if (key == "reduce-scatter-implementation") {
      s.reduce_scatter = names(key);
    } else if (key == "all-to-all-implementation") {
      s.all_to_all = names(key);
    } else if (const auto ignored = ignored_keys().find(key); ignored != ignored_keys().end()) {
      s.warnings.push_back(source + ": ASTRA-sim system key '" + key +
                           "' ignored: " + ignored->second);
    } else {
      s.warnings.push_back(source + ": ASTRA-sim system key '" + key +
                           "' has no counterpart in Orrery; ignored");
    }
  }
  return s;
}

std::optional<Algorithm> apply_astra_sim_system(AstraSimSystem& s, Cluster& cluster,
                                                const std::string& source) {
  const size_t dims = cluster.network.size();
  std::set<std::string> named;
  for (const auto* list : {&s.all_reduce, &s.all_gather, &s.reduce_scatter, &s.all_to_all}) {
    if (!list->empty() && list->size() != dims)
      throw InputError({source, 0}, "expected one implementation per network dimension (" +
                                        std::to_string(dims) + "), found " +
                                        std::to_string(list->size()));
    named.insert(list->begin(), list->end());
  }
  std::optional<Algorithm> algorithm;
  if (named.size() == 1 && implementations().contains(*named.begin())) {
    algorithm = implementations().at(*named.begin());
    if (*algorithm == Algorithm::Ring && dims > 1) algorithm = Algorithm::Hierarchical;
  } else if (!named.empty()) {
    std::string list;
    for (const std::string& n : named)
      list += (list.empty() ? "" : ", ") + n;
    s.warnings.push_back(source + ": implementations " + list +
                         ": Orrery runs one algorithm per collective across all dimensions and "
                         "knows ring, direct, halvingDoubling and doubleBinaryTree; it picks its "
                         "own (--algo auto)");
  }

  if (std::find(s.all_to_all.begin(), s.all_to_all.end(), "ring") != s.all_to_all.end())
    s.warnings.push_back(source +
                         ": all-to-all-implementation ring: ASTRA-sim forwards each piece hop by "
                         "hop around the ring; Orrery sends every pair at once (direct), so its "
                         "all-to-all is not ASTRA-sim's (docs/chakra.md, Validation)");
  const int64_t batches = (s.dataset_splits + s.active_chunks - 1) / s.active_chunks;
  std::vector<Dimension> out = cluster.network.dimensions();
  for (Dimension& d : out) {
    d.latency = (d.latency + s.endpoint_delay) * batches;
    if (d.kind == DimensionKind::Ring && algorithm &&
        (*algorithm == Algorithm::Ring || *algorithm == Algorithm::Hierarchical))
      d.link_bandwidth = Bandwidth::bytes_per_second(d.link_bandwidth.in_bytes_per_second() / 2);
  }
  try {
    cluster.network = cluster.network.with_dimensions(std::move(out));
  } catch (const std::invalid_argument& e) {
    throw InputError({source, 0}, std::string("the system's settings: ") + e.what());
  }
  if (s.local_memory) cluster.network.set_reduction_memory(s.local_memory);
  cluster.name += " with system " + source;
  return algorithm;
}

}  // namespace orrery
