// A stage program's labelled tasks with their simulated start times as timeline tracks (one per
// stream that ran something), the data of --trace and --report. Shared by the event mode (one
// representative rank per stage) and the flow mode (the ranks chosen for the trace).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "core/time.h"
#include "training/iteration_plan.h"
#include "training/stage_program.h"
#include "workload/iteration_timeline.h"
#include "workload/program.h"

namespace orrery {

// `span(task)`: when task `task` of `stage` started and finished, in picoseconds. `rank`: the
// global rank the tracks show, or -1 for a rank class (event mode). The program must be built with
// labels.
std::vector<TimelineTrack> stage_tracks(const Program& program, const IterationPlan& plan,
                                        const StageProgram& stage, int64_t rank,
                                        const std::function<std::pair<Time, Time>(uint32_t)>& span);

}  // namespace orrery
