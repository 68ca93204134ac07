#include "network/rank_placement.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace orrery {

int GroupShape::outermost() const {
  for (int d = static_cast<int>(span.size()) - 1; d >= 0; --d)
    if (span[static_cast<size_t>(d)] > 1) return d;
  return -1;
}

RankPlacement::RankPlacement(std::vector<ParallelAxis> innermost_first, const Topology& topology)
    : axes_(std::move(innermost_first)), topology_(topology) {
  for (const ParallelAxis& axis : axes_) {
    if (axis.size < 1) throw std::invalid_argument("axis '" + axis.name + "' has size < 1");
    strides_.push_back(world_);
    world_ *= axis.size;
  }
  if (const auto cap = topology_.capacity(); cap && world_ > *cap)
    throw std::invalid_argument("the job needs " + std::to_string(world_) +
                                " GPUs but the network has " + std::to_string(*cap));
}

std::vector<int64_t> RankPlacement::group_members(std::span<const size_t> axes,
                                                  int64_t base) const {
  std::vector<int64_t> members = {base};
  for (const size_t a : axes) {
    std::vector<int64_t> next;
    next.reserve(members.size() * static_cast<size_t>(axes_.at(a).size));
    for (int64_t k = 0; k < axes_[a].size; ++k)
      for (const int64_t m : members)
        next.push_back(m + k * strides_[a]);
    members = std::move(next);
  }
  std::sort(members.begin(), members.end());
  return members;
}

std::vector<int64_t> RankPlacement::group_bases(std::span<const size_t> axes) const {
  std::vector<int64_t> bases = {0};
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) continue;
    std::vector<int64_t> next;
    next.reserve(bases.size() * static_cast<size_t>(axes_[a].size));
    for (int64_t k = 0; k < axes_[a].size; ++k)
      for (const int64_t b : bases)
        next.push_back(b + k * strides_[a]);
    bases = std::move(next);
  }
  std::sort(bases.begin(), bases.end());
  return bases;
}

GroupShape RankPlacement::shape_of(std::span<const int64_t> ranks) const {
  const size_t dims = topology_.size();
  GroupShape shape;
  shape.ranks = static_cast<int64_t>(ranks.size());
  shape.span.assign(dims, 1);
  std::vector<std::vector<int64_t>> coords;
  coords.reserve(ranks.size());
  for (const int64_t r : ranks)
    coords.push_back(topology_.coordinates(r));
  for (size_t d = 0; d < dims; ++d) {
    // Distinct coordinates in d among members sharing their coordinates outside d.
    std::map<std::vector<int64_t>, std::set<int64_t>> blocks;
    for (const auto& c : coords)
      blocks[std::vector<int64_t>(c.begin() + static_cast<long>(d) + 1, c.end())].insert(c[d]);
    for (const auto& [outside, inside] : blocks)
      shape.span[d] = std::max<int64_t>(shape.span[d], static_cast<int64_t>(inside.size()));
    const Dimension& dim = topology_[d];
    if (dim.kind == DimensionKind::FatTree && dim.servers_per_leaf > 0) {
      std::set<int64_t> leaves;
      for (const auto& c : coords)
        leaves.insert(c[d] / dim.servers_per_leaf);
      if (leaves.size() > 1) shape.crosses_leaves = true;
    }
  }
  return shape;
}

GroupShape RankPlacement::group_shape(std::span<const size_t> axes, bool* uniform) const {
  GroupShape worst;
  bool same = true, first = true;
  const auto spread = [](const GroupShape& s) {
    return std::vector<int64_t>(s.span.rbegin(), s.span.rend());
  };
  for (const int64_t base : group_bases(axes)) {
    const std::vector<int64_t> members = group_members(axes, base);
    GroupShape shape = shape_of(members);
    if (first) {
      worst = std::move(shape);
      first = false;
      continue;
    }
    if (shape.span != worst.span || shape.crosses_leaves != worst.crosses_leaves) same = false;
    if (spread(shape) > spread(worst) ||
        (spread(shape) == spread(worst) && shape.crosses_leaves && !worst.crosses_leaves))
      worst = std::move(shape);
  }
  if (uniform) *uniform = same;
  return worst;
}

GroupShape RankPlacement::neighbour_shape(size_t axis) const {
  if (axes_.at(axis).size < 2) return shape_of(std::vector<int64_t>{0});
  return shape_of(std::vector<int64_t>{0, strides_[axis]});
}

}  // namespace orrery
