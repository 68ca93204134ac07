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
#include "workload/parallelism.h"

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
  Parallelism parallelism;

  Time iteration_time;
  Breakdown breakdown;  // of the critical stage
  int64_t critical_stage = 0;
  std::vector<StageTiming> stages;  // every simulated stage, in order
  std::vector<LayerTiming> layers;  // per-record costs, in file order
  std::optional<PeerFigures> peer;
  std::vector<Warning> warnings;
  int64_t simulated_tasks = 0;           // size of the event simulation (0 for closed forms)
  int64_t flows = 0;                     // flow mode: transfers simulated as flows
  std::vector<LinkUsage> hottest_links;  // flow mode: the links that carried most, most first
};

}  // namespace orrery
