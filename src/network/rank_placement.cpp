#include "network/rank_placement.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

namespace orrery {

RankPlacement::RankPlacement(std::vector<ParallelAxis> innermost_first, int64_t gpus_per_server)
    : axes_(std::move(innermost_first)), gpus_per_server_(gpus_per_server) {
  if (gpus_per_server_ < 1) throw std::invalid_argument("gpus per server must be at least 1");
  for (const ParallelAxis& axis : axes_) {
    if (axis.size < 1) throw std::invalid_argument("axis '" + axis.name + "' has size < 1");
    strides_.push_back(world_);
    world_ *= axis.size;
  }
}

GroupShape RankPlacement::group_shape(std::span<const size_t> axes, bool* uniform) const {
  std::vector<bool> varying(axes_.size(), false);
  for (const size_t a : axes)
    varying.at(a) = true;

  // Offsets of the members relative to the group's first rank.
  std::vector<int64_t> offsets = {0};
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (!varying[a]) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(axes_[a].size));
    for (int64_t k = 0; k < axes_[a].size; ++k)
      for (const int64_t o : offsets)
        next.push_back(o + k * strides_[a]);
    offsets = std::move(next);
  }
  // First ranks of all groups: every coordinate combination of the fixed axes.
  std::vector<int64_t> bases = {0};
  for (size_t a = 0; a < axes_.size(); ++a) {
    if (varying[a]) continue;
    std::vector<int64_t> next;
    next.reserve(bases.size() * static_cast<size_t>(axes_[a].size));
    for (int64_t k = 0; k < axes_[a].size; ++k)
      for (const int64_t b : bases)
        next.push_back(b + k * strides_[a]);
    bases = std::move(next);
  }

  GroupShape worst;
  bool same = true;
  bool first = true;
  std::map<int64_t, int64_t> per_server;
  for (const int64_t base : bases) {
    per_server.clear();
    for (const int64_t o : offsets)
      ++per_server[(base + o) / gpus_per_server_];
    GroupShape shape{static_cast<int64_t>(offsets.size()), static_cast<int64_t>(per_server.size()),
                     0};
    for (const auto& [server, count] : per_server)
      shape.ranks_per_server = std::max(shape.ranks_per_server, count);
    if (first) {
      worst = shape;
      first = false;
      continue;
    }
    if (shape.servers != worst.servers || shape.ranks_per_server != worst.ranks_per_server)
      same = false;
    if (std::tie(shape.servers, worst.ranks_per_server) >
        std::tie(worst.servers, shape.ranks_per_server))
      worst = shape;
  }
  if (uniform) *uniform = same;
  return worst;
}

bool RankPlacement::neighbours_cross_servers(size_t axis) const {
  if (axes_.at(axis).size < 2) return false;
  return strides_[axis] / gpus_per_server_ != 0;
}

}  // namespace orrery
