// The warnings that say how far the event simulator's answer is from DFModel's formula, on a
// problem small enough to derive DFModel's figures by hand: X (forward) -> Y (backward), two
// element-wise 8 x 4 kernels, kernel by kernel on PP 2 (a ring of 2 chips at 10 GB/s), 6 layers
// (L_s = 3), batch 6, micro-batch 1 (n_mb = 6), 4 tiles.
//   each configuration: compute 4 * 8 / 16 = 2 ns, memory 4 * 16 / 100 = 0.64 ns; II = 5.28 ns
//   phi = 1 + 1 / (6 * (3 - 1)) = 13/12; bubble = 5.28 * 1/12 * 3 * 6 = 7.92 ns
//   p2p = 2 h S w L / beta = 2 * 8 * 4 * 2 * 6 / 10 = 76.8 ns
//   iteration = 5.28 * 13/12 * 18 + 76.8 = 179.76 ns, compute part 5.28 * 18 = 95.04 ns
#include "dataflow/event_departure.h"

#include <gtest/gtest.h>

#include "dataflow/sharding_plan.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

using test::edge;
using test::simd;

struct Evaluated {
  DataflowProblem problem;
  DataflowGraph graph;
  Evaluation ev;
};

Evaluated two_stages() {
  Evaluated e;
  DataflowProblem& p = e.problem;
  p = test::tiny_problem("r", {{LinkKind::Ring, 2, 10, ParallelRole::Pipeline}});
  p.kernels = {simd(1, "X", 8, 4), simd(2, "Y", 8, 4, true)};
  p.edges = {edge(1, 1, 2)};
  p.run.llm->layers = 6;
  Diagnostics d;
  e.graph = DataflowGraph::build(p, d);
  Mapping m;
  m.shape = {2};
  m.roles = {ParallelRole::Pipeline};
  m.pp = 2;
  m.config = {0, 1};
  m.config_count = 2;
  e.ev = evaluate(p, e.graph, sharding_from_file(p), m, {});
  return e;
}

Result event_result(double compute_ns, double bubble_ns, double p2p_ns) {
  const auto ns = [](double v) { return Time::from_ps(std::llround(v * 1000)); };
  Result r;
  r.breakdown.compute = ns(compute_ns);
  r.breakdown.bubble = ns(bubble_ns);
  r.breakdown.p2p = ns(p2p_ns);
  r.iteration_time = r.breakdown.total();
  return r;
}

TEST(EventDeparture, HandDerivedFigures) {
  const Evaluated e = two_stages();
  EXPECT_NEAR(e.ev.all_config_ii_ns, 5.28, 1e-12);
  EXPECT_NEAR(e.ev.bubble_ns, 7.92, 1e-12);
  EXPECT_NEAR(e.ev.pipeline.p2p_ns, 76.8, 1e-12);
  EXPECT_NEAR(e.ev.final_ns, 179.76, 1e-12);
  EXPECT_NEAR(e.ev.compute_ns, 95.04, 1e-12);
}

TEST(EventDeparture, PipelineFactorWithThreeLayersPerStageIsForetold) {
  const Evaluated e = two_stages();
  const auto expected = expected_event_departures(e.problem, e.ev);
  ASSERT_EQ(expected.size(), 1u);
  EXPECT_EQ(expected[0],
            "the event simulator's pipeline bubble will be about 2 times DFModel's: DFModel's "
            "pipeline factor divides the bubble by L_s - 1 = 2 (3 layers per stage), 7.92e-09 s, "
            "while a pipeline schedule idles PP - 1 = 1 times a whole stage's work, about "
            "1.58e-08 s at DFModel's II (DFModel's iteration: 1.798e-07 s)");
  // With 2 layers per stage c = 1: DFModel's count is a schedule's, nothing to foretell.
  Evaluated two = two_stages();
  two.problem.run.llm->layers = 4;
  two.ev = evaluate(two.problem, two.graph, sharding_from_file(two.problem), two.ev.mapping, {});
  EXPECT_TRUE(expected_event_departures(two.problem, two.ev).empty());
}

TEST(EventDeparture, MeasuredDepartureNamesEachPartThatDiffers) {
  const Evaluated e = two_stages();
  // The schedule's bubble twice DFModel's, transfers mostly hidden: 95.04 + 15.84 + 10 ns.
  const auto warning = event_departure(e.problem, e.ev, event_result(95.04, 15.84, 10));
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->rfind("the event simulation departs from DFModel's formula by -32.8 % "
                           "(1.209e-07 s against 1.798e-07 s per iteration): pipeline bubble "
                           "1.584e-08 s against DFModel's 7.92e-09 s: DFModel's pipeline factor "
                           "divides the bubble by L_s - 1 = 2 (3 layers per stage)",
                           0),
            0u)
      << *warning;
  EXPECT_NE(warning->find("; stage-to-stage transfers 1e-08 s against DFModel's 7.68e-08 s: "
                          "DFModel adds 2 h S w L / beta once per iteration, the event simulator "
                          "sends h S w b = 64 bytes each way per micro-batch (6.4e-06 ms at 10 "
                          "GB/s)"),
            std::string::npos)
      << *warning;
  EXPECT_EQ(warning->find("compute and memory"), std::string::npos) << *warning;
  // Within 5 % there is nothing to say.
  EXPECT_FALSE(event_departure(e.problem, e.ev, event_result(95.04, 7.92 + 4, 76.8)));
}

}  // namespace
}  // namespace orrery
