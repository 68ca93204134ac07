#include "explore/ranking.h"

#include <algorithm>

#include "core/diagnostics.h"

namespace orrery::explore {

Objective parse_objective(const std::string& name) {
  if (name == "time") return Objective::Time;
  if (name == "cost") return Objective::Cost;
  if (name == "energy") return Objective::Energy;
  if (name == "tokens-per-dollar") return Objective::TokensPerDollar;
  throw InputError("--objective " + name + ": expected time, cost, energy or tokens-per-dollar");
}

std::string objective_name(Objective objective) {
  switch (objective) {
    case Objective::Time:
      return "time";
    case Objective::Cost:
      return "cost";
    case Objective::Energy:
      return "energy";
    case Objective::TokensPerDollar:
      return "tokens-per-dollar";
  }
  return "";
}

std::optional<double> score(Objective objective, const PointFigures& f) {
  switch (objective) {
    case Objective::Time:
      return f.iteration_s;
    case Objective::Cost:
    case Objective::TokensPerDollar:
      return f.usd_per_mtoken;
    case Objective::Energy:
      return f.joules_per_token;
  }
  return std::nullopt;
}

void TopK::offer(const RankedPoint& point) {
  const auto s = score(objective_, point.figures);
  if (!s || k_ == 0) return;
  const auto worse = [&](const RankedPoint& kept) {
    const double k = *score(objective_, kept.figures);
    return *s < k || (*s == k && point.index < kept.index);
  };
  const auto at = std::find_if(best_.begin(), best_.end(), worse);
  if (at == best_.end() && best_.size() >= k_) return;
  best_.insert(at, point);
  if (best_.size() > k_) best_.pop_back();
}

void ParetoFront::offer(const RankedPoint& point) {
  const PointFigures& f = point.figures;
  if (!f.usd_per_mtoken) return;
  // a beats b: no worse on both, and better on one or earlier in the enumeration.
  const auto beats = [](const RankedPoint& a, const RankedPoint& b) {
    const double at = a.figures.iteration_s, bt = b.figures.iteration_s;
    const double ac = *a.figures.usd_per_mtoken, bc = *b.figures.usd_per_mtoken;
    return at <= bt && ac <= bc && (at < bt || ac < bc || a.index < b.index);
  };
  for (const RankedPoint& kept : front_)
    if (beats(kept, point)) return;
  std::erase_if(front_, [&](const RankedPoint& kept) { return beats(point, kept); });
  const auto at = std::find_if(front_.begin(), front_.end(), [&](const RankedPoint& kept) {
    return f.iteration_s < kept.figures.iteration_s;
  });
  front_.insert(at, point);
}

}  // namespace orrery::explore
