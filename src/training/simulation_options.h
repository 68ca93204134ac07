// Choices a user makes about how an iteration runs, shared by the simulators of this layer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "network/collective_algorithms.h"

namespace orrery {

class GroupPricingCache;  // training/group_pricing.h

enum class ScheduleKind {
  Auto,         // interleaved when the workload has vpp > 1, else 1f1b
  GPipe,        // all forward passes, then all backward passes
  OneFOneB,     // PipeDream-flush / Megatron 1F1B
  Interleaved,  // Megatron interleaved 1F1B over vpp model chunks per stage
};

std::string_view to_string(ScheduleKind kind);  // "auto", "gpipe", "1f1b", "interleaved"
std::optional<ScheduleKind> parse_schedule(std::string_view name);

struct SimulationOptions {
  ScheduleKind schedule = ScheduleKind::Auto;
  // Overlap communication with compute where Megatron does: data-parallel gradient reductions
  // run on their own stream during the backward pass (bucketed over the last micro-batch, as
  // with --overlap-grad-reduce), and each layer's input-gradient collective runs while its
  // weight-gradient is computed. false: every collective blocks the compute stream.
  bool overlap = true;
  std::optional<int64_t> world_size;                  // --gpus: overrides the workload's
  std::optional<std::vector<std::string>> placement;  // overrides the cluster's axis order
  Algorithm algorithm = Algorithm::Auto;              // collective algorithm (--algo)
  // Collectives running beside compute take SMs from it (iteration_plan.h); false leaves the
  // term out (orrery simulate --without sm-contention).
  bool sm_contention = true;
  // Record what ran when into Result::timeline (--trace, --report); off, nothing is recorded.
  bool record_timeline = false;
  // Flow mode: the global ranks the timeline shows; empty: per stage the rank that finishes last
  // (the one whose breakdown the Result reports).
  std::vector<int64_t> timeline_ranks;
  // Fill Result::layers, the per-layer table of the report and --json; false leaves it empty (a
  // search reads only the iteration's figures). The figures are the same either way.
  bool layer_rows = true;
  // Called now and then with the fraction of the simulation done (flow mode), for a progress bar.
  std::function<void(double)> progress;
  // Shares the network's pricing between runs of one layout on one cluster (a search evaluating
  // many plans on one thread); none: each run routes its groups afresh. Same answers either way.
  std::shared_ptr<GroupPricingCache> group_pricing;
};

}  // namespace orrery
