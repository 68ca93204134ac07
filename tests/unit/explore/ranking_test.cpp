// The best-K list and the Pareto front on figures written by hand.
#include <gtest/gtest.h>

#include "core/diagnostics.h"
#include "explore/ranking.h"

namespace orrery::explore {
namespace {

RankedPoint point(int64_t tp, double seconds, std::optional<double> usd) {
  RankedPoint p;
  p.point.plan.tp = tp;
  p.figures.iteration_s = seconds;
  p.figures.usd_per_mtoken = usd;
  return p;
}

TEST(Ranking, TopKeepsTheBestInOrder) {
  TopK top(Objective::Time, 2);
  top.offer(point(1, 3.0, 1.0));
  top.offer(point(2, 1.0, 1.0));
  top.offer(point(4, 2.0, 1.0));
  top.offer(point(8, 5.0, 1.0));
  ASSERT_EQ(top.best().size(), 2u);
  EXPECT_EQ(top.best()[0].point.plan.tp, 2);
  EXPECT_EQ(top.best()[1].point.plan.tp, 4);
}

TEST(Ranking, CostObjectiveSkipsPointsWithoutAPrice) {
  TopK top(Objective::Cost, 3);
  top.offer(point(1, 1.0, std::nullopt));
  top.offer(point(2, 9.0, 0.5));
  top.offer(point(4, 2.0, 0.7));
  ASSERT_EQ(top.best().size(), 2u);
  EXPECT_EQ(top.best()[0].point.plan.tp, 2);  // cheapest, though slowest
}

// (time, cost): (1, 5) (2, 3) (3, 4) (4, 1) (2, 6): (3, 4) loses to (2, 3), (2, 6) to (1, 5).
TEST(Ranking, ParetoFrontKeepsTheUnbeaten) {
  ParetoFront front;
  front.offer(point(1, 1, 5));
  front.offer(point(2, 2, 3));
  front.offer(point(3, 3, 4));
  front.offer(point(4, 4, 1));
  front.offer(point(5, 2, 6));
  ASSERT_EQ(front.front().size(), 3u);
  EXPECT_EQ(front.front()[0].point.plan.tp, 1);
  EXPECT_EQ(front.front()[1].point.plan.tp, 2);
  EXPECT_EQ(front.front()[2].point.plan.tp, 4);
}

TEST(Ranking, ObjectiveNames) {
  EXPECT_EQ(parse_objective("tokens-per-dollar"), Objective::TokensPerDollar);
  EXPECT_THROW(parse_objective("speed"), InputError);
}

}  // namespace
}  // namespace orrery::explore
