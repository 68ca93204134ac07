#include "cluster/astra_sim_system.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/diagnostics.h"

namespace orrery {
namespace {

using nlohmann::json;

// The 1-based line of the first occurrence of "key" in the text (1 if absent): JSON parsers keep
// no positions, and each key appears once in a system file.
int64_t line_of(const std::string& text, const std::string& key) {
  const size_t at = text.find('"' + key + '"');
  if (at == std::string::npos) return 1;
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
}

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
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto offset = static_cast<std::ptrdiff_t>(std::min(e.byte, text.size()));
    throw InputError({source, 1 + std::count(text.begin(), text.begin() + offset, '\n')},
                     "expected ASTRA-sim's system JSON: " + std::string(e.what()));
  }
  if (!root.is_object()) throw InputError({source, 1}, "expected ASTRA-sim's system JSON object");
  AstraSimSystem s;
  const auto integer = [&](const std::string& key) -> int64_t {
    constexpr int64_t kMost = 4096;
    const json& v = root[key];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMost)
      throw InputError({source, line_of(text, key)},
                       "expected '" + key + "' as an integer from 1 to " + std::to_string(kMost));
    return v.get<int64_t>();
  };
  const auto names = [&](const std::string& key) {
    std::vector<std::string> out;
    const json& v = root[key];
    if (!v.is_array() || v.empty())
      throw InputError({source, line_of(text, key)},
                       "expected '" + key + "' as a list of implementations, one per dimension");
    for (const json& item : v) {
      if (!item.is_string())
        throw InputError({source, line_of(text, key)},
                         "expected '" + key + "' to list implementation names such as \"ring\"");
      out.push_back(item.get<std::string>());
    }
    return out;
  };
  for (const auto& [key, value] : root.items()) {
    if (key == "preferred-dataset-splits") {
      s.dataset_splits = integer(key);
    } else if (key == "active-chunks-per-dimension") {
      s.active_chunks = integer(key);
    } else if (key == "endpoint-delay") {
      if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 1e9)
        throw InputError({source, line_of(text, key)},
                         "expected 'endpoint-delay' as nanoseconds between 0 and 10^9");
      s.endpoint_delay = Time::from_seconds(value.get<double>() * 1e-9);
    } else if (key == "local-mem-bw") {
      if (!value.is_number() || value.get<double>() <= 0 || value.get<double>() > 1e6)
        throw InputError({source, line_of(text, key)},
                         "expected 'local-mem-bw' as GB/s above 0 and at most 10^6");
      s.local_memory = Bandwidth::gb_per_second(value.get<double>());
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
