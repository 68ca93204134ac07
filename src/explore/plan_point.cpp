#include "explore/plan_point.h"

namespace orrery::explore {

std::string recompute_name(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::None:
      return "none";
    case RecomputeMode::Selective:
      return "selective";
    case RecomputeMode::Full:
      return "full";
  }
  return "none";
}

std::string point_key(const PlanPoint& point, const ClusterChoice& choice) {
  const ParallelPlan& p = point.plan;
  const auto n = [](int64_t v) { return std::to_string(v); };
  return choice.label + (choice.device.empty() ? "" : " device=" + choice.device) + "|" +
         n(choice.gpus) + "|tp" + n(p.tp) + "|pp" + n(p.pp) + "|vpp" + n(p.vpp) + "|cp" + n(p.cp) +
         "|ep" + n(p.ep) + "|mbs" + n(p.micro_batch) + "|" + recompute_name(p.recompute) + "|sp" +
         n(p.sequence_parallel ? 1 : 0) + "|zero" + n(p.zero) +
         (p.overlap_param_gather ? "|opg" : "") + (p.tp_comm_overlap ? "|tpo" : "");
}

}  // namespace orrery::explore
