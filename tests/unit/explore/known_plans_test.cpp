// The plans practitioners published (Korthikanti et al. Table 5 on Selene, NeMo 24.07 on DGX
// H100; tests/data/, the rows tests/e2e/training_validation_test.cpp validates) against the
// default search space: each must be in it, and survive pruning unless a rule says why not.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "explore/point_evaluation.h"
#include "explore/search.h"
#include "models/model_file.h"
#include "test_data.h"

namespace orrery::explore {
namespace {

struct Published {
  SearchRequest request;  // the default space for the row's model, GPUs, batch and cluster
  ParallelPlan plan;      // the row's plan
};

SearchRequest default_space(const std::string& model, const std::string& cluster, int64_t gpus,
                            int64_t gbs, int64_t seq) {
  SearchRequest r;
  r.spec = load_model(model);
  r.gbs = gbs;
  r.base.seq = seq;
  ClusterAxes clusters;
  clusters.clusters = {cluster};
  clusters.gpus = {gpus};
  clusters.devices = {""};
  clusters.gpus_per_server = {std::nullopt};
  clusters.nic_busbw = clusters.nvlink_busbw = {std::nullopt};
  r.clusters = cluster_choices(clusters);
  return r;
}

// Table 5: fp16, unfused attention, blocking p2p, no distributed optimizer; "sel" is sequence
// parallelism with selective recompute.
std::vector<Published> table5() {
  std::vector<Published> out;
  for (const auto& c : test_data::rows("megatron_selene_table5.csv")) {
    Published p;
    const int64_t gpus = std::stoll(c[1]), gbs = std::stoll(c[4]);
    p.request = default_space(c[0], "dgx-a100", gpus, gbs, 2048);
    p.request.base.dtype = DType::FP16;
    p.request.base.flash_attention = false;
    p.request.base.p2p = P2pMode::Blocking;
    p.plan = p.request.base;
    p.plan.tp = std::stoll(c[2]);
    p.plan.pp = std::stoll(c[3]);
    p.plan.micro_batch = std::stoll(c[5]);
    p.plan.vpp = std::stoll(c[6]);
    p.plan.recompute = c[7] == "full" ? RecomputeMode::Full : RecomputeMode::Selective;
    p.plan.sequence_parallel = c[7] != "full";
    out.push_back(p);
  }
  return out;
}

// NeMo: FP8, the distributed optimizer, sequence parallelism with tp > 1, no recompute.
std::vector<Published> nemo() {
  std::vector<Published> out;
  for (const auto& c : test_data::rows("nemo_h100_fp8.csv")) {
    Published p;
    p.request =
        default_space(c[0], "hgx-h100", std::stoll(c[1]), std::stoll(c[2]), std::stoll(c[4]));
    p.request.base.dtype = DType::FP8;
    p.plan = p.request.base;
    p.plan.micro_batch = std::stoll(c[3]);
    p.plan.tp = std::stoll(c[5]);
    p.plan.pp = std::stoll(c[6]);
    p.plan.cp = std::stoll(c[7]);
    p.plan.vpp = std::stoll(c[8]);
    p.plan.sequence_parallel = p.plan.tp > 1;
    p.plan.distributed_optimizer = true;
    p.plan.zero = 1;
    out.push_back(p);
  }
  return out;
}

bool same_plan(const ParallelPlan& a, const ParallelPlan& b) {
  return a.tp == b.tp && a.pp == b.pp && a.vpp == b.vpp && a.cp == b.cp && a.ep == b.ep &&
         a.micro_batch == b.micro_batch && a.recompute == b.recompute &&
         a.sequence_parallel == b.sequence_parallel && a.zero == b.zero;
}

// The rule that drops the published plan in its default space (nullopt: it is evaluated);
// fails the test when the plan is not in the space at all.
std::optional<PruneRule> fate(const Published& p) {
  const SearchRequest& r = p.request;
  PruneContext context;
  context.spec = &r.spec;
  context.gbs = r.gbs;
  bool found = false;
  std::optional<PruneRule> rule;
  for_each_point(r.spec, r.base, r.gbs, r.axes, r.clusters, [&](const PlanPoint& point) {
    if (!same_plan(point.plan, p.plan)) return;
    found = true;
    rule = prune(point, r.clusters[0], context);
  });
  EXPECT_TRUE(found) << r.spec.name << " on " << r.clusters[0].gpus << " GPUs: not in the space";
  return rule;
}

// Every row survives pruning but megatron-22b's full-recompute one: on 8 GPUs the same plan with
// selective recompute fits, so full recompute only costs time there (the paper's point).
TEST(KnownPlans, Table5PlansAreInTheDefaultSpace) {
  for (const Published& p : table5()) {
    const auto rule = fate(p);
    if (p.request.spec.name == "megatron-22b" && p.plan.recompute == RecomputeMode::Full)
      EXPECT_EQ(rule, PruneRule::Dominated);
    else
      EXPECT_EQ(rule, std::nullopt) << p.request.spec.name << ": " << rule_name(*rule);
  }
}

// Every row survives but Nemotron-4 340B on 128 GPUs (tp 8, pp 8, vpp 12, mbs 1, seq 4096): the
// memory model puts its first stage at 92 GiB of the H100's 80 (28 GiB of activations for the
// 1 + 7/96 x 8 micro-batches the interleaved schedule keeps in flight), where NeMo ran it. A gap
// of the memory model (docs/explore.md, "Validation"), not of the search.
TEST(KnownPlans, NemoPlansAreInTheDefaultSpace) {
  for (const Published& p : nemo()) {
    const auto rule = fate(p);
    if (p.request.spec.name == "nemotron4-340b")
      EXPECT_EQ(rule, PruneRule::Memory);
    else
      EXPECT_EQ(rule, std::nullopt) << p.request.spec.name << " on " << p.request.clusters[0].gpus
                                    << " GPUs: " << rule_name(*rule);
  }
}

// The published plan's event-mode time against the best the search finds (analytical ranking,
// the best 10 re-checked in event mode) for the same model, GPUs, batch and cluster; printed as
// the table docs/explore.md ("Validation") shows.
struct Comparison {
  std::string model;
  RecomputeMode recompute = RecomputeMode::None;  // of the published plan
  double published_s = 0, best_s = 0;
  ParallelPlan best;
  double gain() const { return best_s / published_s - 1; }  // negative: the search found faster
};

std::vector<Comparison> compare_with_best(const std::vector<Published>& rows) {
  std::vector<Comparison> out;
  for (const Published& p : rows) {
    SearchRequest r = p.request;
    r.top = 10;
    r.recheck = 10;
    r.threads = 2;
    const SearchResult s = run_search(r, nullptr);
    PlanPoint published;
    published.plan = p.plan;
    published.plan.dp = r.clusters[0].gpus / (p.plan.tp * p.plan.pp * p.plan.cp);
    published.plan.micro_batches = r.gbs / (p.plan.micro_batch * published.plan.dp);
    const Evaluation e =
        evaluate_point(r.spec, r.gbs, published, r.clusters[0], SimulationMode::Event);
    EXPECT_TRUE(e.figures && !s.best.empty() && s.best[0].event) << r.spec.name << e.error;
    if (!e.figures || s.best.empty() || !s.best[0].event) continue;
    Comparison& c = out.emplace_back();
    c.model = r.spec.name;
    c.recompute = p.plan.recompute;
    c.published_s = e.figures->iteration_s;
    c.best_s = s.best[0].event->iteration_s;
    c.best = s.best[0].point.plan;
    const ParallelPlan& b = c.best;
    std::printf(
        "| %s | %lld | %s | %.3f | %.3f (%+.1f %%) | tp %lld pp %lld vpp %lld cp %lld "
        "mbs %lld %s%s zero %d |\n",
        c.model.c_str(), static_cast<long long>(r.clusters[0].gpus),
        recompute_name(c.recompute).c_str(), c.published_s, c.best_s, 100 * c.gain(),
        static_cast<long long>(b.tp), static_cast<long long>(b.pp), static_cast<long long>(b.vpp),
        static_cast<long long>(b.cp), static_cast<long long>(b.micro_batch),
        recompute_name(b.recompute).c_str(), b.sequence_parallel ? " sp" : "", b.zero);
  }
  return out;
}

// Selective-recompute rows: the published plan within 10 % of the best found. Full-recompute
// rows: the best found is more than 10 % faster, by not recomputing the whole forward pass (the
// paper's own comparison: full recompute is the baseline selective recompute beats).
TEST(KnownPlans, Table5AgainstTheBestFound) {
  const auto rows = compare_with_best(table5());
  ASSERT_EQ(rows.size(), 8u);
  for (const Comparison& c : rows) {
    if (c.recompute == RecomputeMode::Full) {
      EXPECT_LT(c.gain(), -0.10) << c.model;
      EXPECT_NE(c.best.recompute, RecomputeMode::Full) << c.model;
    } else {
      EXPECT_LE(std::abs(c.gain()), 0.10) << c.model;
    }
  }
}

// Within 10 % but for two rows, each reported in docs/explore.md: Nemotron-3 22B, where the best
// found is 10-20 % faster than NeMo's recipe (less tensor and pipeline parallelism, more data
// parallelism), and Nemotron-4 340B, whose published plan the memory model rejects
// (KnownPlans.NemoPlansAreInTheDefaultSpace), so the best that fits is slower.
TEST(KnownPlans, NemoAgainstTheBestFound) {
  const auto rows = compare_with_best(nemo());
  ASSERT_EQ(rows.size(), 12u);
  for (const Comparison& c : rows) {
    if (c.model == "nemotron3-22b") {
      EXPECT_LT(c.gain(), -0.09) << c.model;
      EXPECT_GT(c.gain(), -0.20) << c.model;
    } else if (c.model == "nemotron4-340b") {
      EXPECT_GT(c.gain(), 0) << c.model;
    } else {
      EXPECT_LE(std::abs(c.gain()), 0.10) << c.model;
    }
  }
}

}  // namespace
}  // namespace orrery::explore
