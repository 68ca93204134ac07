// Event mode for task-graph programs (Chakra traces, workload/graph_program.h): every simulated
// rank's tasks on the discrete-event engine, as is, with no pipeline schedule.
//
// Streams of a rank: compute (compute tasks, in issue order: one kernel at a time), memory, one
// per (peer, tag) for sends and one for receives, and one per process group it uses; a task starts
// when its stream is free and its dependencies have finished. A collective is one task shared by
// its group's members (the i-th collective each member issues on the group), so it starts when the
// last of them reaches it; its time is the network model's for the group's ranks (GPU ids = ranks)
// unless the trace gives one. A send occupies its stream for the point-to-point time between the
// two ranks (eager: it does not wait for the receiver); a receive ends when its own dependencies
// and the matching send (first in, first out per sender, receiver and tag) have finished.
//
// Ranks alike after renaming (training/rank_classes.h) are simulated once. The iteration time is
// the last task's finish; the breakdown is that of the rank that finishes last: its compute, and
// the gaps of its compute stream charged to what ended them (collectives as dp communication, as
// Chakra groups name no parallel axis; messages as p2p; other waits as bubble).
//
// Errors (InputError, naming the file and node): a receive without a send, members of a group
// disagreeing on a collective, a wait that can never end (deadlock across ranks).
#pragma once

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "training/simulation_options.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

Result simulate_task_graphs(const Workload& workload, const Cluster& cluster,
                            const SimulationOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
