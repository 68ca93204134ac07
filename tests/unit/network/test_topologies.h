// Networks written out for the network tests, so every expected time can be derived by hand.
#pragma once

#include <algorithm>
#include <vector>

#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "network/topology.h"

namespace orrery::testing {

inline Dimension dimension(const char* name, DimensionKind kind, int64_t size,
                           double gb_per_second) {
  Dimension d;
  d.name = name;
  d.kind = kind;
  d.size = size;
  d.link_bandwidth = Bandwidth::gb_per_second(gb_per_second);
  return d;
}

// The same network with ideal links (no protocol effects), so that times follow the step
// decomposition alone.
inline Topology ideal(Topology t) {
  t.set_ideal_links(true);
  return t;
}

// Servers of 8 GPUs on a switch (100 GB/s port, 1 us per step), joined by a fat-tree of 8 rails
// of 25 GB/s NICs (25 GB/s per GPU, 5 us per step), 4 servers per leaf, 2:1 oversubscribed.
inline Topology two_tier(bool nvls = false) {
  Dimension nvlink;
  nvlink.name = "nvlink";
  nvlink.kind = DimensionKind::Switch;
  nvlink.size = 8;
  nvlink.link_bandwidth = Bandwidth::gb_per_second(100);
  nvlink.latency = Time::from_us(1);
  nvlink.nvls = nvls;
  nvlink.nvls_efficiency = 0.8;
  Dimension fabric;
  fabric.name = "fabric";
  fabric.kind = DimensionKind::FatTree;
  fabric.size = 0;
  fabric.rails = 8;
  fabric.link_bandwidth = Bandwidth::gb_per_second(25);
  fabric.latency = Time::from_us(5);
  fabric.servers_per_leaf = 4;
  fabric.oversubscription = 2;
  Topology t({nvlink, fabric});
  t.set_ideal_links(true);
  return t;
}

// Servers of 8 GPUs (450 GB/s switch) on a rail-optimised fat-tree of `positions` servers (8
// rails of 50 GB/s, leaves of `per_leaf` servers, 8:1 oversubscribed), copies of it joined by an
// outer switch of 25 GB/s: a fat-tree with a dimension outside it, whose leaves need not divide
// its positions.
inline Topology fat_tree_inside_a_switch(int64_t positions, int64_t per_leaf) {
  std::vector<Dimension> dims = {dimension("nvlink", DimensionKind::Switch, 8, 450),
                                 dimension("fabric", DimensionKind::FatTree, positions, 50),
                                 dimension("outer", DimensionKind::Switch, 0, 25)};
  dims[1].rails = 8;
  dims[1].servers_per_leaf = per_leaf;
  dims[1].oversubscription = 8;
  return Topology(dims);
}

// A 4 x 4 x 4 torus: 50 GB/s links, 1 us per hop.
inline Topology torus() {
  std::vector<Dimension> dims;
  for (const char* axis : {"x", "y", "z"}) {
    Dimension d;
    d.name = axis;
    d.kind = DimensionKind::Ring;
    d.size = 4;
    d.link_bandwidth = Bandwidth::gb_per_second(50);
    d.latency = Time::from_us(1);
    dims.push_back(d);
  }
  Topology t(dims);
  t.set_ideal_links(true);
  return t;
}

inline GroupShape shape(int64_t ranks, std::vector<int64_t> span, bool crosses_leaves = false) {
  GroupShape g;
  g.ranks = ranks;
  g.span = std::move(span);
  g.crosses_leaves = crosses_leaves;
  return g;
}

// `n` GPU ids from `first`, `stride` apart.
inline std::vector<int64_t> ranks(int64_t n, int64_t stride = 1, int64_t first = 0) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    r[static_cast<size_t>(i)] = first + i * stride;
  return r;
}

// The analytical model of `groups` running at once on a network of `gpus` GPUs (0: up to the
// highest member), with the topology and link graph it refers to.
struct Model {
  Model(const Topology& t, std::vector<std::vector<int64_t>> groups, int64_t gpus = 0)
      : topology(t), links(topology, gpus ? gpus : highest(groups) + 1), model(links, groups) {}
  static int64_t highest(const std::vector<std::vector<int64_t>>& groups) {
    int64_t h = 0;
    for (const auto& g : groups)
      for (const int64_t r : g)
        h = std::max(h, r);
    return h;
  }
  Topology topology;
  LinkGraph links;
  CollectiveModel model;
};

}  // namespace orrery::testing
