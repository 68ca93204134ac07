#include "training/compute_waits.h"

#include <algorithm>

#include "training/parallel_axes.h"

namespace orrery {

void charge_wait(Breakdown& b, Time gap, Time previous, const WaitCause& cause) {
  const StageTask* task = cause.task;
  // How long the cause ran after `previous`, within the gap.
  const auto ran = [&] {
    return std::clamp(cause.finish - std::max(cause.start, previous), Time::zero(), gap);
  };
  if (task && task->kind == StageTaskKind::Collective && joins_stages(task->comm.group)) {
    const Time running = ran();
    b.exposed_comm[task->comm.group] += running;
    b.bubble += gap - running;
  } else if (task && task->kind == StageTaskKind::Collective) {
    b.exposed_comm[task->comm.group] += gap;
  } else if (task && task->kind == StageTaskKind::Transfer) {
    const Time in_flight = ran();
    b.p2p += in_flight;
    b.bubble += gap - in_flight;
  } else {
    b.bubble += gap;
  }
}

}  // namespace orrery
