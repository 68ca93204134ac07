#include "dataflow/mapping_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "dataflow/sharding_plan.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

using test::edge;
using test::gemm;
using test::simd;

// X -> W (K split, all-reduce) on a 2-D torus of 8 chips whose shape and parallelism are free;
// global batch 8, micro-batch 1 and tile 1 fixed: 4 shapes (1x8, 2x4, 4x2, 8x1) x 6 ordered
// pairs of TP/PP/DP = 24 candidates, every DP dividing 8.
DataflowProblem free_torus() {
  DataflowProblem p =
      test::tiny_problem("r_r", {{LinkKind::Ring, 0, 10, ParallelRole::Unassigned},
                                 {LinkKind::Ring, 0, 20, ParallelRole::Unassigned}});
  p.system.chips = 8;
  p.run.llm->global_batch = 8;
  p.kernels = {simd(1, "X", 8, 4), gemm(2, "W", 6, 8, 4, TensorAxis::K, true)};
  p.edges = {edge(1, 1, 2)};
  return p;
}

SearchOutcome search(const DataflowProblem& p, SearchOptions options = {}) {
  DataflowProblem copy = p;
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(copy, d);
  return solve_dataflow(copy, g, options, d);
}

TEST(MappingSearch, EnumeratesShapesAndParallelismAndFindsTheMinimum) {
  const DataflowProblem p = free_torus();
  SearchOptions o;
  o.top_k = 100;
  const SearchOutcome out = search(p, o);
  EXPECT_EQ(out.evaluated, 24);
  EXPECT_EQ(out.fitting, 24);
  EXPECT_TRUE(out.searched);
  EXPECT_TRUE(out.proven_optimal());
  ASSERT_EQ(out.ranked.size(), 24u);
  EXPECT_TRUE(std::is_sorted(
      out.ranked.begin(), out.ranked.end(),
      [](const RankedMapping& a, const RankedMapping& b) { return a.final_ns < b.final_ns; }));
  // The minimum over every layout, each evaluated on its own.
  DataflowProblem copy = p;
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(copy, d);
  double best = 1e300;
  for (const int64_t x : {1, 2, 4, 8}) {
    using R = ParallelRole;
    for (const auto& roles : std::vector<std::vector<R>>{{R::Tensor, R::Pipeline},
                                                         {R::Tensor, R::Data},
                                                         {R::Pipeline, R::Tensor},
                                                         {R::Pipeline, R::Data},
                                                         {R::Data, R::Tensor},
                                                         {R::Data, R::Pipeline}}) {
      Mapping m;
      m.shape = {x, 8 / x};
      m.roles = roles;
      for (size_t i = 0; i < 2; ++i)
        (roles[i] == R::Tensor ? m.tp : roles[i] == R::Pipeline ? m.pp : m.dp) = m.shape[i];
      m.config = {0, 1};
      m.config_count = 2;
      best = std::min(best, evaluate(copy, g, sharding_from_file(copy), m, {}).final_ns);
    }
  }
  EXPECT_DOUBLE_EQ(out.best.final_ns, best);
  EXPECT_DOUBLE_EQ(out.ranked.front().final_ns, best);
}

TEST(MappingSearch, ReportsProgressFromTheCallingThread) {
  // 24 candidates in layouts (shape x parallelism); one thread takes the layouts in order and,
  // as it takes each, reports the share of layouts taken: non-decreasing, ending at 1.
  std::vector<double> seen;
  SearchOptions o;
  o.threads = 1;
  o.progress = [&seen](double done) { seen.push_back(done); };
  search(free_torus(), o);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_GT(seen.front(), 0.0);
  EXPECT_DOUBLE_EQ(seen.back(), 1.0);  // the last layout taken is the last of all
}

