// Cost and power of every topology kind and DFModel's collective ratios, derived by hand from the
// tables in dataflow/system_cost.h and dataflow/collective_ratio.h.
#include "dataflow/system_cost.h"

#include <gtest/gtest.h>

#include "dataflow/collective_ratio.h"
#include "tiny_problem.h"

namespace orrery {
namespace {

// Prices: link $3, switch port $5, DRAM $0.5 per GB/s, chip $100; DRAM 100 GB/s per chip.
SystemCostAndPower cost_of(const std::string& topology, std::vector<int64_t> shape) {
  const double bandwidth[] = {10, 20, 30};
  std::vector<TopologyDimension> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    dims.push_back({LinkKind::Ring, shape[i], bandwidth[i], ParallelRole::Unassigned});
  const DataflowProblem p = test::tiny_problem(topology, dims);
  return system_cost(p.system, p.cost, shape);
}

TEST(SystemCost, EveryTopologyByHand) {
  struct Case {
    std::string topology;
    std::vector<int64_t> shape;
    double link_gbps, port_gbps;
  };
  // links and switch ports in GB/s, from the table with b = 10, 20, 30 GB/s per dimension.
  const std::vector<Case> cases = {
      {"sw", {2}, 2 * 10, 0},      // ports 20 not counted: N <= 4
      {"fc", {4}, 4 * 3 * 10, 0},  //
      {"r", {8}, 8 * 10, 2 * 10},  //
      {"r_r", {2, 4}, 8 * 10 + 8 * 20, 2 * 4 * 10 + 2 * 2 * 20},
      {"fc_fc", {3, 4}, 3 * 2 * 4 * 10 + 4 * 3 * 20, 0 + 16 * 20},
      {"r_fc", {2, 4}, 8 * 10 + 4 * 3 * 20, 2 * 4 * 10 + 16 * 20},
      {"r_sw", {2, 4}, 8 * 10 + 4 * 20, 2 * 4 * 10 + 4 * 20},
      {"sw_sw", {2, 4}, 8 * 10 + 4 * 20, 8 * 10 + 4 * 20},
      {"r_r_r", {2, 2, 2}, 8 * 10 + 8 * 20 + 8 * 30, 2 * 4 * 10 + 2 * 4 * 20 + 2 * 4 * 30},
      {"r_sw_sw", {2, 2, 2}, 8 * 10 + 4 * 20 + 2 * 30, 2 * 4 * 10 + 4 * 20 + 2 * 30},
      {"sw_sw_sw", {4, 2, 2}, 16 * 10 + 4 * 20 + 2 * 30, 16 * 10 + 4 * 20 + 2 * 30},
  };
  for (const Case& c : cases) {
    int64_t chips = 1;
    for (const int64_t s : c.shape)
      chips *= s;
    const SystemCostAndPower r = cost_of(c.topology, c.shape);
    const double n = static_cast<double>(chips);
    EXPECT_DOUBLE_EQ(r.cost.links, 3 * c.link_gbps) << c.topology;
    EXPECT_DOUBLE_EQ(r.cost.switches, 5 * c.port_gbps) << c.topology;
    EXPECT_DOUBLE_EQ(r.cost.dram, n * 100 * 0.5) << c.topology;
    EXPECT_DOUBLE_EQ(r.cost.chips, n * 100) << c.topology;
    EXPECT_DOUBLE_EQ(r.power.switches, 0.125 * c.port_gbps) << c.topology;
    EXPECT_DOUBLE_EQ(r.power.links, 0.25 * c.link_gbps) << c.topology;
    EXPECT_DOUBLE_EQ(r.power.dram, n * 100 * 2) << c.topology;
    EXPECT_DOUBLE_EQ(r.power.chips, n * 7) << c.topology;
    EXPECT_DOUBLE_EQ(r.cost.total(), r.cost.links + r.cost.switches + r.cost.dram + r.cost.chips);
  }
}

TEST(SystemCost, LinksPerDimensionUseThatDimensionsPower) {
  DataflowProblem p = test::tiny_problem("r_r", {{LinkKind::Ring, 2, 10, ParallelRole::Data},
                                                 {LinkKind::Ring, 4, 20, ParallelRole::Pipeline}});
  p.cost.link_power[0] = 1;
  p.cost.link_power[1] = 10;
  const SystemCostAndPower r = system_cost(p.system, p.cost, {2, 4});
  EXPECT_DOUBLE_EQ(r.power.links, 8 * 10 * 1 + 8 * 20 * 10);
}

TEST(CollectiveRatio, DfmodelTable) {
  // n = 32 chips on 25 GB/s links (the seed's DP dimension: 31 / 800 = 0.03875).
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllReduce, LinkKind::Ring, 32, 25), 0.03875);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllReduce, LinkKind::Switch, 32, 25), 0.03875);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllReduce, LinkKind::FullMesh, 32, 25), 1.0 / 800);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllGather, LinkKind::Ring, 32, 25), 0.03875);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllGather, LinkKind::FullMesh, 32, 25), 1.0 / 800);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllToAll, LinkKind::Ring, 32, 25), 1024.0 / 200);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllToAll, LinkKind::Switch, 32, 25), 32.0 / 100);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllToAll, LinkKind::FullMesh, 32, 25), 0.04);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::PointToPoint, LinkKind::Ring, 128, 25), 0.04);
  EXPECT_DOUBLE_EQ(collective_ratio(RatioKind::AllReduce, LinkKind::Ring, 1, 25), 0.0);
}

}  // namespace
}  // namespace orrery
