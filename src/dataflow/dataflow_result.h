// The Result of a dataflow problem, for the report writers: the generic iteration time and its
// breakdown (compute and memory, exposed tensor- and data-parallel collectives, pipeline bubble,
// stage-to-stage transfers; they add up to the iteration time exactly), DFModel's own figures as
// the peer "dfmodel" (final_s, util, total_cost, total_power, FLOP, all_config_II, ...) and the
// dataflow figures (utilisation, cost, power, FLOP, throughput, the per-configuration table, the
// search's alternatives).
#pragma once

#include "dataflow/mapping_search.h"
#include "workload/dataflow_problem.h"
#include "workload/result.h"

namespace orrery {

Result dataflow_result(const DataflowProblem& problem, const SearchOutcome& outcome);

}  // namespace orrery