TEST(MappingSearch, FixedChoicesNarrowTheSpace) {
  DataflowProblem p = free_torus();
  p.system.dimensions[0].role = ParallelRole::Data;  // par_x: "DP"
  const SearchOutcome a = search(p);
  EXPECT_EQ(a.evaluated, 4 * 2);    // 4 shapes x (y: TP or PP)
  p.system.dimensions[1].size = 2;  // y: 2, so x: 4
  const SearchOutcome b = search(p);
  EXPECT_EQ(b.evaluated, 2);
  EXPECT_EQ(b.best.mapping.shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(b.best.mapping.dp, 4);
}

TEST(MappingSearch, FreeMicroBatchAndTileSizesAreDivisors) {
  DataflowProblem p = free_torus();
  p.system.dimensions[0] = {LinkKind::Ring, 2, 10, ParallelRole::Tensor};
  p.system.dimensions[1] = {LinkKind::Ring, 4, 20, ParallelRole::Data};
  p.run.llm->micro_batch = 0;  // divisors of 8 / 4 = 2: {1, 2}
  p.run.llm->tile_size = 0;    // divisors of seq 4: {1, 2, 4}
  SearchOptions o;
  o.top_k = 10;
  const SearchOutcome out = search(p, o);
  EXPECT_EQ(out.evaluated, 2 * 3);
  EXPECT_EQ(out.ranked.size(), 2u);  // the best tile of each micro-batch size
  EXPECT_EQ(out.tile_source, "searched over the divisors of seq_len");
}

TEST(MappingSearch, BothExecutionStylesAndFusion) {
  DataflowProblem p = free_torus();
  p.system.dimensions[0] = {LinkKind::Ring, 8, 10, ParallelRole::Data};
  p.system.dimensions[1] = {LinkKind::Ring, 1, 20, ParallelRole::Tensor};
  p.kernels[1].sharding = TensorAxis::M;
  p.kernels[1].collective = DataflowCollective::None;
  p.kernels[1].backward = false;  // forward and backward kernels would sit in different halves
  SearchOptions o;
  o.styles = {ExecutionStyle::KernelByKernel, ExecutionStyle::Dataflow};
  const SearchOutcome out = search(p, o);
  ASSERT_EQ(out.ranked.size(), 2u);
  EXPECT_EQ(out.best.mapping.style, ExecutionStyle::Dataflow);
  // Fused, the 16-byte edge never touches DRAM: 2 x 4 x 16 / 100 ns less per sample and layer.
  EXPECT_NEAR(out.ranked[1].all_config_ii_ns - out.ranked[0].all_config_ii_ns, 1.28, 1e-12);
  EXPECT_TRUE(out.fusion_restricted);
  EXPECT_NE(out.statement().find("not proven optimal over DFModel's space"), std::string::npos);
}

TEST(MappingSearch, ContradictionsAreErrors) {
  DataflowProblem p = free_torus();
  p.system.dimensions[0] = {LinkKind::Ring, 8, 10, ParallelRole::Data};
  p.system.dimensions[1] = {LinkKind::Ring, 1, 20, ParallelRole::Tensor};
  p.run.llm->global_batch = 6;  // DP 8 does not divide it
  try {
    search(p);
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "tiny.txt:1: no layout of TP/PP/DP on the topology has a data-parallel degree "
              "dividing global_batch_size 6");
  }
  p = free_torus();
  p.system.sram_bytes = 8;  // no configuration fits
  try {
    search(p);
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no mapping fits"), std::string::npos) << e.what();
  }
}

TEST(MappingSearch, TimeLimitIsHonoured) {
  SearchOptions o;
  o.time_limit_s = 1e-9;
  try {
    search(free_torus(), o);
    ADD_FAILURE() << "expected an error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("time limit"), std::string::npos) << e.what();
  }
}

TEST(MappingSearch, ThreadCountDoesNotChangeTheAnswer) {
  SearchOptions one, four;
  one.threads = 1;
  four.threads = 4;
  one.top_k = four.top_k = 24;
  const SearchOutcome a = search(free_torus(), one), b = search(free_torus(), four);
  ASSERT_EQ(a.ranked.size(), b.ranked.size());
  for (size_t i = 0; i < a.ranked.size(); ++i) {
    EXPECT_EQ(a.ranked[i].mapping.shape, b.ranked[i].mapping.shape) << i;
    EXPECT_EQ(a.ranked[i].mapping.roles, b.ranked[i].mapping.roles) << i;
    EXPECT_EQ(a.ranked[i].final_ns, b.ranked[i].final_ns) << i;
  }
}

// A -> B (forward) -> C (backward), DATAFLOW on one chip with at most 4 configurations:
// forward kernels take configurations 0-1, backward ones 2-3.
DataflowProblem pinned_chain() {
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 1, 10, ParallelRole::Data}});
  p.kernels = {simd(1, "A", 8, 4), simd(2, "B", 8, 4), simd(3, "C", 8, 4, true)};
  p.edges = {edge(1, 1, 2), edge(2, 2, 3)};
  p.run.style = ExecutionStyle::Dataflow;
  p.run.num_config = 4;
  return p;
}

