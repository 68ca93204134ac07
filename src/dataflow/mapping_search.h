// The search DFModel's solver performs, with open tools: whatever the file leaves free is
// enumerated and every candidate evaluated with the closed form (dataflow/evaluation.h).
//
//   topology shape      x, y, z = 0: every ordered factorisation of num_chip into the free sizes
//   parallelism         par_* unset: every assignment of TP/PP/DP to dimensions DFModel allows
//                       (1-D: any one; 2-D: two different ones; 3-D: all three)
//   micro-batch size    0: every divisor of global_batch / DP
//   tile size           0: every divisor of seq_len (unless the file's stage-2 shard sizes fix it)
//   execution style     the file's, or both when asked
//   fusion (DATAFLOW)   the dynamic program of dataflow/fusion.h, unless the file pins every
//                       kernel's configuration
//   sharding (TP > 1)   the file's, else the stage-1 MILP of dataflow/sharding_search.h
//
// Candidates that do not fit (SRAM, cores, DRAM, a batch that does not divide) are skipped. The
// result is the fastest mapping and the next best distinct alternatives (best tile per shape,
// parallelism, micro-batch and style). Runs on `threads` threads and stops at the time limit
// (both from the file's gurobi block unless overridden); says whether the answer is proven.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/time.h"
#include "dataflow/dataflow_graph.h"
#include "dataflow/evaluation.h"
#include "dataflow/mapping.h"
#include "dataflow/sharding_plan.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct SearchOptions {
  ModelOptions model;
  std::vector<ExecutionStyle> styles;  // empty: the file's
  size_t top_k = 5;                    // alternatives kept, the best included
  std::optional<int64_t> threads;      // default: gurobi.thread (0: all CPUs)
  std::optional<double> time_limit_s;  // default: gurobi.time (0: none)
  // Called now and then from the calling thread with the fraction of the search done (of the
  // candidates, or of the time limit when that is nearer), for a progress bar.
  std::function<void(double)> progress;
};

struct RankedMapping {
  Mapping mapping;
  double final_ns = 0;
  double all_config_ii_ns = 0;
  std::optional<Time> event_time;  // Orrery's event mode on the converted mapping, if re-checked
};

struct SearchOutcome {
  Evaluation best;
  ShardingPlan sharding;
  std::vector<RankedMapping> ranked;  // best first, at most top_k
  int64_t evaluated = 0;              // candidates evaluated
  int64_t fitting = 0;                // of which fit
  bool searched = false;              // the file left something free
  bool exhaustive = true;             // every candidate evaluated (no time limit reached)
  bool fusion_restricted = false;     // a DATAFLOW fusion was searched (contiguous runs only)
  std::string tile_source;            // where the tile size came from
  size_t rechecked = 0;               // best by the closed form also run in event mode
  bool event_ranked = false;          // those re-checked ordered by event time, the answer first
  bool proven_optimal() const { return exhaustive && !fusion_restricted && !event_ranked; }
  std::string statement() const;  // one sentence: what was searched and what is proven
};

// Throws InputError when the file's fixed choices contradict each other or nothing fits.
SearchOutcome solve_dataflow(const DataflowProblem& problem, const DataflowGraph& graph,
                             const SearchOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
