#include "engine/successors.h"

namespace orrery::engine {

Successors::Successors(size_t tasks, std::span<const std::pair<uint32_t, uint32_t>> edges) {
  begin_.assign(tasks + 1, 0);
  for (const auto& [before, after] : edges)
    ++begin_[before + 1];
  for (size_t t = 0; t < tasks; ++t)
    begin_[t + 1] += begin_[t];
  list_.resize(edges.size());
  std::vector<size_t> fill(begin_.begin(), begin_.end() - 1);
  for (const auto& [before, after] : edges)
    list_[fill[before]++] = after;
}

std::vector<uint32_t> Successors::predecessor_counts() const {
  std::vector<uint32_t> count(begin_.empty() ? 0 : begin_.size() - 1, 0);
  for (const uint32_t after : list_)
    ++count[after];
  return count;
}

}  // namespace orrery::engine
