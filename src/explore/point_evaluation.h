// One plan evaluated through scenario/ (predict(), in-process) in the analytical or event mode,
// and the figures a search ranks and stores:
//   iteration_s           simulated iteration time, seconds
//   tokens_per_s, mfu     as `orrery simulate` reports them (scenario/training_metrics.h)
//   memory_gib            the largest stage's peak memory per GPU, GiB
//   usd_per_mtoken        GPUs x price per GPU-hour x iteration time / 3600 / tokens x 1e6
//                         (absent when the cluster has no price)
//   joules_per_token      GPUs x (idle + busy x (TDP - idle)) x iteration time / tokens (absent
//                         when the device preset gives no powers)
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "explore/plan_point.h"
#include "models/model_spec.h"
#include "training/group_pricing.h"
#include "training/simulation_mode.h"

namespace orrery::explore {

struct PointFigures {
  double iteration_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double memory_gib = 0;
  std::optional<double> usd_per_mtoken;
  std::optional<double> joules_per_token;
};

// The figures, or the message of the error that scenario/ raised for the plan.
struct Evaluation {
  std::optional<PointFigures> figures;
  std::string error;
};

// `mode`: analytical or event. `pricing`: the network pricing shared with the calling thread's
// other evaluations on the same cluster choice (training/group_pricing.h); none: priced afresh.
Evaluation evaluate_point(const ModelSpec& spec, int64_t gbs, const PlanPoint& point,
                          const ClusterChoice& choice, SimulationMode mode,
                          std::shared_ptr<GroupPricingCache> pricing = nullptr);

}  // namespace orrery::explore
