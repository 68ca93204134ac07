// The load a compact kind of groups (group_kind.h) puts on the leaf-spine links of the fat-tree,
// its outermost dimension: the representative cluster's transfers, given once, added up over
// every cluster as the job lays them out. Loads are in the step's units (collective_flows.h),
// read as the busiest leaf-spine link's load / capacity (seconds per unit), with a leaf's
// traffic spread evenly over its spines as LinkGraph::busiest() spreads it.
//
// A transfer between servers a and b on rail r leaves leaf (r, pod(a)) for the spines and enters
// leaf (r, pod(b)) when the pods differ (pod = server / servers_per_leaf). A cluster shifted by
// k servers moves its pods by k / servers_per_leaf and its phase to k mod servers_per_leaf, so
// the cluster's leaf traffic is worked out once per phase that occurs (at most servers_per_leaf
// of them) and added at each copy's pod: the work follows the leaves the clusters reach, never
// their transfers times their number.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "network/group_kind.h"
#include "network/link_graph.h"

namespace orrery {

class LeafLoads {
 public:
  // `links`: the job's whole network; its outermost dimension is the fat-tree. Both must outlive
  // this.
  LeafLoads(const LinkGraph& links, const GroupKind& kind);

  // Whether leaf-spine links can carry anything (the job spans more than one pod).
  bool active() const { return leaves_.pods > 1; }

  void clear();
  // `units` from server `from` to server `to` (ids in the whole network) on `rail`.
  void add(int64_t from, int64_t to, int64_t rail, double units);
  // Every ordered pair of distinct `members` (GPU ids in the whole network) sending `units`,
  // routed as LinkGraph::add_all_pairs_load routes them (on the rail of the destination).
  void add_all_pairs(std::span<const int64_t> members, double units);

  // The longest time a leaf-spine link takes to carry its load: load / spines / capacity.
  double busiest() const;

 private:
  struct Crossing {
    int64_t from = 0, to = 0, rail = 0;
    double units = 0;
  };
  // The cluster's leaf loads with its servers shifted by `phase`, as (slot, load) with pods
  // counted from the cluster's own.
  void contributions(int64_t phase, std::vector<std::pair<int64_t, double>>& out) const;
  int64_t slot(int64_t rail, int64_t pod, bool down) const {
    return (rail * leaves_.pods + pod) * 2 + (down ? 1 : 0);
  }

  LinkGraph::Leaves leaves_;
  const GroupKind& kind_;
  // Every cluster's pod offset, by its phase: listed at the first step with crossings (a kind
  // whose transfers stay in their servers never lists its clusters).
  mutable std::map<int64_t, std::vector<int64_t>> pods_by_phase_;
  std::vector<Crossing> crossings_;
  std::vector<std::vector<int64_t>> all_pairs_;
  std::vector<double> all_pairs_units_;
  const Topology& topology_;
};

}  // namespace orrery
