#include "explore/pruning.h"

#include "models/memory_model.h"

namespace orrery::explore {
namespace {

bool divisible(const ModelSpec& spec, const ParallelPlan& p, int64_t gbs) {
  if (p.dp == 0 || p.micro_batches == 0) return false;  // GPUs or batch do not divide
  if (spec.kv_heads % p.tp != 0 || spec.heads % p.tp != 0) return false;
  if (spec.layers % (p.pp * p.vpp) != 0) return false;
  if (p.vpp > 1 && (p.pp == 1 || p.micro_batches < p.pp)) return false;
  if (p.cp > 1 && p.seq % (2 * p.cp) != 0) return false;
  if (p.dp % p.ep != 0) return false;
  if (spec.moe) {
    if (spec.moe->experts % p.ep != 0) return false;
    if (p.tp > 1 && !p.sequence_parallel) return false;
  } else if (p.ep != 1) {
    return false;
  }
  return gbs % (p.micro_batch * p.dp) == 0;
}

}  // namespace

std::string rule_name(PruneRule rule) {
  switch (rule) {
    case PruneRule::Divisibility:
      return "divisibility";
    case PruneRule::TpNvlink:
      return "tp-nvlink";
    case PruneRule::Memory:
      return "memory";
    case PruneRule::Dominated:
      return "dominated";
  }
  return "";
}

bool fits_memory(const ModelSpec& spec, const ParallelPlan& plan, const Device& device) {
  return estimate_memory(spec, plan, static_cast<double>(device.memory_capacity)).fits();
}

std::optional<PruneRule> prune(const PlanPoint& point, const ClusterChoice& choice,
                               const PruneContext& c) {
  const ParallelPlan& p = point.plan;
  const ModelSpec& spec = *c.spec;
  if (!divisible(spec, p, c.gbs)) return PruneRule::Divisibility;
  const int64_t domain = choice.cluster.gpus_per_server();
  if (!c.tp_asked && (p.tp > domain || domain % p.tp != 0)) return PruneRule::TpNvlink;
  if (!fits_memory(spec, p, choice.resolved)) return PruneRule::Memory;
  ParallelPlan lighter = p;
  if (p.recompute == RecomputeMode::Full && c.has_selective) {
    lighter.recompute = RecomputeMode::Selective;
    if (fits_memory(spec, lighter, choice.resolved)) return PruneRule::Dominated;
  } else if (p.recompute == RecomputeMode::Selective && c.has_no_recompute) {
    lighter.recompute = RecomputeMode::None;
    if (fits_memory(spec, lighter, choice.resolved)) return PruneRule::Dominated;
  }
  // Nothing to shard: the optimizer's state is sharded over DP x CP.
  if (p.zero >= 1 && p.dp * p.cp == 1 && c.has_zero[0]) return PruneRule::Dominated;
  if (p.zero >= 2 && c.has_zero[p.zero - 1]) {
    lighter = p;
    lighter.zero = p.zero - 1;
    if (fits_memory(spec, lighter, choice.resolved)) return PruneRule::Dominated;
  }
  return std::nullopt;
}

}  // namespace orrery::explore
