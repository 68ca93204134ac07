// Rank placement: how the coordinates of a rank on the parallel axes (e.g. tp, ep, dp, pp) map to
// a global rank, and from there to servers (rank / gpus_per_server).
//
// Axes are listed innermost first: with (tp, ep, dp, pp), consecutive ranks differ in their tp
// coordinate, so a tensor-parallel group of 8 fills one 8-GPU server.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "network/collective_cost.h"

namespace orrery {

struct ParallelAxis {
  std::string name;
  int64_t size = 1;
};

class RankPlacement {
 public:
  RankPlacement(std::vector<ParallelAxis> innermost_first, int64_t gpus_per_server);

  int64_t world_size() const { return world_; }
  const std::vector<ParallelAxis>& axes() const { return axes_; }

  // The groups formed by varying the coordinates of `axes` (indices into axes()) with every other
  // coordinate fixed. Returns the shape of the group spread over the most servers (ties: fewest
  // ranks per server); `uniform` tells whether every such group has that shape.
  GroupShape group_shape(std::span<const size_t> axes, bool* uniform = nullptr) const;

  // Whether rank 0 and its neighbour one step along `axis` sit on different servers.
  bool neighbours_cross_servers(size_t axis) const;

 private:
  std::vector<ParallelAxis> axes_;
  std::vector<int64_t> strides_;
  int64_t world_ = 1;
  int64_t gpus_per_server_ = 1;
};

}  // namespace orrery
