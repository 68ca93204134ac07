// Small dataflow problems built in code, with numbers chosen so that every figure of the model
// can be derived by hand in the tests.
#pragma once

#include <string>

#include "workload/dataflow_problem.h"

namespace orrery::test {

inline DataflowKernel simd(int64_t id, const std::string& name, int64_t m, int64_t n,
                           bool backward = false) {
  DataflowKernel k;
  k.id = id;
  k.name = name;
  k.line = 10 * id;
  k.backward = backward;
  k.unit = KernelUnit::Simd;
  k.variant = KernelVariant::Elementwise;
  k.m = m;
  k.n = n;
  k.input1_bytes = k.output_bytes = static_cast<double>(m * n * 2);
  k.sharding = TensorAxis::None;
  k.tiling = TensorAxis::N;
  return k;
}

inline DataflowKernel gemm(int64_t id, const std::string& name, int64_t m, int64_t k_dim, int64_t n,
                           TensorAxis sharding, bool backward = false) {
  DataflowKernel k;
  k.id = id;
  k.name = name;
  k.line = 10 * id;
  k.backward = backward;
  k.unit = KernelUnit::Systolic;
  k.variant = KernelVariant::GemmInputWeight;
  k.m = m;
  k.k = k_dim;
  k.n = n;
  k.input1_bytes = static_cast<double>(k_dim * n * 2);
  k.weight_bytes = static_cast<double>(m * k_dim * 2);
  k.output_bytes = static_cast<double>(m * n * 2);
  k.sharding = sharding;
  k.tiling = TensorAxis::N;
  if (sharding == TensorAxis::K) k.collective = DataflowCollective::AllReduce;
  return k;
}

inline DataflowEdge edge(int64_t id, int64_t from, int64_t to) {
  DataflowEdge e;
  e.id = id;
  e.line = 1000 + id;
  e.from_id = from;
  e.to_id = to;
  return e;
}

// Chips: `dims` sizes; 2 x 2 systolic array, 4 cores, 1 GHz (32 GFLOPS peak), compute_util 0.5
// (16 GFLOPS), DRAM 100 GB/s, word 2; LLM hidden 8, seq 4, 3 layers, batch 6, micro-batch 1,
// tile 1 (4 tiles); cost: link $3, switch $5, DRAM $0.5, chip $100 per unit.
inline DataflowProblem tiny_problem(const std::string& topology,
                                    std::vector<TopologyDimension> dims) {
  DataflowProblem p;
  p.name = "tiny";
  p.source = "tiny.txt";
  DataflowSystem& s = p.system;
  s.chips = 1;
  for (const TopologyDimension& d : dims)
    s.chips *= d.size;
  s.cores = 4;
  s.systolic_width = s.systolic_height = 2;
  s.freq_ghz = 1.0;
  s.sram_bytes = 1e6;
  s.dram_gbps = 100;
  s.dram_bytes = 1e12;
  s.topology = topology;
  s.dimensions = std::move(dims);
  s.line = 1;
  p.cost.link_price = 3;
  p.cost.switch_price = 5;
  p.cost.dram_price = 0.5;
  p.cost.chip_price = 100;
  p.cost.link_power[0] = p.cost.link_power[1] = p.cost.link_power[2] = 0.25;
  p.cost.switch_power = 0.125;
  p.cost.dram_power = 2;
  p.cost.chip_power = 7;
  p.run.workload_kind = "llm";
  p.run.llm = LlmShape{8, 4, 2, 4, 3, 6, 1, 1, 0};
  p.run.style = ExecutionStyle::KernelByKernel;
  p.run.compute_util = 0.5;
  p.run.word_bytes = 2;
  p.run.line = 2;
  return p;
}

}  // namespace orrery::test
