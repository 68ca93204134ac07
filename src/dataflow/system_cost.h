// Cost ($) and power (W) of a DFModel system: chips, DRAM bandwidth, and the links and switch
// ports its topology needs. With N chips, dimension sizes S0, S1, S2, link bandwidths b0, b1, b2
// (GB/s) and unit price p (per GB/s), the links and switch ports of each dimension are
//
//   topology   links (x, y, z)                           switch ports (x, y, z)
//   sw         S0 b0                                     S0 b0
//   fc         S0 (S0-1) b0                              0
//   r          S0 b0                                     2 b0
//   r_r        N b0, N b1                                2 S1 b0, 2 S0 b1
//   fc_fc      S0 (S0-1) S1 b0, S1 (S1-1) b1             0, S1^2 b1
//   r_fc       N b0, S1 (S1-1) b1                        2 S1 b0, S1^2 b1
//   r_sw       N b0, S1 b1                               2 S1 b0, S1 b1
//   sw_sw      N b0, S1 b1                               N b0, S1 b1
//   r_r_r      N b0, N b1, N b2                          2 S1 S2 b0, 2 S0 S2 b1, 2 S0 S1 b2
//   r_sw_sw    N b0, S1 S2 b1, S2 b2                     2 S1 S2 b0, S1 S2 b1, S2 b2
//   sw_sw_sw   N b0, S1 S2 b1, S2 b2                     N b0, S1 S2 b1, S2 b2
//
// (GB/s of links and switch ports). Links count when N > 1, switch ports when N > 4. Cost =
// N * DRAM_BW * dram_price + N * chip_price + links * link_price + ports * switch_price; power
// uses the same quantities with the per-dimension link power, the switch, DRAM and chip power.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/dataflow_problem.h"

namespace orrery {

struct SystemCost {
  double dram = 0, chips = 0, links = 0, switches = 0;  // in the unit of the total
  double total() const { return dram + chips + links + switches; }
};

struct SystemCostAndPower {
  SystemCost cost;   // $
  SystemCost power;  // W
};

// `shape`: chips per dimension of system.topology (as many as it has dimensions).
SystemCostAndPower system_cost(const DataflowSystem& system, const DataflowCostTable& table,
                               const std::vector<int64_t>& shape);

}  // namespace orrery
