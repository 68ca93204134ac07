#include "network/local_reduction.h"

namespace orrery {

Time local_reduction_time(CollectiveKind kind, double bytes, int64_t ranks,
                          std::optional<Bandwidth> memory) {
  const bool reduces = kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter;
  if (!memory || !reduces || ranks < 2) return Time::zero();
  const auto n = static_cast<double>(ranks);
  return memory->time_for(kReductionPasses * (n - 1) / n * bytes);
}

}  // namespace orrery
