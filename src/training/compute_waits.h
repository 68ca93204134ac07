// How a stage's compute stream's idle time is charged. A gap before a compute task (from the end
// of the compute task before it, `previous`) goes to what the task waited for: the dependency or
// incoming transfer that finished last, which ran from `start` to `finish`:
//   a collective joining stages (parallel_axes.h, joins_stages): its run after `previous`,
//       clamp(finish - max(start, previous), 0, gap), is its group's exposed communication; the
//       rest, waiting for the other stages to reach it, is bubble;
//   any other collective: the whole gap is its group's exposed communication;
//   a transfer: its time in flight after `previous`, clamped the same way, is p2p; the rest is
//       bubble;
//   a compute task, or nothing: bubble.
// The one definition both the event mode (training/event_simulator) and the flow mode
// (training/flow_simulator) use. Times in integer picoseconds.
#pragma once

#include "core/time.h"
#include "training/stage_program.h"
#include "workload/result.h"

namespace orrery {

struct WaitCause {
  const StageTask* task = nullptr;  // none: the gap is bubble
  Time start, finish;
};

// Adds a gap of `gap` (> 0) after `previous` to `b`.
void charge_wait(Breakdown& b, Time gap, Time previous, const WaitCause& cause);

}  // namespace orrery
