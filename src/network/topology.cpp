#include "network/topology.h"

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
  for (size_t d = 0; d < dims_.size(); ++d) {
    const Dimension& dim = dims_[d];
    const std::string at = "dimension '" + dim.name + "': ";
    if (dim.size < 0 || (dim.size == 0 && d + 1 != dims_.size()))
      throw std::invalid_argument(at + "only the outermost dimension may leave its size open (0)");
    if (!(dim.link_bandwidth.in_bytes_per_second() > 0))
      throw std::invalid_argument(at + "bandwidth must be positive");
    if (!(dim.efficiency > 0 && dim.efficiency <= 1) ||
        !(dim.nvls_efficiency > 0 && dim.nvls_efficiency <= 1))
      throw std::invalid_argument(at + "efficiencies must be in (0, 1]");
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
  std::vector<int64_t> c(dims_.size());
  for (size_t d = 0; d < dims_.size(); ++d) {
    if (dims_[d].size == 0) {
      c[d] = rank;
      break;
    }
    c[d] = rank % dims_[d].size;
    rank /= dims_[d].size;
  }
  return c;
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
