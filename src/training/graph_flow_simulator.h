// Flow mode for task-graph programs (Chakra traces): every rank explicit, the task graph of
// training/graph_tasks.h run on the engine's kernel (engine/kernel.h), where communication is
// flows on the cluster's links, sharing bandwidth max-min fairly (engine/fair_share.h): a
// collective, once its last
// member reaches it, runs its algorithm's steps (network/collective_flows.h, the protocol the
// closed form picks), a send is one flow from sender to receiver plus its route's latency.
// Compute and memory tasks take their durations; the trace's own communication durations are not
// used (the network decides). Concurrent collectives and messages therefore contend.
#pragma once

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "training/simulation_options.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

Result simulate_task_graph_flows(const Workload& workload, const Cluster& cluster,
                                 const SimulationOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
