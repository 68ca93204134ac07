// Searches over small spaces written out by hand: what each pruning rule removes, the best plan,
// and the errors a request gets before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "core/diagnostics.h"
#include "explore/point_evaluation.h"
#include "explore/search.h"
#include "models/model_file.h"
#include "scenario/scenario.h"

namespace orrery::explore {
namespace {

SearchRequest request(const std::string& model, const std::string& cluster, int64_t gpus,
                      int64_t gbs, const std::vector<std::string>& varies) {
  SearchRequest r;
  r.spec = load_model(model);
  r.gbs = gbs;
  r.base.seq = r.spec.seq;
  ClusterAxes clusters;
  clusters.clusters = {cluster};
  clusters.gpus = {gpus};
  clusters.devices = {""};
  clusters.gpus_per_server = {std::nullopt};
  clusters.nic_busbw = clusters.nvlink_busbw = {std::nullopt};
  std::vector<Vary> parsed;
  for (const std::string& v : varies)
    parsed.push_back(parse_vary(v));
  apply_varies(parsed, r.axes, clusters);
  r.clusters = cluster_choices(clusters);
  r.top = 3;
  r.recheck = 0;
  r.threads = 2;
  return r;
}

int64_t pruned(const SearchResult& s, PruneRule rule) {
  return s.counts.pruned[static_cast<size_t>(rule)];
}

// GPT-3 175B (96 layers, 96 heads) on 96 A100-80GB (8 per server), batch 192, pp 8, full
// recompute, sequence parallelism, ZeRO-1. Default tp: divisors of 96 up to 8 = 1 2 3 4 6 8;
// tp 1 has no sequence parallelism, so 5 plans:
//   tp 8: 64 GPUs per replica do not divide 96               -> divisibility
//   tp 3, tp 6: not divisors of the 8-GPU server             -> tp-nvlink
//   tp 2: dp 6, 175e9 / 16 = 10.9e9 parameters per GPU x (2 + 4 + 12 / 6) bytes = 87 GB > 80 GB
//                                                            -> memory
//   tp 4: dp 3, 5.5e9 x (2 + 4 + 12 / 3) = 55 GB plus a few GB of activations: evaluated.
TEST(Search, EachRuleCountedOnAHandWrittenSpace) {
  const SearchRequest r =
      request("gpt3-175b", "dgx-a100", 96, 192,
              {"pp=8", "vpp=1", "mbs=1", "recompute=full", "sequence-parallel=1", "zero=1"});
  const SearchResult s = run_search(r, nullptr);
  EXPECT_EQ(s.counts.space, 5);
  EXPECT_EQ(pruned(s, PruneRule::Divisibility), 1);
  EXPECT_EQ(pruned(s, PruneRule::TpNvlink), 2);
  EXPECT_EQ(pruned(s, PruneRule::Memory), 1);
  EXPECT_EQ(pruned(s, PruneRule::Dominated), 0);
  EXPECT_EQ(s.counts.evaluated, 1);
  ASSERT_EQ(s.best.size(), 1u);
  EXPECT_EQ(s.best[0].point.plan.tp, 4);
  EXPECT_EQ(s.best[0].point.plan.dp, 3);
}

// GPT-3 1.3B on 8 GPUs, tp 1 pp 1 (dp 8): 1.3e9 x 18 bytes = 24 GB fits an 80 GB A100 with any
// choice, so of recompute {none, selective, full} x zero {0, 1, 2, 3} = 12 plans, selective and
// full (8) and ZeRO-2 and -3 without recompute (2) are dominated; none with ZeRO 0 and 1 remain.
TEST(Search, MemorySavingsThatAreNotNeededAreDominated) {
  const SearchRequest r =
      request("gpt3-1.3b", "dgx-a100", 8, 64, {"tp=1", "pp=1", "mbs=1", "zero=0,1,2,3"});
  const SearchResult s = run_search(r, nullptr);
  EXPECT_EQ(s.counts.space, 12);
  EXPECT_EQ(pruned(s, PruneRule::Dominated), 10);
  EXPECT_EQ(s.counts.evaluated, 2);
  for (const RankedPoint& p : s.best)
    EXPECT_EQ(p.point.plan.recompute, RecomputeMode::None);
}

// GPT-3 1.3B on 8 GPUs as tp 1, pp 1, cp 8 (dp 1), zero {0, 1} / both evaluated: the distributed
// optimizer shards its state over DP x CP = 8 ranks, so ZeRO-1 is not "nothing to shard" there.
TEST(Search, ZeroOneShardsOverTheContextRanksToo) {
  const SearchRequest r = request("gpt3-1.3b", "dgx-a100", 8, 8,
                                  {"tp=1", "pp=1", "cp=8", "mbs=1", "recompute=none", "zero=0,1"});
  const SearchResult s = run_search(r, nullptr);
  EXPECT_EQ(s.counts.space, 2);
  EXPECT_EQ(pruned(s, PruneRule::Dominated), 0);
  EXPECT_EQ(s.counts.evaluated, 2);
}

// --vary overlap-param-gather=0,1 on the space above (recompute none): zero {0, 1, 2, 3} without
// it, and with it zero 1 and 2 only (ZeRO 0 has no gather to overlap, ZeRO-3 gathers as it goes):
// 6 plans. ZeRO-2 and -3 are dominated as before, ZeRO-2 with the overlap too (its ZeRO-1 twin
// fits): 3 evaluated, and the overlapped ZeRO-1 plan, whose parameter all-gather no longer ends
// the iteration, is the fastest of them.
TEST(Search, OverlapParamGatherIsAKnobWhereItCanRun) {
  const SearchRequest r = request(
      "gpt3-1.3b", "dgx-a100", 8, 64,
      {"tp=1", "pp=1", "mbs=1", "recompute=none", "zero=0,1,2,3", "overlap-param-gather=0,1"});
  const SearchResult s = run_search(r, nullptr);
  EXPECT_EQ(s.counts.space, 6);
  EXPECT_EQ(pruned(s, PruneRule::Dominated), 3);
  EXPECT_EQ(s.counts.evaluated, 3);
  ASSERT_FALSE(s.best.empty());
  EXPECT_TRUE(s.best[0].point.plan.overlap_param_gather);
  EXPECT_EQ(s.best[0].point.plan.zero, 1);
  PlanAxes plan;
  ClusterAxes clusters;
  EXPECT_THROW(apply_varies({parse_vary("overlap-param-gather=2")}, plan, clusters), InputError);
}

// --vary tp-comm-overlap=0,1 with sequence parallelism on and off, TP 8, ZeRO-1 (recompute none):
// sequence parallelism off runs without the overlap only (it overlaps sequence parallelism's
// collectives), on runs with and without it: 3 plans, and the overlapped one, whose collectives
// run beside their GEMMs, is the fastest.
TEST(Search, TpCommOverlapIsAKnobWhereItCanRun) {
  const SearchRequest r = request("gpt3-1.3b", "dgx-a100", 8, 64,
                                  {"tp=8", "pp=1", "mbs=1", "recompute=none", "zero=1",
                                   "sequence-parallel=0,1", "tp-comm-overlap=0,1"});
  const SearchResult s = run_search(r, nullptr);
  EXPECT_EQ(s.counts.space, 3);
  ASSERT_FALSE(s.best.empty());
  EXPECT_TRUE(s.best[0].point.plan.tp_comm_overlap);
  EXPECT_TRUE(s.best[0].point.plan.sequence_parallel);
  PlanAxes plan;
  ClusterAxes clusters;
  EXPECT_THROW(apply_varies({parse_vary("tp-comm-overlap=yes")}, plan, clusters), InputError);
}

// A 1.3B model on one 8-GPU server: tensor parallelism only adds all-reduces of activations to
// the same per-GPU work, so pure data parallelism (tp 1, dp 8) is the fastest.
TEST(Search, DataParallelBeatsTensorParallelForASmallModel) {
  const SearchRequest r =
      request("gpt3-1.3b", "dgx-a100", 8, 64,
              {"tp=1,2,8", "pp=1", "mbs=1", "recompute=none", "zero=1", "sequence-parallel=1,0"});
  const SearchResult s = run_search(r, nullptr);
  ASSERT_FALSE(s.best.empty());
  EXPECT_EQ(s.best[0].point.plan.tp, 1);
}

// Progress / one report per evaluated plan, rising to exactly 1, because the callback follows
// the evaluations this process makes (here all of them, on two threads).
TEST(Search, ProgressRisesToOnePerEvaluatedPlan) {
  SearchRequest r =
      request("gpt3-1.3b", "dgx-a100", 8, 64,
              {"tp=1,2,8", "pp=1", "mbs=1", "recompute=none", "zero=1", "sequence-parallel=1,0"});
  r.threads = 2;
  std::vector<double> seen;
  r.progress = [&seen](double fraction) { seen.push_back(fraction); };
  const SearchResult s = run_search(r, nullptr);
  ASSERT_EQ(static_cast<int64_t>(seen.size()), s.counts.evaluated);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);
}

// On a small space the analytical ranking's top 3 holds the plan event mode finds best.
TEST(Search, AnalyticalTopThreeHoldsTheEventBest) {
  SearchRequest r = request("gpt3-1.3b", "dgx-a100", 16, 64,
                            {"tp=1,2,4", "pp=1,2", "vpp=1", "mbs=1,2", "recompute=none", "zero=1"});
  r.rank_by = SimulationMode::Event;
  r.top = 1;
  const SearchResult by_event = run_search(r, nullptr);
  r.rank_by = SimulationMode::Analytical;
  r.top = 3;
  const SearchResult by_analytical = run_search(r, nullptr);
  ASSERT_EQ(by_event.best.size(), 1u);
  const auto key = [&](const RankedPoint& p) { return point_key(p.point, r.clusters[0]); };
  bool found = false;
  for (const RankedPoint& p : by_analytical.best)
    found = found || key(p) == key(by_event.best[0]);
  EXPECT_TRUE(found) << key(by_event.best[0]);
}

TEST(Search, RecheckOrdersTheBestByEventTime) {
  SearchRequest r = request("gpt3-1.3b", "dgx-a100", 16, 64,
                            {"tp=1,2", "pp=1,2", "vpp=1", "mbs=1,2", "recompute=none", "zero=1"});
  r.recheck = 3;
  const SearchResult s = run_search(r, nullptr);
  ASSERT_EQ(s.best.size(), 3u);
  EXPECT_EQ(s.counts.rechecked, 3);
  for (size_t i = 0; i + 1 < s.best.size(); ++i)
    EXPECT_LE(s.best[i].event->iteration_s, s.best[i + 1].event->iteration_s);
}

TEST(Search, SpaceThatPruningEmptiesNamesTheRule) {
  // tp 7 divides neither the 96 heads nor the GPUs.
  const SearchRequest r = request("gpt3-175b", "dgx-a100", 64, 64, {"tp=7"});
  try {
    run_search(r, nullptr);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the divisibility rule"), std::string::npos) << e.what();
  }
  // GPT-3 175B on 8 GPUs: 175e9 x 18 / 8 / ... no plan fits.
  const SearchRequest big = request("gpt3-175b", "dgx-a100", 8, 8, {});
  try {
    run_search(big, nullptr);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the memory rule"), std::string::npos) << e.what();
  }
}

TEST(Search, BadVaryIsRefused) {
  EXPECT_THROW(parse_vary("tensor=1,2"), InputError);
  EXPECT_THROW(parse_vary("tp="), InputError);
  EXPECT_THROW(parse_vary("tp"), InputError);
  PlanAxes plan;
  ClusterAxes clusters;
  EXPECT_THROW(apply_varies({parse_vary("tp=a,2")}, plan, clusters), InputError);
  EXPECT_THROW(apply_varies({parse_vary("recompute=some")}, plan, clusters), InputError);
  EXPECT_THROW(apply_varies({parse_vary("nic-busbw=-3")}, plan, clusters), InputError);
}

// --vary gpus widens the cluster choices: every plan on each GPU count.
TEST(Search, ClusterKeysWidenTheSpace) {
  const SearchRequest one = request("gpt3-1.3b", "dgx-a100", 8, 64,
                                    {"tp=1", "pp=1", "mbs=1", "recompute=none", "zero=1"});
  const SearchRequest two = request(
      "gpt3-1.3b", "dgx-a100", 8, 64,
      {"tp=1", "pp=1", "mbs=1", "recompute=none", "zero=1", "gpus=8,16", "nic-busbw=25,50"});
  EXPECT_EQ(two.clusters.size(), 4u);
  EXPECT_EQ(run_search(two, nullptr).counts.space, 4 * run_search(one, nullptr).counts.space);
}

// Every surviving plan of a small space evaluated with the thread's shared network pricing and
// afresh / the same figures to the bit, in both ranking modes, because sharing only skips
// re-routing groups that are the same (training/group_pricing.h).
TEST(Search, SharedNetworkPricingChangesNoFigure) {
  const SearchRequest r =
      request("gpt3-13b", "dgx-a100", 64, 128, {"vpp=1,2", "mbs=1,2", "recompute=none,full"});
  SearchCounts counts;
  const std::vector<PlanPoint> survivors = survivors_of(r, counts);
  ASSERT_GT(survivors.size(), 10u);
  const auto shared = std::make_shared<GroupPricingCache>();
  for (const SimulationMode mode : {SimulationMode::Analytical, SimulationMode::Event}) {
    for (const PlanPoint& point : survivors) {
      const Evaluation a = evaluate_point(r.spec, r.gbs, point, r.clusters[0], mode, shared);
      const Evaluation b = evaluate_point(r.spec, r.gbs, point, r.clusters[0], mode);
      ASSERT_EQ(a.figures.has_value(), b.figures.has_value()) << a.error << b.error;
      if (a.figures) {
        EXPECT_EQ(a.figures->iteration_s, b.figures->iteration_s);
      }
    }
  }
  EXPECT_LT(shared->size(), survivors.size());  // layouts repeat across the plans
}

// A search's evaluation leaves out the per-layer rows (SimulationOptions::layer_rows); the
// iteration time is the one `orrery simulate --model` predicts for the plan with them, to the bit,
// in both ranking modes (every plan in analytical mode, every fifth in event mode).
TEST(Search, LeanEvaluationGivesTheFullPredictionsTime) {
  const SearchRequest r =
      request("gpt3-13b", "dgx-a100", 64, 128, {"vpp=1,2", "mbs=1,2", "recompute=none,full"});
  SearchCounts counts;
  const std::vector<PlanPoint> survivors = survivors_of(r, counts);
  ASSERT_GT(survivors.size(), 10u);
  for (const SimulationMode mode : {SimulationMode::Analytical, SimulationMode::Event}) {
    const size_t stride = mode == SimulationMode::Event ? 5 : 1;
    for (size_t i = 0; i < survivors.size(); i += stride) {
      const PlanPoint& point = survivors[i];
      const Evaluation lean = evaluate_point(r.spec, r.gbs, point, r.clusters[0], mode);
      Scenario full;
      full.cluster = r.clusters[0].cluster;
      full.mode = mode;
      ModelScenario& m = full.model.emplace();
      m.spec = r.spec;
      m.plan = point.plan;
      m.global_batch = r.gbs;
      m.gpus = r.clusters[0].gpus;
      const Result result = predict(full).results.front();
      ASSERT_TRUE(lean.figures) << lean.error;
      EXPECT_FALSE(result.layers.empty());
      EXPECT_EQ(lean.figures->iteration_s, result.iteration_time.seconds());
    }
  }
}

// The lean evaluation against figures it does not compute itself (a consistency check: the rows
// come from the same compute pricing; one GPU has no stage sets, so rows_by_stage and the shared
// world costs are not exercised here). On one GPU nothing is
// communicated and nothing waits (no pipeline, no data parallelism), so an iteration is its
// compute, counted by hand from the full prediction's per-layer rows (layer_timings, not the
// closed form): sum over rows of executions x (forward + input gradient + weight gradient)
// + recomputes x forward; and the event mode, which schedules every task, ends at the same time.
TEST(Search, LeanEvaluationEqualsTheHandCountedComputeOnOneGpu) {
  const SearchRequest r = request("gpt3-125m", "dgx-a100", 1, 8, {"mbs=1,2,8", "recompute=none"});
  SearchCounts counts;
  std::vector<PlanPoint> points;
  for (const PlanPoint& survivor : survivors_of(r, counts))
    for (const RecomputeMode recompute :
         {RecomputeMode::None, RecomputeMode::Selective, RecomputeMode::Full}) {
      points.push_back(survivor);  // recompute set by hand: pruning keeps the cheapest only
      points.back().plan.recompute = recompute;
    }
  ASSERT_EQ(points.size(), 9u);
  int64_t recomputed = 0;
  for (const PlanPoint& point : points) {
    const Evaluation lean =
        evaluate_point(r.spec, r.gbs, point, r.clusters[0], SimulationMode::Analytical);
    ASSERT_TRUE(lean.figures) << lean.error;
    Scenario full;
    full.cluster = r.clusters[0].cluster;
    full.mode = SimulationMode::Analytical;
    ModelScenario& m = full.model.emplace();
    m.spec = r.spec;
    m.plan = point.plan;
    m.global_batch = r.gbs;
    m.gpus = 1;
    const Result rows = predict(full).results.front();
    ASSERT_FALSE(rows.layers.empty());
    Time by_hand;
    for (const LayerTiming& row : rows.layers) {
      EXPECT_FALSE(row.forward.comm || row.input_grad.comm || row.weight_grad.comm) << row.name;
      by_hand += (row.forward.compute + row.input_grad.compute + row.weight_grad.compute) *
                     row.executions +
                 row.forward.compute * row.recomputes;
      recomputed += row.recomputes;
    }
    EXPECT_EQ(lean.figures->iteration_s, by_hand.seconds());
    full.mode = SimulationMode::Event;
    EXPECT_EQ(lean.figures->iteration_s, predict(full).results.front().iteration_time.seconds());
  }
  EXPECT_GT(recomputed, 0);  // full recompute's forwards are in the count
}

}  // namespace
}  // namespace orrery::explore
