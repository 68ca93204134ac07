// The tensor-parallel sharding of every kernel (DFModel's stage 1): the axis the TP group splits,
// the collective each kernel then needs and the re-layout collective of each edge. Taken from
// the file when it says (the seed does), otherwise chosen by choose_sharding()
// (dataflow/sharding_search.h) to minimise the bytes communicated.
#pragma once

#include <vector>

#include "workload/dataflow_problem.h"

namespace orrery {

struct ShardingPlan {
  std::vector<TensorAxis> axis;                     // per kernel
  std::vector<DataflowCollective> collective;       // per kernel
  std::vector<DataflowCollective> edge_collective;  // per edge (None, AllGather or AllToAll)
  double communicated_bytes = 0;  // stage-1 objective: all-reduce + re-layout bytes (full tensors)
  bool chosen = false;            // true: chosen by the search; false: as the file says
  bool proven_optimal = false;    // the search proved no plan communicates fewer bytes
};

// The plan the file states: its sharding (kernels without one are not split), kernel collectives
// and edge collectives.
ShardingPlan sharding_from_file(const DataflowProblem& problem);

}  // namespace orrery
