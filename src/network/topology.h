// The network as hierarchical dimensions, innermost first: e.g. an NVSwitch domain of 8 GPUs,
// then a rail-optimized fat-tree of servers; or the three rings of a 3-D torus.
//
// A rank's coordinates are its index in mixed radix over the dimension sizes (innermost fastest).
// Bandwidths are per direction; latencies are per algorithm step crossing the dimension;
// efficiency is the fraction of the line rate large transfers reach (calibration, see
// data/presets/clusters/).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.h"
#include "core/time.h"

namespace orrery {

enum class DimensionKind {
  Switch,   // every position has a port of `link_bandwidth` to one non-blocking switch (NVSwitch)
  FatTree,  // servers with `rails` NICs each, leaf and spine switches (rail-optimized)
  Ring,     // positions in a ring, a link to each neighbour (one axis of a torus)
  Mesh,     // a link between every pair of positions
};

std::string_view to_string(DimensionKind kind);  // "switch", "fat-tree", "ring", "mesh"

struct Dimension {
  std::string name;
  DimensionKind kind = DimensionKind::Switch;
  int64_t size = 0;          // positions; 0 (outermost only) = as many as a job needs
  Bandwidth link_bandwidth;  // switch port, NIC, or link; per direction
  Time latency;              // per algorithm step crossing this dimension
  // Fixed cost of one collective call whose group spans this dimension (kernel launch and
  // synchronisation; NCCL's base latency): a collective pays the largest of those it spans.
  Time base_latency;
  double efficiency = 1.0;  // achievable fraction of link_bandwidth
  // Channels (NCCL's parallel rings, one thread block each) a collective across this dimension
  // may use, and an NVLS collective on it (NCCL: 24 ring channels and 16 NVLS channels on 8-GPU
  // A100 and H100 NVSwitch servers).
  int64_t channels = 24;
  int64_t nvls_channels = 16;

  // Switch: in-switch reduction (NVLink SHARP) for all-reduce, and the fraction of the port
  // bandwidth its algorithm bandwidth reaches.
  bool nvls = false;
  double nvls_efficiency = 1.0;

  // FatTree: NICs per server (one per rail), servers under one leaf switch of a rail (0 = all),
  // and the leaf's downlink : uplink bandwidth ratio. A server is one position of the fat-tree
  // dimension (all the GPUs of the dimensions inside it); with fewer rails than GPUs the GPUs of
  // a rail share its NIC, with more each GPU's rails act as one bonded NIC (rail_groups()).
  int64_t rails = 1;
  int64_t servers_per_leaf = 0;
  double oversubscription = 1.0;
  // FatTree: the bus bandwidth NCCL lets its LL protocol reach on a group across two servers and
  // across more (its llMaxBw, which the host CPU decides: Intel 39.0 / 20.4 GB/s, AMD 22.5 / 19.0
  // GB/s; docs/references/nccl-tuning.md); no cap where unset.
  std::optional<Bandwidth> ll_busbw_two_servers;
  std::optional<Bandwidth> ll_busbw_more_servers;
  // FatTree: what a collective call across servers pays once for the rendezvous of NCCL's
  // network transport, which is receiver-driven: before the first send the receiver's proxy posts
  // a buffer and writes its address to the sender, one more trip through NICs and proxies than
  // the hop itself (the later hops' buffers are posted while the first is in flight). NCCL's
  // tuning tables leave it out; no protocol scales it.
  Time rendezvous_latency;

  Bandwidth effective() const { return link_bandwidth * efficiency; }
  bool operator==(const Dimension&) const = default;
};

class Topology {
 public:
  Topology() = default;
  // Throws std::invalid_argument naming the first inconsistency.
  explicit Topology(std::vector<Dimension> dimensions);

  const std::vector<Dimension>& dimensions() const { return dims_; }
  size_t size() const { return dims_.size(); }
  const Dimension& operator[](size_t d) const { return dims_[d]; }

  // GPUs the topology holds, or nullopt when its outermost dimension grows as needed.
  std::optional<int64_t> capacity() const;
  // GPUs in one position of dimension d (the product of the sizes of the dimensions inside it).
  int64_t positions_below(size_t d) const;
  // Size of dimension d when `world` GPUs are placed (resolves an open outermost size).
  int64_t extent(size_t d, int64_t world) const;

  // The coordinate of `rank` in each dimension.
  std::vector<int64_t> coordinates(int64_t rank) const;
  // The same into `out` (resized), and its coordinate in dimension d alone.
  void coordinates(int64_t rank, std::vector<int64_t>& out) const;
  int64_t coordinate(int64_t rank, size_t d) const;

  // Effective bandwidth one GPU has for a transfer step across dimension d: a switch port; its
  // share of the server's NICs (rails * NIC / GPUs per server, divided by the oversubscription
  // when `crosses_leaves`); both directions of its ring links (a bidirectional ring); one mesh
  // link.
  Bandwidth step_bandwidth(size_t d, bool crosses_leaves = false) const;

  // Fat-tree dimension d: the NICs a server's GPUs are wired to as separate rails, min(rails,
  // GPUs per server) (more rails than GPUs bond into one NIC per GPU), and the effective
  // bandwidth of one such (possibly bonded) NIC.
  int64_t rail_groups(size_t d) const;
  Bandwidth nic_bandwidth(size_t d) const;
  // The rail (group) of the GPU at `local` (0 .. positions_below(d) - 1) in its server.
  int64_t rail_of(size_t d, int64_t local) const;

  // The fat-tree dimension, if the network has one (at most one: its leaf and spine tiers and
  // pods are one dimension).
  std::optional<size_t> fat_tree() const;

  // The bandwidth of a GPU's own memory, where known (the cluster's device preset): collectives
  // copy every rank's own shard through it (network/protocol.h).
  std::optional<Bandwidth> gpu_memory() const { return gpu_memory_; }
  void set_gpu_memory(std::optional<Bandwidth> bandwidth) { gpu_memory_ = bandwidth; }

  // Ideal links: collectives run one protocol with NCCL's Simple latencies, at the links'
  // effective rate from the first byte and without own-shard copies (the alpha-beta model of
  // simpler simulators); otherwise as NCCL's protocols run them (network/protocol.h).
  bool ideal_links() const { return ideal_links_; }
  void set_ideal_links(bool ideal) { ideal_links_ = ideal; }

  // The local memory reducing collectives combine received data through, when a peer's
  // convention charges that time (ASTRA-sim's local-mem-bw, network/local_reduction.h); unset in
  // Orrery's own model.
  std::optional<Bandwidth> reduction_memory() const { return reduction_memory_; }
  void set_reduction_memory(std::optional<Bandwidth> bandwidth) { reduction_memory_ = bandwidth; }

  // The same network with other dimensions (overrides of sizes or links): the GPU memory, the
  // reduction memory and the ideal-links setting carry over. Throws as the constructor does.
  Topology with_dimensions(std::vector<Dimension> dimensions) const;

  // Equal dimensions, GPU memory and ideal-links setting: the same network to price on.
  bool operator==(const Topology&) const = default;

  // Limits on what a network may hold (a larger one is rejected as a likely mistake).
  static constexpr int64_t kMaxCapacity = int64_t{1} << 40;
  static constexpr double kMinBandwidth = 1e6;   // 1 MB/s
  static constexpr double kMaxBandwidth = 1e15;  // 1 PB/s

 private:
  std::vector<Dimension> dims_;
  std::optional<Bandwidth> gpu_memory_;
  std::optional<Bandwidth> reduction_memory_;
  bool ideal_links_ = false;
};

}  // namespace orrery
