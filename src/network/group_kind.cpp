#include "network/group_kind.h"

#include <algorithm>
#include <set>

namespace orrery {
namespace {

// Every sum of j_a x step_a (0 <= j_a < count_a) over `axes` of (count, step), ascending in
// mixed radix (the first axis fastest).
std::vector<int64_t> lattice(const std::vector<std::pair<int64_t, int64_t>>& axes) {
  std::vector<int64_t> points = {0};
  for (const auto& [count, step] : axes) {
    std::vector<int64_t> next;
    next.reserve(points.size() * static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j)
      for (const int64_t p : points)
        next.push_back(p + j * step);
    points = std::move(next);
  }
  return points;
}

bool same_layout(const GroupShape& a, const GroupShape& b) {
  return a.span == b.span && a.fewest == b.fewest && a.blocks == b.blocks;
}

GroupKind every_group(const RankPlacement& placement, std::span<const size_t> axes) {
  GroupKind kind;
  kind.groups = placement.groups(axes);
  kind.shape = placement.group_shape(axes, &kind.uniform);
  return kind;
}

}  // namespace

int64_t GroupKind::clusters() const {
  int64_t n = 1;
  for (const ServerShift& s : shifts)
    n *= s.count;
  return n;
}

std::vector<int64_t> GroupKind::shift_list() const {
  std::vector<std::pair<int64_t, int64_t>> axes;
  for (const ServerShift& s : shifts)
    axes.emplace_back(s.count, s.servers);
  return lattice(axes);
}

GroupKind listed_kind(const Topology& topology, std::vector<std::vector<int64_t>> groups) {
  GroupKind kind;
  kind.groups = std::move(groups);
  if (kind.groups.empty()) kind.groups.emplace_back();
  kind.shape = shape_of(topology, kind.groups.front());
  return kind;
}

GroupKind group_kind(const RankPlacement& placement, std::span<const size_t> axes) {
  const Topology& t = placement.topology();
  if (t.size() == 0 || t[t.size() - 1].kind != DimensionKind::FatTree)
    return every_group(placement, axes);
  const size_t outer = t.size() - 1;
  const int64_t g = t.positions_below(outer);
  if (placement.world_size() % g != 0) return every_group(placement, axes);

  // Axes that move a group inside its servers (and those it varies), and those that move it by
  // whole servers.
  const std::vector<ParallelAxis>& all = placement.axes();
  const std::vector<int64_t>& stride = placement.strides();
  std::vector<std::pair<int64_t, int64_t>> varied, inner, cluster;
  GroupKind kind;
  kind.compact = true;
  kind.server_gpus = g;
  for (size_t a = 0; a < all.size(); ++a) {
    if (all[a].size == 1) continue;
    const std::pair<int64_t, int64_t> axis{all[a].size, stride[a]};
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) {
      varied.push_back(axis);
      cluster.push_back(axis);
    } else if (stride[a] % g != 0) {
      inner.push_back(axis);
      cluster.push_back(axis);
    } else {
      kind.shifts.push_back({all[a].size, stride[a] / g});
    }
  }

  // The representative cluster must fill its servers, so that its copies lie on servers of their
  // own.
  const std::vector<int64_t> gpus = lattice(cluster);
  std::vector<int64_t>& servers = kind.servers;
  servers.resize(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i)
    servers[i] = gpus[i] / g;
  std::sort(servers.begin(), servers.end());
  servers.erase(std::unique(servers.begin(), servers.end()), servers.end());
  if (static_cast<int64_t>(servers.size()) * g != static_cast<int64_t>(gpus.size()))
    return every_group(placement, axes);

  // Every group is its base plus the same offsets, so two whose bases differ by whole servers
  // lie alike (one moved along the fat-tree): one group of each base modulo g is shaped.
  std::vector<int64_t> bases = lattice(inner);
  std::sort(bases.begin(), bases.end());
  std::vector<int64_t> offsets = lattice(varied);
  std::sort(offsets.begin(), offsets.end());  // so every group's members are in GPU order
  std::vector<bool> shaped(static_cast<size_t>(g), false);
  for (const int64_t base : bases) {
    std::vector<int64_t> members(offsets.size());
    for (size_t i = 0; i < offsets.size(); ++i)
      members[i] = base + offsets[i];
    if (!shaped[static_cast<size_t>(base % g)]) {
      shaped[static_cast<size_t>(base % g)] = true;
      GroupShape shape = shape_of(t, members);
      if (kind.groups.empty())
        kind.shape = std::move(shape);
      else if (!same_layout(shape, kind.shape))
        return every_group(placement, axes);
    }
    kind.groups.push_back(std::move(members));
  }

  // Whether a group reaches more than one leaf depends on where its copy sits among the pods:
  // on its shift modulo servers_per_leaf, of which there are at most that many.
  kind.shape.crosses_leaves = false;
  const int64_t per_leaf = t[outer].servers_per_leaf;
  if (per_leaf > 0) {
    std::set<int64_t> phases = {0};
    for (const ServerShift& s : kind.shifts) {
      std::set<int64_t> next;
      for (const int64_t p : phases)
        for (int64_t j = 0; j < std::min(s.count, per_leaf); ++j)
          next.insert((p + j * s.servers) % per_leaf);
      phases = std::move(next);
    }
    bool some = false, every = true;
    for (const auto& members : kind.groups) {
      const int64_t first = members.front() / g, last = members.back() / g;
      for (const int64_t p : phases) {
        const bool crosses = (first + p) / per_leaf != (last + p) / per_leaf;
        some = some || crosses;
        every = every && crosses;
      }
    }
    kind.shape.crosses_leaves = some;
    kind.uniform = every || !some;
  }
  return kind;
}

}  // namespace orrery
