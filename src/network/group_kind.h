// The communicators of one kind in a job (every group formed by varying the same parallel axes,
// e.g. all of its data-parallel groups) as the analytical model prices them: where they lie
// alike, one cluster of them and where its copies sit, instead of every group.
//
// The network's outermost dimension is a fat-tree whose positions are servers (GPUs per server:
// the positions of the dimensions inside it). A rank's global id is its GPU, so a parallel axis
// whose stride is a whole number of servers moves a group by whole servers; the other axes move
// it inside its servers. The **representative cluster** is the groups that vary only in those
// inner axes, from rank 0; when they fill whole servers between them, every other cluster is the
// same groups shifted by a whole number of servers (Σ j_i x servers_i over the outer axes), on
// servers of its own. A route leaves its two servers only through the leaf-spine tier, so the
// links inside servers and their NICs carry one cluster's traffic each, the same for every
// cluster; only leaf-spine links, whose pods a shift need not keep, add up across clusters
// (network/leaf_loads.h). Pricing a kind thus routes one cluster, whatever the GPU count.
//
// Where this does not hold (another outermost dimension, servers not filled, groups of one
// cluster lying differently, a world that is not whole servers) every group is listed, as
// before.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "network/rank_placement.h"
#include "network/topology.h"

namespace orrery {

// `count` copies of a cluster, `servers` servers apart.
struct ServerShift {
  int64_t count = 1;
  int64_t servers = 0;
};

struct GroupKind {
  // Groups (GPU ids in rank order): the representative cluster's, or every group when not
  // compact; either way the first is the most spread of the kind (RankPlacement::groups).
  std::vector<std::vector<int64_t>> groups;
  bool compact = false;
  // Compact: the servers the listed groups fill (ascending), GPUs per server, and the shifts of
  // the other clusters: one at every sum of j_i x shifts[i].servers, 0 <= j_i < shifts[i].count.
  std::vector<int64_t> servers;
  int64_t server_gpus = 1;
  std::vector<ServerShift> shifts;
  // The most spread group's shape and whether every group has it (RankPlacement::group_shape).
  GroupShape shape;
  bool uniform = true;

  // Clusters in all (1 when not compact).
  int64_t clusters() const;
  // The shift of every cluster in servers, 0 (the representative) first.
  std::vector<int64_t> shift_list() const;
};

// The groups formed by varying `axes` of `placement`, compact where they lie alike.
GroupKind group_kind(const RankPlacement& placement, std::span<const size_t> axes);

// Explicit groups, listed as given (the first sets the shape).
GroupKind listed_kind(const Topology& topology, std::vector<std::vector<int64_t>> groups);

}  // namespace orrery
