// Rank placement: the coordinates of a rank on the parallel axes (e.g. tp, ep, dp, pp) give its
// global rank, and the rank its position in the network's dimensions.
//
// Axes are listed innermost first: with (tp, ep, dp, pp) consecutive ranks differ in their tp
// coordinate, so a tensor-parallel group of 8 fills one 8-GPU switch domain.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "network/topology.h"

namespace orrery {

struct ParallelAxis {
  std::string name;
  int64_t size = 1;
};

// How a communicator's ranks lie on the network.
//
// A "level-d block" is one position of dimension d and of every dimension outside it: the
// GPUs below it (e.g. at level 1 of a switch + fat-tree network, one server).
struct GroupShape {
  int64_t ranks = 1;
  // Per network dimension: how many positions of that dimension the group spreads over, within
  // one position of the dimensions outside it (the most over such positions). For a group that
  // is an aligned block, the product of the spans is the number of ranks.
  std::vector<int64_t> span;
  // Fat-tree dimensions: whether the group reaches more than one leaf switch.
  bool crosses_leaves = false;
  // Per dimension d: the level-d blocks the group occupies (blocks[0] = ranks), and the fewest
  // members one of them holds (fewest[0] = 1). Empty: derived from the spans (an aligned block).
  std::vector<int64_t> blocks, fewest;

  // The outermost dimension with span > 1, or -1 for a single rank.
  int outermost() const;
  int64_t blocks_at(size_t d) const;  // 1 beyond the outermost dimension
  // Whether the group is an aligned block: every occupied block of each level equally full.
  bool regular() const;
};

// The shape of an explicit set of GPUs (sorted or not).
GroupShape shape_of(const Topology& topology, std::span<const int64_t> ranks);
// The same into `shape`, whose buffers are reused: called again for as many dimensions and at most
// 1,024 ranks, it allocates nothing (scans over every group of a large job).
void shape_of(const Topology& topology, std::span<const int64_t> ranks, GroupShape& shape);

class RankPlacement {
 public:
  RankPlacement(std::vector<ParallelAxis> innermost_first, const Topology& topology);

  int64_t world_size() const { return world_; }
  const std::vector<ParallelAxis>& axes() const { return axes_; }
  const Topology& topology() const { return topology_; }
  // Global-rank distance between neighbours along each axis (the product of the sizes inside).
  const std::vector<int64_t>& strides() const { return strides_; }

  // Global ranks of the group formed by varying `axes` (indices into axes()) around `base`.
  std::vector<int64_t> group_members(std::span<const size_t> axes, int64_t base) const;
  // The first rank of every such group.
  std::vector<int64_t> group_bases(std::span<const size_t> axes) const;

  // The shape of the most spread group formed by varying `axes` (compared from the outermost
  // dimension in); `uniform` tells whether all groups have that shape.
  GroupShape group_shape(std::span<const size_t> axes, bool* uniform = nullptr) const;
  // The members of every group formed by varying `axes`, the most spread one (group_shape's)
  // first, the others in order of their first rank.
  std::vector<std::vector<int64_t>> groups(std::span<const size_t> axes) const;

  // The same ranks with `axis` kept at its first and last coordinate only (one coordinate when
  // the axis has one): the groups formed by varying `axis` in it are the pairs {first, last}
  // (e.g. the first and last pipeline stage), and the ranks between take part in none.
  RankPlacement ends_of(size_t axis) const;

  // The two ranks that a transfer across boundary `k` of `axis` joins: coordinates k and
  // (k + 1) mod size of the axis at equal coordinates on the others. Of the boundary's pairs
  // (one per position of the other axes) the first, from rank 0's, unless another is more
  // spread; then the most spread (the slowest). Rank 0 alone when the axis has one coordinate.
  std::vector<int64_t> boundary_pair(size_t axis, int64_t k) const;

  // The shape of an explicit set of ranks.
  GroupShape shape_of(std::span<const int64_t> ranks) const;

 private:
  std::vector<ParallelAxis> axes_;
  std::vector<int64_t> strides_;
  const Topology& topology_;
  int64_t world_ = 1;
};

}  // namespace orrery
