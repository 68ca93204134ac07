// Kernel fusion for DATAFLOW execution: group the kernels into at most C configurations (fused
// on-chip programs) so that the sum of the configurations' initiation intervals is smallest.
//
// The search is a dynamic program over contiguous runs of one topological order of the kernels
// (DataflowGraph::order(): the file's order when it respects the edges): best[j][c] = the least
// total for the first j kernels with the last run in configuration c, over runs [i, j) that fit
// in SRAM and the cores, keep pinned kernels (config >= 0 in the file) in their configuration,
// and put forward kernels in configurations <= ceil(C/2) - 1 and backward ones in >= floor(C/2)
// (DFModel's split, for graphs with both). O(n^2 C) plus O(n * edges) for the run costs. It is
// exact over that space; DFModel's MILP may also assign kernels that are not contiguous in this
// order to one configuration, so its optimum can be lower (docs/dfmodel.md).
#pragma once

#include <cstdint>
#include <vector>

#include "dataflow/cost_terms.h"
#include "dataflow/dataflow_graph.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct Fusion {
  bool found = false;           // some grouping fits
  std::vector<int64_t> config;  // per kernel (file index)
  int64_t config_count = 0;     // C
  double all_config_ii_ns = 0;  // sum over configurations
};

// num_config <= 0 means one configuration per kernel at most (C = number of kernels).
Fusion fuse_kernels(const DataflowProblem& problem, const DataflowGraph& graph,
                    const CostTerms& terms, int64_t num_config);

}  // namespace orrery
