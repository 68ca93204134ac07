// Seed 004 (DFModel's dse_final.txt for GPT-1T on a 128 x 32 torus) against DFModel's logged
// figures and per-configuration table (its log of this run, `LLM/Compare_w_existing/Calculon/
// fix_DP/1_128_32/log.txt` in DFModel's repository at 04f93d5e); the table is
// tests/golden/dfmodel/seed004-configs.csv (grouped rows expanded, one per kernel).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "dataflow/dataflow_graph.h"
#include "dataflow/dataflow_result.h"
#include "dataflow/mapping_search.h"
#include "dataflow/problem_scope.h"
#include "formats/dfmodel_reader.h"

namespace orrery {
namespace {

const std::string kSeed = ORRERY_SOURCE_DIR "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";
const std::string kTable = ORRERY_SOURCE_DIR "/tests/golden/dfmodel/seed004-configs.csv";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Seed {
  Diagnostics diagnostics;
  DataflowProblem problem;
  std::optional<DataflowGraph> graph;
  SearchOutcome outcome;
  Seed() {
    problem = read_dfmodel(kSeed, slurp(kSeed), diagnostics);
    check_modelled(problem, diagnostics);
    graph = DataflowGraph::build(problem, diagnostics);
    outcome = solve_dataflow(problem, *graph, {}, diagnostics);
  }
};

void expect_relative(double actual, double expected, double tolerance, const char* what) {
  EXPECT_LE(std::fabs(actual - expected), tolerance * std::fabs(expected))
      << what << ": " << actual << " vs " << expected;
}

TEST(DfmodelSeed, ReproducesDfmodelSummaryFigures) {
  const Seed s;
  const Evaluation& ev = s.outcome.best;
  expect_relative(ev.final_ns / 1e9, 85.50267989926697, 1e-12, "final_s");
  expect_relative(ev.utilization, 0.3525573123140554, 1e-12, "util");
  EXPECT_EQ(ev.cost.cost.total(), 76628480.0);
  expect_relative(ev.cost.power.total(), 3189573.5626306534, 1e-12, "total_power");
  expect_relative(ev.all_config_ii_ns, 378605103.4765335, 1e-12, "all_config_II");
  expect_relative(ev.pipeline.pipeline_factor, 2.322916666666667, 1e-15, "pipeline_factor");
  EXPECT_EQ(ev.pipeline.p2p_ns, 1073741824.0);
  expect_relative(ev.flop, 3.85072240461978e19, 1e-12, "FLOP");
  EXPECT_EQ(ev.peak_gflops, 311869.4326171875);
  EXPECT_EQ(ev.num_tile, 2048);
  EXPECT_EQ(ev.mapping.tile_size, 1);
  EXPECT_EQ(ev.pipeline.micro_batches, 96);
  EXPECT_EQ(ev.mapping.tp, 1);
  EXPECT_EQ(ev.mapping.pp, 128);
  EXPECT_EQ(ev.mapping.dp, 32);
  // Cost and power parts (DFModel's log). Power prices are float32 (0.052 is 0.0520000011).
  EXPECT_EQ(ev.cost.cost.dram, 8351744.0);
  EXPECT_EQ(ev.cost.cost.chips, 67675136.0);
  EXPECT_EQ(ev.cost.cost.links, 409600.0);
  EXPECT_EQ(ev.cost.cost.switches, 192000.0);
  EXPECT_EQ(ev.cost.power.chips, 1821516.625);
  EXPECT_NEAR(ev.cost.power.links, 10649.60, 0.005);  // DFModel's log gives 2 decimals
  EXPECT_NEAR(ev.cost.power.switches, 416.00, 0.005);
  EXPECT_NEAR(ev.cost.power.dram, 1356991.34, 0.005);
  EXPECT_TRUE(ev.misfits.empty());
  EXPECT_FALSE(s.outcome.searched);
  EXPECT_TRUE(s.diagnostics.warnings().empty());  // the file's derived fields all agree
}

TEST(DfmodelSeed, EveryCellOfThePerConfigurationTable) {
  const Seed s;
  const Evaluation& ev = s.outcome.best;
  std::istringstream table(slurp(kTable));
  std::string line;
  std::getline(table, line);
  ASSERT_EQ(line, "config,kernels,compute_ns,memory_ns,network_ns,ii_ns");
  size_t row = 0;
  while (std::getline(table, line)) {
    std::istringstream cells(line);
    std::string config, kernel, compute, memory, network, ii;
    std::getline(cells, config, ',');
    std::getline(cells, kernel, ',');
    std::getline(cells, compute, ',');
    std::getline(cells, memory, ',');
    std::getline(cells, network, ',');
    std::getline(cells, ii, ',');
    ASSERT_LT(row, ev.configs.size());
    const ConfigEvaluation& c = ev.configs[row];
    EXPECT_EQ(c.index, std::stoll(config)) << "row " << row;
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(s.problem.kernels[c.kernels[0]].name, kernel) << "row " << row;
    // The table has 6 decimals: half a unit of the last place.
    EXPECT_NEAR(c.timing.compute_ns, std::stod(compute), 5.1e-7) << kernel;
    EXPECT_NEAR(c.timing.memory_ns, std::stod(memory), 5.1e-7) << kernel;
    EXPECT_NEAR(c.timing.network_ns(), std::stod(network), 5.1e-7) << kernel;
    EXPECT_NEAR(c.timing.ii_ns, std::stod(ii), 5.1e-7) << kernel;
    ++row;
  }
  EXPECT_EQ(row, 41u);
  EXPECT_EQ(ev.configs.size(), 41u);
}

TEST(DfmodelSeed, CalculonStyleBreakdownAddsUp) {
  const Seed s;
  const Result r = dataflow_result(s.problem, s.outcome);
  // DFModel's log: forward 11.903 + backward 23.224 s of compute and memory, bubble 48.083,
  // TP 0, P2P 1.074, DP 1.219 s.
  EXPECT_NEAR(r.breakdown.compute.seconds(), 11.903 + 23.224, 0.001);
  EXPECT_NEAR(r.breakdown.bubble.seconds(), 48.083, 0.0005);
  EXPECT_NEAR(r.breakdown.p2p.seconds(), 1.074, 0.0005);
  EXPECT_NEAR(r.breakdown.exposed_comm.at(CommGroup::Data).seconds(), 1.219, 0.0005);
  EXPECT_EQ(r.breakdown.exposed_comm.at(CommGroup::Tensor), Time::zero());
  EXPECT_EQ(r.breakdown.total(), r.iteration_time);
  expect_relative(r.iteration_time.seconds(), 85.50267989926697, 1e-12, "iteration time");
  ASSERT_TRUE(r.dataflow);
  // 3072 sequences x 2048 tokens / 85.503 s = 73,582 tokens/s (DFModel's log).
  EXPECT_NEAR(r.dataflow->tokens_per_second, 73582, 0.5);
  ASSERT_TRUE(r.peer);
  EXPECT_EQ(r.peer->peer, "dfmodel");
  EXPECT_EQ(r.parallelism.dp(), 32);
}

TEST(DfmodelSeed, SameSystemOnSwSwCostsWhatDfmodelLogged) {
  // DFModel's later version re-ran the seed point on sw_sw (its log at 52c34a87): $78,710,080 and
  // 3,189,240.76 W, the same time.
  Seed s;
  s.problem.system.topology = "sw_sw";
  for (TopologyDimension& d : s.problem.system.dimensions)
    d.kind = LinkKind::Switch;
  const SearchOutcome out = solve_dataflow(s.problem, *s.graph, {}, s.diagnostics);
  EXPECT_EQ(out.best.cost.cost.total(), 78710080.0);
  EXPECT_NEAR(out.best.cost.power.total(), 3189240.76, 0.005);
  expect_relative(out.best.final_ns / 1e9, 85.50267989926701, 1e-12, "final_s on sw_sw");
}

TEST(DfmodelSeed, FusedExecutionIsNeverSlowerThanKernelByKernel) {
  const Seed s;
  SearchOptions both;
  both.styles = {ExecutionStyle::KernelByKernel, ExecutionStyle::Dataflow};
  Diagnostics d;
  const SearchOutcome out = solve_dataflow(s.problem, *s.graph, both, d);
  ASSERT_EQ(out.ranked.size(), 2u);
  EXPECT_EQ(out.best.mapping.style, ExecutionStyle::Dataflow);
  EXPECT_LT(out.best.final_ns, s.outcome.best.final_ns);
  EXPECT_TRUE(out.fusion_restricted);
  EXPECT_FALSE(out.proven_optimal());
  // Fusion removes DRAM traffic only: the compute of every kernel is still there.
  double compute = 0;
  for (const ConfigEvaluation& c : out.best.configs)
    compute += c.timing.compute_ns;
  double kbk_compute = 0;
  for (const ConfigEvaluation& c : s.outcome.best.configs)
    kbk_compute += c.timing.compute_ns;
  expect_relative(compute, kbk_compute, 1e-12, "compute");
}

// A second golden case: the seed's layer mapped as in DFModel's public SN30 example (TP 8 x PP
// 128 on 1,024 chips, DATAFLOW with 6 pinned configurations, perfect overlap), an input file
// written for Orrery from that example's facts (tests/golden/dfmodel/); the figures are the
// example's log.txt (DFModel at 04f93d5e).
TEST(DfmodelPublicExample, Sn30MappingReproducesTheLoggedFigures) {
  const std::string path = ORRERY_SOURCE_DIR "/tests/golden/dfmodel/sn30-gpt1t-tp8-pp128.txt";
  Diagnostics d;
  DataflowProblem p = read_dfmodel(path, slurp(path), d);
  check_modelled(p, d);
  const DataflowGraph g = DataflowGraph::build(p, d);
  const SearchOutcome out = solve_dataflow(p, g, {}, d);
  const Evaluation& ev = out.best;
  expect_relative(ev.final_ns / 1e9, 71.3571859590606, 1e-12, "final_s");
  EXPECT_EQ(ev.cost.cost.total(), 21033984.0);
  expect_relative(ev.cost.power.total(), 518779.73142290115, 1e-12, "total_power");
  expect_relative(ev.all_config_ii_ns, 22138266.660537854, 1e-12, "all_config_II");
  expect_relative(ev.pipeline.pipeline_factor, 1.0413411458333335, 1e-15, "pipeline_factor");
  EXPECT_EQ(ev.pipeline.p2p_ns, 536870912.0);
  expect_relative(ev.utilization, 0.8577353977595918, 1e-12, "util");
  EXPECT_EQ(ev.peak_gflops, 614400.0);
  EXPECT_EQ(ev.mapping.tp, 8);
  EXPECT_EQ(ev.mapping.pp, 128);
  const double per_config_ii[] = {2525032.3631868097, 2427354.1383769982, 2427413.397637828,
                                  7282015.007722334,  2427259.3235596716, 5049192.430054214};
  ASSERT_EQ(ev.configs.size(), 6u);
  for (size_t c = 0; c < 6; ++c)
    expect_relative(ev.configs[c].timing.ii_ns, per_config_ii[c], 1e-12, "Per_Config_II");
  EXPECT_TRUE(ev.misfits.empty());
  EXPECT_TRUE(d.warnings().empty());
}

}  // namespace
}  // namespace orrery
