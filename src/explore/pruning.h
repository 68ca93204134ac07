// The rules that drop a plan before it is evaluated, applied in this order; a plan is counted
// under the first rule that drops it (docs/explore.md, "Pruning"):
//   divisibility  Megatron-LM would refuse the plan: the GPUs are not a multiple of tp x pp x cp,
//                 the batch not a multiple of mbs x dp, tp does not divide the key-value heads,
//                 pp x vpp does not divide the layers, ep does not divide the experts or dp, the
//                 sequence not 2 x cp chunks, fewer micro-batches than stages when interleaved,
//                 a MoE model with tp > 1 and no sequence parallelism
//   tp-nvlink     tp larger than the NVLink domain (GPUs per server) or not a divisor of it,
//                 unless tp was asked for with --vary tp
//   memory        a stage needs more than the GPU's memory (models/memory_model.h)
//   dominated     a choice that only saves memory when the plan fits without it: recompute when
//                 the next lighter recompute (full -> selective -> none) fits, ZeRO-2 or -3 when
//                 the stage below fits (they change memory only, not time), and any ZeRO stage
//                 at dp 1 when ZeRO-0 is in the space (nothing to shard: the same plan)
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "explore/plan_point.h"
#include "models/model_spec.h"

namespace orrery::explore {

enum class PruneRule { Divisibility, TpNvlink, Memory, Dominated };
constexpr std::array<PruneRule, 4> kPruneRules = {PruneRule::Divisibility, PruneRule::TpNvlink,
                                                  PruneRule::Memory, PruneRule::Dominated};
std::string rule_name(PruneRule rule);

struct PruneContext {
  const ModelSpec* spec = nullptr;
  int64_t gbs = 0;
  bool tp_asked = false;  // --vary tp given: tp-nvlink does not apply
  // Whether the space holds these values (a lighter sibling outside it dominates nothing).
  bool has_selective = true, has_no_recompute = true;
  bool has_zero[4] = {true, true, true, true};
};

// The rule that drops the point, or nullopt when it is to be evaluated.
std::optional<PruneRule> prune(const PlanPoint& point, const ClusterChoice& choice,
                               const PruneContext& context);

// Whether the plan fits its GPUs' memory (every stage's peak within the capacity).
bool fits_memory(const ModelSpec& spec, const ParallelPlan& plan, const Device& device);

}  // namespace orrery::explore
