// The answer every simulator fills and every report writer reads.
//
// The breakdown partitions the iteration time of the critical (slowest) pipeline stage:
//   compute + sum(exposed_comm) + bubble + p2p == iteration_time.
// "Exposed" communication is time the compute stream spent waiting for a collective; hidden
// (overlapped) communication does not appear in the breakdown, only in the per-layer costs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics.h"
#include "core/time.h"
#include "workload/communication.h"
#include "workload/iteration_timeline.h"
#include "workload/model_summary.h"
#include "workload/parallelism.h"
#include "workload/training_figures.h"

namespace orrery {

struct Breakdown {
  Time compute;                            // compute stream busy
  std::map<CommGroup, Time> exposed_comm;  // compute stream waiting on each group's collectives
  Time bubble;                             // waiting for other pipeline stages' work
  Time p2p;                                // waiting for stage-to-stage transfers in flight

  Time total() const;
};

// Cost of one collective as the simulator priced it.
struct CommTiming {
  Communication comm;
  int64_t ranks = 0;  // group size it was costed for
  Time cost;          // duration of one execution, unoverlapped
};

struct PhaseTiming {
  Time compute;
  std::optional<CommTiming> comm;
};

// One row of the per-layer table: durations of a single execution of the layer.
struct LayerTiming {
  std::string name;
  int64_t line = 0;
  int64_t executions = 0;  // times the row runs per iteration on one rank
  int64_t recomputes = 0;  // extra forward executions from activation recompute
  PhaseTiming forward, input_grad, weight_grad;
};

struct StageTiming {
  int64_t stage = 0;
  Time finish;          // when this stage's iteration work ends
  Breakdown breakdown;  // partitions [0, finish)
};

// Summary figures of a peer simulator reproduced in a compatibility mode, in the peer's units.
struct PeerFigures {
  std::string peer;                                    // e.g. "simai"
  std::vector<std::pair<std::string, double>> values;  // e.g. {"total_us", 71889}
};

// One configuration of a dataflow mapping (DFModel): kernels that run as one on-chip program.
// Times are for one sample of one layer in nanoseconds, as DFModel reports them; fractions of a
// nanosecond matter there, so they are doubles named with their unit.
struct DataflowConfigRow {
  int64_t config = 0;
  std::string kernels;  // kernel names joined by '+'
  double compute_ns = 0, memory_ns = 0, network_ns = 0, ii_ns = 0;
};

// A mapping considered by a dataflow search, for the list of alternatives.
struct DataflowMappingRow {
  std::string shape;  // e.g. "128 x 32"
  std::string roles;  // parallelism per dimension, e.g. "PP x DP"
  int64_t tp = 1, pp = 1, dp = 1, micro_batch = 1, tile_size = 1;
  std::string execution;  // "KERNEL_BY_KERNEL" or "DATAFLOW"
  Time iteration_time;
  std::optional<Time> event_time;  // the same mapping in Orrery's event mode, when re-checked
};

// What a dataflow-system model (DFModel) reports beside time.
struct DataflowFigures {
  double utilization = 0;  // workload FLOP / (iteration time x chips x peak FLOP/s)
  double cost_usd = 0;     // system cost
  double power_w = 0;      // system power
  double flop = 0;         // workload FLOP per iteration
  double tokens_per_second = 0;
  std::string system;   // e.g. "r_r 128 x 32 (4096 chips), 311869.4 GFLOPS peak per chip"
  std::string mapping;  // e.g. "x: PP 128, y: DP 32; micro-batch 1; tile 1; KERNEL_BY_KERNEL"
  std::string search;   // what was searched and whether the answer is proven optimal
  bool proven_optimal = false;
  std::string ranked_by;  // "event" or "analytical" when the best were re-checked; else empty
  std::vector<DataflowConfigRow> configs;
  std::vector<DataflowMappingRow> alternatives;  // best first, the chosen mapping included
};

// Traffic on one network link over the iteration (flow mode).
struct LinkUsage {
  std::string name;
  double bytes = 0;
  Time busy;                    // time at least one flow crossed it
  double peak_utilization = 0;  // highest rate / capacity
};

struct Result {
  std::string mode;      // "event", "analytical", "analytical (SimAI 1.7 compatible)"
  std::string schedule;  // pipeline schedule simulated, e.g. "1f1b"; empty if none
  std::string workload;  // workload name
  std::string cluster;   // cluster name
  std::string device;    // device model that priced the workload's compute demands; empty if none
  // Where compute times came from when no device priced them, for the summary: e.g. "from the
  // workload file, not rescaled to H100-SXM5-80GB". Empty when a device priced them.
  std::string compute_source;
  Parallelism parallelism;

  Time iteration_time;
  Breakdown breakdown;  // of the critical stage
  int64_t critical_stage = 0;
  std::vector<StageTiming> stages;  // every simulated stage, in order
  std::vector<LayerTiming> layers;  // per-record costs, in file order
  std::optional<PeerFigures> peer;
  std::optional<ModelSummary> model;        // the workload's, for model-level formats
  std::optional<DataflowFigures> dataflow;  // dataflow-system figures (DFModel problems)
  std::optional<MemoryEstimate> memory;     // per stage, for workloads built from a model
  std::optional<TrainingFigures> training;  // throughput, MFU, cost, for the same
  std::vector<Warning> warnings;
  int64_t simulated_tasks = 0;  // size of the event simulation (0 for closed forms)
  int64_t flows = 0;            // flow mode: transfers simulated as flows
  int64_t first_gpu = 0;  // the job's first GPU of the cluster (flow mode: after earlier jobs')
  std::vector<LinkUsage> hottest_links;  // flow mode: the links that carried most, most first
  // What ran when, recorded only when asked (SimulationOptions::record_timeline); no JSON field.
  std::optional<IterationTimeline> timeline;
};

}  // namespace orrery
