#include "training/param_gather_launch.h"

#include <algorithm>

namespace orrery {

std::vector<int64_t> aligned_gather_launches(const std::vector<PipelineOp>& order, int64_t stage,
                                             int64_t chunks) {
  std::vector<int64_t> forwards;  // indices into `order`, in forward order
  std::vector<int64_t> first(static_cast<size_t>(chunks), -1);  // each chunk's first forward
  for (size_t i = 0; i < order.size(); ++i) {
    if (!order[i].forward) continue;
    int64_t& f = first[static_cast<size_t>(order[i].chunk)];
    if (f < 0) f = static_cast<int64_t>(forwards.size());
    forwards.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> launches(static_cast<size_t>(chunks), -1);
  for (int64_t c = 2; c < chunks; ++c) {
    const int64_t k = std::max<int64_t>(0, first[static_cast<size_t>(c - 1)] - stage);
    launches[static_cast<size_t>(c)] = forwards[static_cast<size_t>(k)];
  }
  return launches;
}

}  // namespace orrery
