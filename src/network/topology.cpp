#include "network/topology.h"

#include <algorithm>
#include <stdexcept>

namespace orrery {

std::string_view to_string(DimensionKind kind) {
  switch (kind) {
    case DimensionKind::Switch:
      return "switch";
    case DimensionKind::FatTree:
      return "fat-tree";
    case DimensionKind::Ring:
      return "ring";
    case DimensionKind::Mesh:
      return "mesh";
  }
  return "?";
}

Topology::Topology(std::vector<Dimension> dimensions) : dims_(std::move(dimensions)) {
  if (dims_.empty()) throw std::invalid_argument("a network needs at least one dimension");
  int64_t capacity = 1, fat_trees = 0;
  for (size_t d = 0; d < dims_.size(); ++d) {
    const Dimension& dim = dims_[d];
    const std::string at = "dimension '" + dim.name + "': ";
    if (dim.size < 0 || (dim.size == 0 && d + 1 != dims_.size()))
      throw std::invalid_argument(at + "only the outermost dimension may leave its size open (0)");
    if (dim.size > kMaxCapacity / capacity)
      throw std::invalid_argument(at + "the network would hold more than 2^40 GPUs");
    if (dim.size > 0) capacity *= dim.size;
    const double bps = dim.link_bandwidth.in_bytes_per_second();
    if (!(bps >= kMinBandwidth && bps <= kMaxBandwidth))
      throw std::invalid_argument(at + "bandwidth must be between 1 MB/s and 1 PB/s");
    for (const Time latency : {dim.latency, dim.base_latency, dim.rendezvous_latency})
      if (!(latency >= Time::zero() && latency <= Time::from_seconds(1)))
        throw std::invalid_argument(at + "latencies must be between 0 and 1 s");
    if (dim.rendezvous_latency != Time::zero() && dim.kind != DimensionKind::FatTree)
      throw std::invalid_argument(at + "a rendezvous latency needs a fat-tree dimension");
    if (dim.kind == DimensionKind::FatTree && ++fat_trees > 1)
      throw std::invalid_argument(
          at +
          "a network has at most one fat-tree dimension (its leaves, spines and pods of "
          "servers_per_leaf servers already make two tiers)");
    if (!(dim.efficiency > 0 && dim.efficiency <= 1) ||
        !(dim.nvls_efficiency > 0 && dim.nvls_efficiency <= 1))
      throw std::invalid_argument(at + "efficiencies must be in (0, 1]");
    if (dim.channels < 1 || dim.channels > 64 || dim.nvls_channels < 1 || dim.nvls_channels > 64)
      throw std::invalid_argument(at + "channels must be between 1 and 64 (NCCL's maximum)");
    if (dim.nvls && dim.kind != DimensionKind::Switch)
      throw std::invalid_argument(at + "nvls needs a switch dimension");
    if (dim.kind == DimensionKind::FatTree &&
        (dim.rails < 1 || dim.servers_per_leaf < 0 || !(dim.oversubscription >= 1)))
      throw std::invalid_argument(at +
                                  "a fat-tree needs rails >= 1, servers_per_leaf >= 0 and "
                                  "oversubscription >= 1");
  }
}

std::optional<int64_t> Topology::capacity() const {
  int64_t total = 1;
  for (const Dimension& dim : dims_) {
    if (dim.size == 0) return std::nullopt;
    total *= dim.size;
  }
  return total;
}

std::optional<size_t> Topology::fat_tree() const {
  for (size_t d = 0; d < dims_.size(); ++d)
    if (dims_[d].kind == DimensionKind::FatTree) return d;
  return std::nullopt;
}

int64_t Topology::rail_groups(size_t d) const {
  return std::min(dims_[d].rails, positions_below(d));
}

Bandwidth Topology::nic_bandwidth(size_t d) const {
  return dims_[d].effective() *
         (static_cast<double>(dims_[d].rails) / static_cast<double>(rail_groups(d)));
}

int64_t Topology::rail_of(size_t d, int64_t local) const {
  return local * rail_groups(d) / positions_below(d);
}

int64_t Topology::positions_below(size_t d) const {
  int64_t product = 1;
  for (size_t j = 0; j < d; ++j)
    product *= dims_[j].size;
  return product;
}

int64_t Topology::extent(size_t d, int64_t world) const {
  if (dims_[d].size > 0) return dims_[d].size;
  const int64_t below = positions_below(d);
  return (world + below - 1) / below;
}

std::vector<int64_t> Topology::coordinates(int64_t rank) const {
  std::vector<int64_t> c;
  coordinates(rank, c);
  return c;
}

void Topology::coordinates(int64_t rank, std::vector<int64_t>& c) const {
  c.assign(dims_.size(), 0);
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].size == 0) {
      c[d] = rank;
      break;
    }
    c[d] = rank % dims_[d].size;
    rank /= dims_[d].size;
  }
}

int64_t Topology::coordinate(int64_t rank, size_t d) const {
  for (size_t j = 0;; ++j) {
    if (dims_[j].size == 0) return j == d ? rank : 0;
    if (j == d) return rank % dims_[j].size;
    rank /= dims_[j].size;
  }
}

Topology Topology::with_dimensions(std::vector<Dimension> dimensions) const {
  Topology t(std::move(dimensions));
  t.gpu_memory_ = gpu_memory_;
  t.reduction_memory_ = reduction_memory_;
  t.ideal_links_ = ideal_links_;
  return t;
}

Bandwidth Topology::step_bandwidth(size_t d, bool crosses_leaves) const {
  const Dimension& dim = dims_[d];
  switch (dim.kind) {
    case DimensionKind::Switch:
    case DimensionKind::Mesh:
      return dim.effective();
    case DimensionKind::Ring:
      return dim.effective() * 2.0;
    case DimensionKind::FatTree: {
      const double share = static_cast<double>(dim.rails) / static_cast<double>(positions_below(d));
      return dim.effective() * (share / (crosses_leaves ? dim.oversubscription : 1.0));
    }
  }
  return dim.effective();
}

}  // namespace orrery
