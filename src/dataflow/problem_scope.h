// What of a DFModel problem Orrery models, checked before anything is evaluated: an `llm`
// workload whose graph is one layer, the collectives of LLM graphs (tensor-parallel all-reduce,
// all-gather, all-to-all and the data-parallel gradient all-reduce), a system with positive
// sizes, rates and a topology whose fixed sizes and parallelism fit. Problems outside that scope
// are errors naming the file and line; fields Orrery reads but does not model (HBD, the RDU
// place-and-route and two-tier memory fields, SSM-specific knobs) are ignored with a warning.
#pragma once

#include "core/diagnostics.h"
#include "workload/dataflow_problem.h"

namespace orrery {

void check_modelled(const DataflowProblem& problem, Diagnostics& diagnostics);

}  // namespace orrery
