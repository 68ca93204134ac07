// Tensor-parallel sharding search (DFModel's stage 1): for every kernel without a sharding in the
// file, choose the axis the TP group splits so that the bytes communicated per layer are fewest.
//
// Each tensor (an edge: the producer's output, rows = outer * M, columns = N) is replicated (RR),
// split on its rows (SR) or split on its columns (RS). A producer split on outer or M leaves SR,
// on N leaves RS, on K or not at all leaves RR (a K split needs an all-reduce of the output).
// A consumer split on axis s needs each input in a layout that follows from s and from which
// operand the input is: of a GEMM a[rows M, cols K] * b[rows K, cols N], or of an element-wise
// op (rows M, cols N); the b operand of a K-tiled weight-gradient GEMM is stored transposed:
//
//   split   a     b     b (weight gradient)   element-wise
//   outer   SR    SR    SR                    SR
//   M       SR    RR    RR                    SR
//   K       RS    SR    RS                    -
//   N       RR    RS    SR                    RS
//   none    RR    RR    RR                    RR
//
// Re-layout from RR costs nothing (slice locally); RS or SR to RR is an all-gather and RS <-> SR
// an all-to-all, each of the full tensor's bytes. Rules: an axis of size 1 or the tiled axis
// cannot be split; a kernel with outer > 1 splits outer; a kernel that owns a weight is split;
// a kernel carrying the data-parallel gradient all-reduce is not split on K. Which input of a
// two-input GEMM is a and which is b follows from the tensor sizes; where they cannot tell, the
// search chooses too. Solved exactly as a MILP with COIN-OR CBC. For the GPT layer of seed 004
// the optimum is 4 x 104,857,600 bytes (DFModel's stage-1 objective; ties make other equally good
// plans possible). See docs/dfmodel.md.
#pragma once

#include "dataflow/dataflow_graph.h"
#include "dataflow/sharding_plan.h"
#include "workload/dataflow_problem.h"

namespace orrery {

// Keeps the file's sharding where given; chooses the rest. `time_limit_s` <= 0: no limit.
ShardingPlan choose_sharding(const DataflowProblem& problem, const DataflowGraph& graph,
                             double time_limit_s);

}  // namespace orrery
