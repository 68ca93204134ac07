// Evaluation of one complete mapping with DFModel's analytical model (seed-era semantics unless
// ModelOptions say otherwise): per-configuration compute, memory and network time and initiation
// interval, the pipeline factor and stage-to-stage term, the time per iteration (one global
// batch), the workload's FLOP and the system's FLOPS utilisation, and the system's cost and power.
// Also checks what DFModel's solver would require: SRAM and cores per configuration and the DRAM
// footprint.
//
// Time per iteration (ns):  T = II * phi * L_s * (B / DP) + T_p2p,  II = sum_c II_c
// Utilisation:               FLOP / (T * chips * peak),  FLOP = L * B * sum_k FLOP_k (unsharded)
// DRAM footprint (seed era): weights * L_s + 2 * weights + 4 * num_tile * sum_c staged tile bytes
// (the activation-gradient term DFModel adds is not reconstructed; see docs/dfmodel.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dataflow/cost_terms.h"
#include "dataflow/dataflow_graph.h"
#include "dataflow/mapping.h"
#include "dataflow/sharding_plan.h"
#include "dataflow/system_cost.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct ConfigEvaluation {
  int64_t index = 0;            // the configuration's number
  std::vector<size_t> kernels;  // kernel indices, in execution order
  ConfigTiming timing;          // per sample per layer, ns
};

struct KernelShard {
  int64_t m = 0, k = 0, n = 0;  // per chip, per tile (shard_outer_M, shard_K, shard_N)
};

struct Evaluation {
  Mapping mapping;
  std::vector<ConfigEvaluation> configs;  // non-empty configurations, in order
  std::vector<KernelShard> shards;        // per kernel
  std::vector<double> edge_tile_bytes;    // per edge: shard_tensor_size
  int64_t num_tile = 1;
  double all_config_ii_ns = 0;
  PipelineTiming pipeline;
  double final_ns = 0;  // time per iteration
  double flop = 0;      // workload FLOP per iteration
  double peak_gflops = 0;
  double utilization = 0;
  SystemCostAndPower cost;
  double dram_footprint_bytes = 0;
  std::vector<std::string> misfits;  // why DFModel's solver would reject the mapping; empty: fits

  // The iteration split into parts that add up to final_ns: the configurations' compute and
  // memory time (with overlap: the part no collective hides), exposed tensor- and data-parallel
  // collectives, the pipeline bubble and the stage-to-stage transfers.
  double compute_ns = 0, tp_comm_ns = 0, dp_comm_ns = 0, bubble_ns = 0;
};

Evaluation evaluate(const DataflowProblem& problem, const DataflowGraph& graph,
                    const ShardingPlan& plan, const Mapping& mapping, const ModelOptions& options);

// Workload FLOP of one iteration: L * B * sum over kernels of 2 M_tot K N (systolic) or
// M_tot N (SIMD), times num_input.
double workload_flop(const DataflowProblem& problem);

}  // namespace orrery
