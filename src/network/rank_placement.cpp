#include "network/rank_placement.h"

#include <algorithm>
#include <stdexcept>

namespace orrery {

int GroupShape::outermost() const {
  for (int d = static_cast<int>(span.size()) - 1; d >= 0; --d)
    if (span[static_cast<size_t>(d)] > 1) return d;
  return -1;
}

int64_t GroupShape::blocks_at(size_t d) const {
  if (d >= span.size()) return 1;
  if (!blocks.empty()) return blocks[d];
  int64_t product = 1;
  for (size_t j = d; j < span.size(); ++j)
    product *= span[j];
  return product;
}

bool GroupShape::regular() const {
  int64_t product = 1;
  for (const int64_t s : span)
    product *= s;
  return product == ranks;
}

GroupShape shape_of(const Topology& topology, std::span<const int64_t> ranks) {
  GroupShape shape;
  shape_of(topology, ranks, shape);
  return shape;
}

void shape_of(const Topology& topology, std::span<const int64_t> ranks, GroupShape& shape) {
  const size_t dims = topology.size();
  shape.ranks = static_cast<int64_t>(ranks.size());
  shape.span.assign(dims, 1);
  shape.blocks.assign(dims, 1);
  shape.fewest.assign(dims, 1);
  shape.crosses_leaves = false;
  if (ranks.empty()) return;
  // For each dimension: (position outside it, position in it) of every member; the span is the
  // most distinct positions in it sharing one position outside.
  // Small groups (a scan over every pair or group of a job) reuse this thread's buffer; a large
  // one's is freed after it.
  thread_local std::vector<std::pair<int64_t, int64_t>> small;
  std::vector<std::pair<int64_t, int64_t>> large;
  auto& at = ranks.size() <= 1024 ? small : large;
  at.resize(ranks.size());
  int64_t below = 1;
  for (size_t d = 0; d < dims; ++d) {
    const Dimension& dim = topology[d];
    for (size_t i = 0; i < ranks.size(); ++i) {
      const int64_t position = ranks[i] / below;
      at[i] = dim.size > 0 ? std::pair{position / dim.size, position % dim.size}
                           : std::pair{int64_t{0}, position};
    }
    // Members in GPU order (as groups list them) give these pairs in order already.
    if (!std::is_sorted(at.begin(), at.end())) std::sort(at.begin(), at.end());
    int64_t run = 0;
    for (size_t i = 0; i < at.size(); ++i) {
      if (i == 0 || at[i].first != at[i - 1].first) run = 0;
      if (i == 0 || at[i] != at[i - 1]) ++run;
      shape.span[d] = std::max(shape.span[d], run);
    }
    if (dim.kind == DimensionKind::FatTree && dim.servers_per_leaf > 0 &&
        at.front().second / dim.servers_per_leaf != at.back().second / dim.servers_per_leaf)
      shape.crosses_leaves = true;
    // Level-d blocks: members sharing every coordinate from d outwards, i.e. one pair of `at`
    // (sorted, so a block's members are adjacent).
    int64_t blocks = 0, count = 0, fewest = shape.ranks;
    for (size_t i = 0; i < at.size(); ++i) {
      if (i == 0 || at[i] != at[i - 1]) {
        if (i > 0) fewest = std::min(fewest, count);
        ++blocks;
        count = 0;
      }
      ++count;
    }
    shape.blocks[d] = blocks;
    shape.fewest[d] = std::min(fewest, count);
    below *= dim.size > 0 ? dim.size : 1;
  }
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
  return orrery::shape_of(topology_, ranks);
}

namespace {

// More spread: larger spans, compared from the outermost dimension in; then across leaves.
bool more_spread(const GroupShape& a, const GroupShape& b) {
  if (a.span != b.span)
    return std::lexicographical_compare(b.span.rbegin(), b.span.rend(), a.span.rbegin(),
                                        a.span.rend());
  return a.crosses_leaves && !b.crosses_leaves;
}

}  // namespace

GroupShape RankPlacement::group_shape(std::span<const size_t> axes, bool* uniform) const {
  GroupShape worst;
  bool same = true, first = true;
  GroupShape shape;
  for (const int64_t base : group_bases(axes)) {
    const std::vector<int64_t> members = group_members(axes, base);
    orrery::shape_of(topology_, members, shape);
    if (first) {
      std::swap(worst, shape);
      first = false;
      continue;
    }
    if (shape.span != worst.span || shape.crosses_leaves != worst.crosses_leaves ||
        shape.fewest != worst.fewest || shape.blocks != worst.blocks)
      same = false;
    if (more_spread(shape, worst)) std::swap(worst, shape);
  }
  if (uniform) *uniform = same;
  return worst;
}

std::vector<std::vector<int64_t>> RankPlacement::groups(std::span<const size_t> axes) const {
  std::vector<std::vector<int64_t>> all;
  GroupShape worst;
  size_t at = 0;
  for (const int64_t base : group_bases(axes)) {
    all.push_back(group_members(axes, base));
    GroupShape shape = shape_of(all.back());
    if (all.size() == 1 || more_spread(shape, worst)) {
      worst = std::move(shape);
      at = all.size() - 1;
    }
  }
  std::rotate(all.begin(), all.begin() + static_cast<long>(at),
              all.begin() + static_cast<long>(at) + 1);
  return all;
}

RankPlacement RankPlacement::ends_of(size_t axis) const {
  RankPlacement ends = *this;  // same world: GPU ids keep their meaning
  ParallelAxis& a = ends.axes_.at(axis);
  if (a.size > 2) {
    ends.strides_[axis] *= a.size - 1;
    a.size = 2;
  }
  return ends;
}

std::vector<int64_t> RankPlacement::boundary_pair(size_t axis, int64_t k) const {
  const int64_t size = axes_.at(axis).size;
  if (size < 2) return {0};
  const int64_t stride = strides_[axis];
  const int64_t from = k % size * stride, to = (k + 1) % size * stride;
  std::vector<int64_t> worst;
  GroupShape worst_shape, shape;
  const size_t along[] = {axis};
  for (const int64_t base : group_bases(along)) {
    const int64_t pair[] = {base + from, base + to};
    orrery::shape_of(topology_, pair, shape);
    if (worst.empty() || more_spread(shape, worst_shape)) {
      worst.assign(std::begin(pair), std::end(pair));
      std::swap(worst_shape, shape);
    }
  }
  return worst;
}

}  // namespace orrery
