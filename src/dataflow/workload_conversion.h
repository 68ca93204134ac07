// Turns an evaluated dataflow mapping into Orrery's training IR (a Workload), so the event
// simulator can run DFModel problems with real pipeline schedules and transfers.
//
// Each configuration becomes one row per layer of a pipeline stage. Its time per micro-batch is
// DFModel's compute and memory time of the configuration (with overlap, the larger of the two)
// times the micro-batch size; it is split between the row's phases in proportion to the FLOP of
// its kernels: forward kernels -> forward phase, backward kernels -> input-gradient phase,
// kernels carrying the data-parallel gradient all-reduce -> weight-gradient phase. Tensor-parallel
// collectives become the phase's collective (tensor group; bytes = A_k * num_tile per sample, as
// DFModel counts them); the gradient all-reduce becomes one iteration-level row in the
// data-parallel group with the stage's whole local gradient. A pass is: a zero-cost
// `embedding_layer` marker row (so the SimAI text form can find passes), then per layer the
// forward rows in configuration order followed by the backward rows in reverse configuration
// order (the simulator runs backward rows last to first). Stage-to-stage transfers carry
// hidden * seq_len * word * micro-batch bytes each way per micro-batch.
//
// The system becomes an equivalent two-tier network: a "server" is the TP group (scale-up at the
// TP dimension's link bandwidth), every chip has one NIC at the DP dimension's link bandwidth
// (the PP dimension's when there is no DP). See docs/dfmodel.md for how the answers relate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataflow/dataflow_graph.h"
#include "dataflow/evaluation.h"
#include "dataflow/sharding_plan.h"
#include "workload/dataflow_problem.h"
#include "workload/workload.h"

namespace orrery {

struct EquivalentNetwork {
  int64_t chips_per_server = 1;      // the tensor-parallel group
  double scale_up_gbps = 0;          // per chip, inside a server
  double scale_out_gbps = 0;         // per chip (one NIC each), between servers
  std::vector<std::string> caveats;  // where the equivalence is approximate
};

struct ConvertedWorkload {
  Workload workload;
  EquivalentNetwork network;
};

ConvertedWorkload to_workload(const DataflowProblem& problem, const DataflowGraph& graph,
                              const ShardingPlan& plan, const Evaluation& evaluation);

}  // namespace orrery
