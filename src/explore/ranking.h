// How a search orders evaluated plans and which it keeps: the objective's score (lower is
// better), the best K, and the Pareto front of iteration time vs cost per token. Both keep a
// bounded number of points, so memory stays flat however many plans stream through.
//   time              iteration time
//   cost              US dollars per million tokens
//   energy            joules per token
//   tokens-per-dollar its inverse of cost: the same order as cost, reported as tokens per dollar
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explore/plan_point.h"
#include "explore/point_evaluation.h"

namespace orrery::explore {

enum class Objective { Time, Cost, Energy, TokensPerDollar };

// Throws InputError for a name not in the list above.
Objective parse_objective(const std::string& name);
std::string objective_name(Objective objective);

// The score to minimise; nullopt when the point lacks the figure (no price, no powers).
std::optional<double> score(Objective objective, const PointFigures& figures);

struct RankedPoint {
  PlanPoint point;
  size_t index = 0;                   // in the enumeration: equal scores keep the earlier point
  PointFigures figures;               // in the ranking mode (--rank-by)
  std::optional<PointFigures> event;  // the event-mode recheck, for the best
};

// The best `k` points seen by score (ties: the earlier in the enumeration), best first, whatever
// order they arrive in.
class TopK {
 public:
  TopK(Objective objective, size_t k) : objective_(objective), k_(k) {}
  void offer(const RankedPoint& point);
  const std::vector<RankedPoint>& best() const { return best_; }

 private:
  Objective objective_;
  size_t k_;
  std::vector<RankedPoint> best_;
};

// Points no other point beats on both iteration time and cost per token (of equal points, the
// earlier in the enumeration), ordered by time; points without a price are left out.
class ParetoFront {
 public:
  void offer(const RankedPoint& point);
  const std::vector<RankedPoint>& front() const { return front_; }

 private:
  std::vector<RankedPoint> front_;
};

}  // namespace orrery::explore
