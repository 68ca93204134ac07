// The physical links of a Topology for a given number of GPUs, and routes between GPUs.
//
// Links are directed, with the capacity of one direction (effective bandwidth):
//   switch   each GPU's port: up (GPU -> switch) and down (switch -> GPU)
//   fat-tree each server's NIC per rail: up (NIC -> leaf) and down; each leaf's links to every
//            spine: up and down, at NIC rate / oversubscription. Leaves are per (rail, pod of
//            servers_per_leaf servers); spines are shared by all leaves (servers_per_leaf of them)
//   ring     each GPU's link to its next and its previous neighbour along the dimension; a slice
//            wraps at the positions it occupies (a torus of its own extent)
//   mesh     each GPU's link to every other position of the dimension
// Routes are dimension-order, innermost first: a transfer first moves inside its switch domain to
// the GPU with the destination's local position, then crosses the fat-tree on that GPU's rail
// (as NCCL's PXN does), so rail-aligned traffic meets a spine only between pods. Rings take the
// shorter direction hop by hop (when both are equally short, even positions go forward and odd
// ones back). Among spines, a hash of the transfer picks one (ECMP).
//
// Link loads (the analytical model, collective_model.h) use the same routes, with a transfer
// that crosses spines spread evenly over all of them (ideal ECMP; flow mode's hash may collide).
//
// Every link of a family (a dimension's links; a fat-tree's NICs, and its leaf-spine links) has
// the same capacity, kept once per family: a graph costs memory for its dimensions, not its
// links, so that the analytical model of a million GPUs never allocates per-link state for the
// whole network (collective_model.h prices alike groups on a compact graph of their servers).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/bandwidth.h"
#include "core/time.h"
#include "network/topology.h"

namespace orrery {

using LinkId = uint32_t;

class LinkGraph {
 public:
  // Throws InputError when the network would have more than kMaxLinks links for `gpus`.
  LinkGraph(const Topology& topology, int64_t gpus);

  // The most links a graph may hold (about 0.5 GB of per-link state in flow mode).
  static constexpr int64_t kMaxLinks = int64_t{1} << 26;

  const Topology& topology() const { return topology_; }
  size_t link_count() const { return link_count_; }
  double capacity(LinkId link) const;      // bytes per second
  std::vector<double> capacities() const;  // of every link, by LinkId
  std::string link_name(LinkId link) const;
  int64_t gpus() const { return gpus_; }

  // Appends the links from GPU `src` to GPU `dst` to `path` and returns the route's latency (the
  // largest step latency of the dimensions crossed; ring latencies add up per hop).
  Time route(int64_t src, int64_t dst, uint64_t hash, std::vector<LinkId>& path) const;

  // What the routes between `src` and `dst` cross, both ways: each route's latency and, per
  // tier of links (a dimension's links inside servers or along it; a fat-tree's leaf-spine
  // links), how many times each link of it is crossed, sorted (the two routes may share a
  // link). Every link of a tier has one capacity, so two pairs of one class load links of equal
  // capacity alike, with the same latencies: on an otherwise idle network their transfers cost
  // the same.
  std::vector<int64_t> route_class(int64_t src, int64_t dst) const;

  // The port of `gpu` into (up) or out of its switch in switch dimension `d`.
  LinkId switch_port(size_t d, int64_t gpu, bool up) const;

  // The same cable crossed the other way (a port's down for its up, a ring link from the next
  // position back, a mesh link from the peer).
  LinkId reverse(LinkId link) const;

  // Loads: bytes per link, indexed by LinkId (size link_count()), to be read with busiest().
  // Adds `bytes` on every link of the route from `src` to `dst`, or with `mirror` on the route
  // from `dst` to `src` crossed the other way (a reduce retracing a broadcast), the spine hop
  // spread evenly over all spines; returns the route's latency.
  Time add_route_load(int64_t src, int64_t dst, double bytes, bool mirror,
                      std::vector<double>& load) const;
  // Adds the loads of every ordered pair of distinct `members` sending `bytes` to each other
  // (routed as route() does, spines spread), counted per dimension line rather than pair by pair:
  // pairs (s, t) cross dimension d in the line of t's coordinates inside d and s's outside it.
  void add_all_pairs_load(std::span<const int64_t> members, double bytes,
                          std::vector<double>& load) const;
  // The longest time a link of dimension d takes to carry its load: max of load / capacity.
  double busiest(const std::vector<double>& load, size_t d) const;
  // The same without a fat-tree's leaf-spine links: the links inside servers and their NICs.
  double busiest_in_servers(const std::vector<double>& load, size_t d) const;

  // The leaf-spine tier of fat-tree dimension d for this many GPUs: a leaf per (rail, pod of
  // per_leaf servers), each with a link up to and down from every spine, of uplink_capacity
  // (bytes per second) each.
  struct Leaves {
    int64_t servers = 0, per_leaf = 0, pods = 0, spines = 0, rails = 0;
    double uplink_capacity = 0;
  };
  Leaves leaves(size_t d) const;

 private:
  struct Family {  // the links of one dimension
    LinkId base = 0;
    LinkId count = 0;
    double capacity = 0;                        // bytes per second (fat-tree: a NIC's)
    double uplink_capacity = 0;                 // fat-tree: a leaf-spine link's
    int64_t servers = 0, pods = 0, spines = 0;  // fat-tree
  };

  int64_t rank_of(const std::vector<int64_t>& coords) const;
  std::vector<int64_t> coords_of(int64_t rank) const;  // inverse of rank_of
  // Fat-tree dimension d: the first leaf-spine link, and the leaf-spine links' load slot of a
  // leaf and direction (loads keep a leaf's spine traffic in its spine-0 link, spread when read).
  LinkId uplinks(size_t d) const;
  int64_t server_of(size_t d, const std::vector<int64_t>& coords) const;  // fat-tree block index
  int64_t rail_of(size_t d, const std::vector<int64_t>& coords) const;

  const Topology& topology_;
  int64_t gpus_ = 0;
  std::vector<int64_t> extent_;  // size of each dimension for this many GPUs
  std::vector<Family> family_;
  size_t link_count_ = 0;
};

}  // namespace orrery
