// Ranking a DFModel mapping search by Orrery's event mode (`orrery simulate FILE --rank-by
// event`): the best mappings by DFModel's closed form are each converted to a training workload
// (dataflow/workload_conversion.h) and simulated in event mode on the equivalent two-tier cluster
// (or a given one); each keeps its event time beside its closed-form time, and with event ranking
// the fastest by event time becomes the answer. The answer is then the best of those re-checked
// only: a mapping the closed form ranks lower is never simulated.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "dataflow/dataflow_graph.h"
#include "dataflow/mapping_search.h"
#include "dataflow/workload_conversion.h"
#include "training/simulation_options.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct EventRecheck {
  size_t count = 0;                      // best mappings by the closed form to simulate
  bool rank = false;                     // make the fastest of them in event mode the answer
  const Cluster* cluster = nullptr;      // run every mapping on it; default: each one's equivalent
  SimulationOptions options;             // event mode
  std::function<void(double)> progress;  // fraction of the re-checks done, for a progress bar
};

// Fills event_time of the first `count` of outcome.ranked (left empty, with one warning, where
// the event simulator refuses a mapping) and sets outcome.rechecked; with `rank`, orders those by
// event time (ties and the refused: the closed form's order), re-evaluates the new first as
// outcome.best and sets outcome.event_ranked. Throws InputError when ranking and none ran.
void recheck_in_event_mode(const DataflowProblem& problem, const DataflowGraph& graph,
                           const ModelOptions& model, const EventRecheck& recheck,
                           SearchOutcome& outcome, Diagnostics& diagnostics);

// The two-tier cluster of EquivalentNetwork (no latency, full efficiency).
Cluster equivalent_cluster(const EquivalentNetwork& network, const std::string& name);

}  // namespace orrery
