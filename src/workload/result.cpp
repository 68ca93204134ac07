#include "workload/result.h"

namespace orrery {

Time Breakdown::total() const {
  Time sum = compute + bubble + p2p;
  for (const auto& [group, time] : exposed_comm)
    sum += time;
  return sum;
}

}  // namespace orrery
