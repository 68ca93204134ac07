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
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bandwidth.h"
#include "core/time.h"
#include "network/topology.h"

namespace orrery {

using LinkId = uint32_t;

class LinkGraph {
 public:
  LinkGraph(const Topology& topology, int64_t gpus);

  size_t link_count() const { return capacity_.size(); }
  double capacity(LinkId link) const { return capacity_[link]; }  // bytes per second
  std::string link_name(LinkId link) const;
  int64_t gpus() const { return gpus_; }

  // Appends the links from GPU `src` to GPU `dst` to `path` and returns the route's latency (the
  // largest step latency of the dimensions crossed; ring latencies add up per hop).
  Time route(int64_t src, int64_t dst, uint64_t hash, std::vector<LinkId>& path) const;

  // The port of `gpu` into (up) or out of its switch in switch dimension `d`.
  LinkId switch_port(size_t d, int64_t gpu, bool up) const;

 private:
  struct Family {  // the links of one dimension
    LinkId base = 0;
    LinkId count = 0;
    int64_t servers = 0, pods = 0, spines = 0;  // fat-tree
  };

  int64_t rank_of(const std::vector<int64_t>& coords) const;
  int64_t server_of(size_t d, const std::vector<int64_t>& coords) const;  // fat-tree block index
  int64_t rail_of(size_t d, const std::vector<int64_t>& coords) const;

  const Topology& topology_;
  int64_t gpus_ = 0;
  std::vector<int64_t> extent_;  // size of each dimension for this many GPUs
  std::vector<Family> family_;
  std::vector<double> capacity_;
};

}  // namespace orrery
