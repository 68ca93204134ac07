#include "dataflow/system_cost.h"

#include <array>
#include <stdexcept>
#include <string>

namespace orrery {
namespace {

// GB/s of links and of switch ports in each dimension.
struct Fabric {
  std::array<double, 3> links{};
  std::array<double, 3> ports{};
};

Fabric fabric_of(const std::string& topology, const std::vector<int64_t>& shape,
                 const std::vector<TopologyDimension>& dims) {
  std::array<double, 3> s{1, 1, 1}, b{0, 0, 0};
  for (size_t i = 0; i < shape.size() && i < 3; ++i) {
    s[i] = static_cast<double>(shape[i]);
    b[i] = dims[i].link_gbps;
  }
  const double n = s[0] * s[1] * s[2];
  Fabric f;
  auto& l = f.links;
  auto& p = f.ports;
  if (topology == "sw") {
    l = {s[0] * b[0]};
    p = {s[0] * b[0]};
  } else if (topology == "fc") {
    l = {s[0] * (s[0] - 1) * b[0]};
  } else if (topology == "r") {
    l = {s[0] * b[0]};
    p = {2 * b[0]};
  } else if (topology == "r_r") {
    l = {n * b[0], n * b[1]};
    p = {2 * s[1] * b[0], 2 * s[0] * b[1]};
  } else if (topology == "fc_fc") {
    l = {s[0] * (s[0] - 1) * s[1] * b[0], s[1] * (s[1] - 1) * b[1]};
    p = {0, s[1] * s[1] * b[1]};
  } else if (topology == "r_fc") {
    l = {n * b[0], s[1] * (s[1] - 1) * b[1]};
    p = {2 * s[1] * b[0], s[1] * s[1] * b[1]};
  } else if (topology == "r_sw") {
    l = {n * b[0], s[1] * b[1]};
    p = {2 * s[1] * b[0], s[1] * b[1]};
  } else if (topology == "sw_sw") {
    l = {n * b[0], s[1] * b[1]};
    p = {n * b[0], s[1] * b[1]};
  } else if (topology == "r_r_r") {
    l = {n * b[0], n * b[1], n * b[2]};
    p = {2 * s[1] * s[2] * b[0], 2 * s[0] * s[2] * b[1], 2 * s[0] * s[1] * b[2]};
  } else if (topology == "r_sw_sw") {
    l = {n * b[0], s[1] * s[2] * b[1], s[2] * b[2]};
    p = {2 * s[1] * s[2] * b[0], s[1] * s[2] * b[1], s[2] * b[2]};
  } else if (topology == "sw_sw_sw") {
    l = {n * b[0], s[1] * s[2] * b[1], s[2] * b[2]};
    p = {n * b[0], s[1] * s[2] * b[1], s[2] * b[2]};
  } else {
    throw std::invalid_argument("unknown DFModel topology '" + topology + "'");
  }
  return f;
}

}  // namespace

SystemCostAndPower system_cost(const DataflowSystem& system, const DataflowCostTable& t,
                               const std::vector<int64_t>& shape) {
  const Fabric f = fabric_of(system.topology, shape, system.dimensions);
  const double chips = static_cast<double>(system.chips);
  SystemCostAndPower r;
  r.cost.dram = chips * system.dram_gbps * t.dram_price;
  r.cost.chips = chips * t.chip_price;
  r.power.dram = chips * system.dram_gbps * t.dram_power;
  r.power.chips = chips * t.chip_power;
  for (size_t i = 0; i < 3; ++i) {
    if (system.chips > 1) {
      r.cost.links += f.links[i] * t.link_price;
      r.power.links += f.links[i] * t.link_power[i];
    }
    if (system.chips > 4) {
      r.cost.switches += f.ports[i] * t.switch_price;
      r.power.switches += f.ports[i] * t.switch_power;
    }
  }
  return r;
}

}  // namespace orrery
