// A layer-wise workload's iteration as the task graph of every rank (workload/graph_program.h),
// as the event mode runs it: the stage programs (training/stage_program.h) of the priced plan,
// each stage's program copied to every rank of the stage. Tasks keep their priced durations;
// every task depends on the previous task of its stream (the rank's schedule order) besides its
// own dependencies; a stage-to-stage transfer becomes a send on the sending rank (tag 0 forward,
// 1 backward) and a receive just before the compute that waits for it; collectives name the
// process group of their kind that holds the rank ("tp.0", "dp.8": kind and lowest member).
// Simulating the result in event mode (training/graph_simulator.h) gives the same iteration time,
// to the picosecond.
#pragma once

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "training/simulation_options.h"
#include "workload/graph_program.h"
#include "workload/workload.h"

namespace orrery {

GraphProgram export_task_graphs(const Workload& workload, const Cluster& cluster,
                                const SimulationOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
