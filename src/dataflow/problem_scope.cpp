#include "dataflow/problem_scope.h"

#include <cmath>
#include <set>
#include <string>

namespace orrery {
namespace {

bool modelled(DataflowCollective c) {
  return c != DataflowCollective::PointToPoint && c != DataflowCollective::Broadcast;
}

}  // namespace

void check_modelled(const DataflowProblem& p, Diagnostics& diagnostics) {
  const std::string& file = p.source;
  const SourceLocation run_at{file, p.run.line}, system_at{file, p.system.line};
  if (!p.run.llm)
    throw InputError(run_at, "expected an llm workload; '" + p.run.workload_kind +
                                 "' workloads (DLRM, HPL, FFT, SSM) are not modelled by Orrery");
  const LlmShape& llm = *p.run.llm;
  const SourceLocation llm_at{file, p.run.llm_line > 0 ? p.run.llm_line : p.run.line};
  if (llm.hidden < 1 || llm.seq_len < 1 || llm.layers < 1 || llm.global_batch < 1)
    throw InputError(llm_at,
                     "llm: expected hidden_dim, seq_len, num_layer and global_batch_size >= 1");
  constexpr int64_t kLargest = 2147483647;  // keeps products of sizes exact in 64 bits
  for (const int64_t v :
       {llm.hidden, llm.seq_len, llm.layers, llm.global_batch, llm.micro_batch, llm.tile_size})
    if (v > kLargest)
      throw InputError(llm_at, "llm: expected sizes <= 2147483647, found " + std::to_string(v));
  if (llm.micro_batch < 0 || llm.tile_size < 0)
    throw InputError(llm_at, "llm: expected micro_batch_size and tile_size >= 0 (0: free)");
  if (llm.layers_in_graph > 1)
    throw InputError(llm_at,
                     "llm: num_layer_in_graph > 1 (a whole-model graph cut into pipeline stages) "
                     "is not modelled; give a one-layer graph");
  if (p.run.word_bytes < 1 || p.run.word_bytes > kLargest)
    throw InputError(run_at, "expected word between 1 and 2147483647 bytes, found " +
                                 std::to_string(p.run.word_bytes));
  // Written so that NaN fails too.
  if (!(p.run.compute_util >= 0 && p.run.compute_util <= 1))
    throw InputError(run_at, "expected compute_util in [0, 1] (0: cycle model)");
  if (p.run.num_config < 0 || p.run.num_config > kLargest)
    throw InputError(run_at, "expected num_config between 0 and 2147483647");

  const DataflowSystem& s = p.system;
  if (s.chips < 1 || s.chips > kLargest)
    throw InputError(system_at, "system: expected num_chip between 1 and 2147483647");
  if (s.cores < 1 || s.systolic_width < 1 || s.systolic_height < 1 || s.cores > kLargest ||
      s.systolic_width > kLargest || s.systolic_height > kLargest ||
      !(s.freq_ghz > 0 && std::isfinite(s.freq_ghz)))
    throw InputError(system_at,
                     "accelerator: expected core, systolic_width, systolic_height between 1 and "
                     "2147483647 and a finite freq > 0");
  if (!(s.sram_bytes > 0 && std::isfinite(s.sram_bytes)))
    throw InputError(system_at, "accelerator: expected a finite sram_cap > 0");
  if (!(s.dram_gbps > 0 && std::isfinite(s.dram_gbps)))
    throw InputError(system_at, "memory: expected a finite dram_bw > 0");
  if (!(s.dram_bytes > 0 && std::isfinite(s.dram_bytes)))
    throw InputError(system_at, "memory: expected a finite dram_cap > 0");
  const SourceLocation topology_at{file, s.topology_line > 0 ? s.topology_line : s.line};
  int64_t fixed = 1;  // stays <= num_chip <= 2^31 - 1 before each product: no overflow
  std::set<ParallelRole> roles;
  for (size_t i = 0; i < s.dimensions.size(); ++i) {
    const TopologyDimension& d = s.dimensions[i];
    const std::string axis(1, "xyz"[i]);
    if (!(d.link_gbps > 0 && std::isfinite(d.link_gbps)))
      throw InputError(topology_at, s.topology + ": expected a finite link_bw_" + axis + " > 0");
    if (d.size < 0 || d.size > kLargest)
      throw InputError(topology_at,
                       s.topology + ": expected " + axis + " between 0 (free) and 2147483647");
    if (d.size > 0) fixed *= d.size;
    if (fixed > s.chips)
      throw InputError(topology_at, s.topology + ": the fixed dimension sizes (product " +
                                        std::to_string(fixed) + " at " + axis +
                                        ") exceed num_chip " + std::to_string(s.chips));
    if (d.role != ParallelRole::Unassigned && !roles.insert(d.role).second)
      throw InputError(topology_at, s.topology +
                                        ": expected each parallelism on one dimension, found it "
                                        "on two");
  }
  if (s.chips % fixed != 0)
    throw InputError(topology_at, s.topology + ": the fixed dimension sizes (product " +
                                      std::to_string(fixed) + ") do not divide num_chip " +
                                      std::to_string(s.chips));
  const DataflowCostTable& c = p.cost;
  for (const double v :
       {c.link_price, c.switch_price, c.dram_price, c.chip_price, c.link_power[0], c.link_power[1],
        c.link_power[2], c.switch_power, c.dram_power, c.chip_power})
    if (!(v >= 0 && std::isfinite(v)))
      throw InputError(SourceLocation{file, 0}, "cost: expected finite prices and powers >= 0");

  for (const DataflowKernel& k : p.kernels) {
    if (!modelled(k.collective) || k.collective2 != DataflowCollective::None)
      throw InputError({file, k.line},
                       "kernel '" + k.name +
                           "': point-to-point, broadcast and second collectives (HPL, DLRM) are "
                           "not modelled");
  }
  for (const DataflowEdge& e : p.edges)
    if (!modelled(e.collective) || e.collective == DataflowCollective::AllReducePeriodic)
      throw InputError({file, e.line}, "connection " + std::to_string(e.id) +
                                           ": expected no collective, ALL_GATHER, ALL_TO_ALL or "
                                           "ALL_REDUCE on an edge");

  const auto ignored = [&](bool present, const std::string& what) {
    if (present) diagnostics.warn(system_at, what + " is not modelled; ignored");
  };
  ignored(s.hbd > 0, "HBD (hierarchical high-bandwidth domain)");
  ignored(s.pmu > 0, "accelerator.pmu (RDU place-and-route mode)");
  ignored(s.link_latency > 0, "accelerator.link_latency");
  ignored(s.second_dram_gbps > 0 || s.second_dram_bytes > 0, "the second DRAM tier");
  for (const DataflowKernel& k : p.kernels)
    if (k.skip_weight || k.use_effective_stage) {
      diagnostics.warn({file, k.line}, "kernel '" + k.name +
                                           "': skip_weight / use_effective_stage (SSM knobs) are "
                                           "not modelled; ignored");
      break;
    }
}

}  // namespace orrery
