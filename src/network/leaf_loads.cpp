#include "network/leaf_loads.h"

#include <algorithm>
#include <map>

namespace orrery {
namespace {

// (pod, members) of `servers` (ascending) shifted by `phase`, ascending.
std::vector<std::pair<int64_t, double>> per_pod(const std::vector<int64_t>& servers, int64_t phase,
                                                int64_t per_leaf) {
  std::vector<std::pair<int64_t, double>> pods;
  for (const int64_t s : servers) {
    const int64_t pod = (s + phase) / per_leaf;
    if (pods.empty() || pods.back().first != pod) pods.emplace_back(pod, 0.0);
    pods.back().second += 1;
  }
  return pods;
}

double count(const std::vector<std::pair<int64_t, double>>& pods, int64_t pod) {
  const auto it = std::lower_bound(pods.begin(), pods.end(), std::pair<int64_t, double>{pod, -1.0});
  return it != pods.end() && it->first == pod ? it->second : 0.0;
}

}  // namespace

LeafLoads::LeafLoads(const LinkGraph& links, const GroupKind& kind)
    : leaves_(links.leaves(links.topology().size() - 1)),
      kind_(kind),
      topology_(links.topology()) {}

void LeafLoads::clear() {
  crossings_.clear();
  all_pairs_.clear();
  all_pairs_units_.clear();
}

void LeafLoads::add(int64_t from, int64_t to, int64_t rail, double units) {
  if (active() && from != to) crossings_.push_back({from, to, rail, units});
}

void LeafLoads::add_all_pairs(std::span<const int64_t> members, double units) {
  if (!active() || members.size() < 2) return;
  all_pairs_.emplace_back(members.begin(), members.end());
  std::sort(all_pairs_.back().begin(), all_pairs_.back().end());
  all_pairs_units_.push_back(units);
}

void LeafLoads::contributions(int64_t phase, std::vector<std::pair<int64_t, double>>& out) const {
  const int64_t per_leaf = leaves_.per_leaf;
  for (const Crossing& c : crossings_) {
    const int64_t from = (c.from + phase) / per_leaf, to = (c.to + phase) / per_leaf;
    if (from == to) continue;
    out.emplace_back(slot(c.rail, from, false), c.units);
    out.emplace_back(slot(c.rail, to, true), c.units);
  }
  const size_t outer = topology_.size() - 1;
  for (size_t i = 0; i < all_pairs_.size(); ++i) {
    const std::vector<int64_t>& members = all_pairs_[i];
    const double units = all_pairs_units_[i];
    // Sources: every member; destinations by their position in the server, whose rail the
    // pairs cross on (LinkGraph::add_all_pairs_load).
    std::vector<int64_t> servers(members.size());
    std::map<int64_t, std::vector<int64_t>> by_local;
    for (size_t m = 0; m < members.size(); ++m) {
      servers[m] = members[m] / kind_.server_gpus;
      by_local[members[m] % kind_.server_gpus].push_back(servers[m]);
    }
    const auto out_pods = per_pod(servers, phase, per_leaf);
    const auto total = static_cast<double>(members.size());
    for (const auto& [local, at] : by_local) {
      const int64_t rail = topology_.rail_of(outer, local);
      const auto in_pods = per_pod(at, phase, per_leaf);
      const auto targets = static_cast<double>(at.size());
      for (const auto& [pod, u] : out_pods)
        out.emplace_back(slot(rail, pod, false), u * (targets - count(in_pods, pod)) * units);
      for (const auto& [pod, v] : in_pods)
        out.emplace_back(slot(rail, pod, true), v * (total - count(out_pods, pod)) * units);
    }
  }
}

double LeafLoads::busiest() const {
  if (!active() || (crossings_.empty() && all_pairs_.empty())) return 0;
  const int64_t per_leaf = leaves_.per_leaf;
  // Clusters by phase: each phase's contributions are worked out once.
  if (pods_by_phase_.empty())
    for (const int64_t k : kind_.shift_list())
      pods_by_phase_[k % per_leaf].push_back(k / per_leaf);
  std::vector<double> load(static_cast<size_t>(leaves_.rails * leaves_.pods * 2), 0.0);
  std::vector<std::pair<int64_t, double>> c;
  for (const auto& [phase, pods] : pods_by_phase_) {
    c.clear();
    contributions(phase, c);
    for (const int64_t pod : pods)
      for (const auto& [s, units] : c)
        load[static_cast<size_t>(s + 2 * pod)] += units;
  }
  double most = 0;
  for (const double l : load)
    most = std::max(most, l);
  return most / static_cast<double>(leaves_.spines) / leaves_.uplink_capacity;
}

}  // namespace orrery