std::string search_error(const DataflowProblem& p, SearchOptions options = {}) {
  try {
    search(p, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MappingSearch, PartialPinsLeaveTheOtherKernelsFree) {
  // A pinned, its consumers free (-1): the fusion places them; a free consumer is no
  // configuration -1 "before" its producer.
  DataflowProblem p = pinned_chain();
  p.kernels[0].config = 0;
  const SearchOutcome out = search(p);
  EXPECT_EQ(out.best.mapping.config[0], 0);
  EXPECT_GE(out.best.mapping.config[2], 2);
  p.kernels[0].config = -1;
  p.kernels[1].config = 1;
  EXPECT_EQ(search(p).best.mapping.config[1], 1);
}

TEST(MappingSearch, PinsOutsideWhatTheMappingAllowsAreNamed) {
  DataflowProblem p = pinned_chain();
  p.kernels[2].config = 9;
  EXPECT_EQ(search_error(p),
            "tiny.txt:30: kernel 'C' (id 3): expected config below 4 (num_config 4: "
            "configurations 0 to 3), found 9");
  p = pinned_chain();
  p.kernels[2].config = 0;
  EXPECT_EQ(search_error(p),
            "tiny.txt:30: kernel 'C' (id 3) is a backward kernel pinned to configuration 0, but "
            "DATAFLOW runs backward kernels in configurations 2 to 3 and forward ones in 0 to 1 "
            "(num_config 4: configurations 0 to 3)");
  p = pinned_chain();
  p.kernels[1].config = 2;
  EXPECT_EQ(search_error(p),
            "tiny.txt:20: kernel 'B' (id 2) is a forward kernel pinned to configuration 2, but "
            "DATAFLOW runs forward kernels in configurations 0 to 1 and backward ones in 2 to 3 "
            "(num_config 4: configurations 0 to 3)");
  // Through the free kernel B: C (3) depends on A (1); C pinned to 2 before A's 3 is not.
  p = pinned_chain();
  p.kernels[0].config = 1;
  p.kernels[2].backward = false;
  p.kernels[2].config = 0;
  EXPECT_EQ(search_error(p),
            "tiny.txt:30: kernel 'C' (id 3) is pinned to configuration 0, but it depends on "
            "kernel 'A' (id 1), pinned to configuration 1; configurations run in order");
}

TEST(MappingSearch, NumConfigHoldsWhenEveryKernelIsPinned) {
  DataflowProblem p = pinned_chain();
  p.run.num_config = 2;
  p.kernels[0].config = 0;
  p.kernels[1].config = 0;
  p.kernels[2].config = 2;
  EXPECT_EQ(search_error(p),
            "tiny.txt:30: kernel 'C' (id 3): expected config below 2 (num_config 2: "
            "configurations 0 to 1), found 2");
  p.kernels[2].config = 1;
  const SearchOutcome out = search(p);
  EXPECT_EQ(out.best.mapping.config, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(out.best.mapping.config_count, 2);
}

TEST(MappingSearch, TimeLimitsBeyondAYearAreNoLimit) {
  // gurobi.time 2^63 - 1 or --time-limit 1e300 once overflowed the deadline: "ran out".
  DataflowProblem p = free_torus();
  p.limits.time_limit_s = std::numeric_limits<int64_t>::max();
  p.limits.line = 5;
  EXPECT_TRUE(search(p).exhaustive);
  SearchOptions o;
  o.time_limit_s = 1e300;
  EXPECT_TRUE(search(free_torus(), o).exhaustive);
  o.time_limit_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(search_error(free_torus(), o),
            "expected --time-limit >= 0 seconds (0: none), found nan");
  o.time_limit_s = 1e-9;
  EXPECT_EQ(search_error(free_torus(), o),
            "tiny.txt: the search's time limit (--time-limit 1e-09 s) ran out before any mapping "
            "was found; raise it");
}

TEST(MappingSearch, ConfigurationsThatDoNotFitAreOneWarning) {
  // Kernel by kernel, each of the three configurations stages 16 + 16 bytes (B) or 16 (A, C)
  // of SRAM; with 8 bytes none fits, and the single fixed mapping is reported once.
  DataflowProblem p = pinned_chain();
  p.run.style = ExecutionStyle::KernelByKernel;
  p.kernels[2].backward = false;
  p.system.sram_bytes = 8;
  DataflowProblem copy = p;
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(copy, d);
  solve_dataflow(copy, g, {}, d);
  ASSERT_EQ(d.warnings().size(), 1u);
  EXPECT_EQ(d.warnings()[0].to_string(),
            "tiny.txt:1: the mapping does not fit, so DFModel's solver would reject it: "
            "configuration 0 (A) needs 16 bytes of SRAM and 1 cores; the chip has 8 and 4 (and 2 "
            "more configurations of 3)");
}

TEST(MappingSearch, TimesBeyondTheClockAreAnError) {
  // 10^-30 GB/s of DRAM: every staged byte costs 10^30 ns.
  DataflowProblem p = pinned_chain();
  p.run.style = ExecutionStyle::KernelByKernel;
  p.kernels[2].backward = false;
  p.system.dram_gbps = 1e-30;
  const std::string error = search_error(p);
  EXPECT_EQ(error.rfind("tiny.txt: the time per iteration (", 0), 0u) << error;
  EXPECT_NE(error.find("is beyond what Orrery's picosecond clock holds"), std::string::npos);
}

}  // namespace
}  // namespace orrery
