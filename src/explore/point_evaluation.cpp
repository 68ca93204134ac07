#include "explore/point_evaluation.h"

#include <algorithm>

#include "core/diagnostics.h"
#include "scenario/scenario.h"

namespace orrery::explore {

Evaluation evaluate_point(const ModelSpec& spec, int64_t gbs, const PlanPoint& point,
                          const ClusterChoice& choice, SimulationMode mode,
                          std::shared_ptr<GroupPricingCache> pricing) {
  Scenario s;
  s.cluster = choice.cluster;
  s.device = choice.device;
  s.loaded_device = choice.resolved;
  s.mode = mode;
  s.options.group_pricing = std::move(pricing);
  s.options.layer_rows = false;  // a search reads the figures only
  ModelScenario& m = s.model.emplace();
  m.spec = spec;
  m.plan = point.plan;
  m.global_batch = gbs;
  m.gpus = choice.gpus;
  // One iteration's tokens: the training figures' cost and energy are then per iteration.
  m.train_tokens = static_cast<double>(gbs * point.plan.seq);
  Evaluation out;
  try {
    const Prediction prediction = predict(s);
    const Result& r = prediction.results.front();
    PointFigures f;
    f.iteration_s = r.iteration_time.seconds();
    if (r.training) {
      f.tokens_per_s = r.training->tokens_per_s;
      f.mfu = r.training->mfu;
      const double tokens = *m.train_tokens;
      if (r.training->cost_usd) f.usd_per_mtoken = *r.training->cost_usd / tokens * 1e6;
      if (r.training->energy_j) f.joules_per_token = *r.training->energy_j / tokens;
    }
    if (r.memory)
      for (const StageMemory& stage : r.memory->stages)
        f.memory_gib = std::max(f.memory_gib, stage.peak_bytes() / (1 << 30));
    out.figures = f;
  } catch (const std::exception& e) {  // InputError, TimeOverflow: the point fails, not the search
    out.error = e.what();
  }
  return out;
}

}  // namespace orrery::explore
