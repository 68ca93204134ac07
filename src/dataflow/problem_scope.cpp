#include "dataflow/problem_scope.h"

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
  if (llm.hidden < 1 || llm.seq_len < 1 || llm.layers < 1 || llm.global_batch < 1)
    throw InputError(run_at,
                     "llm: expected hidden_dim, seq_len, num_layer and global_batch_size >= 1");
  constexpr int64_t kLargest = 2147483647;  // keeps products of sizes exact in 64 bits
  for (const int64_t v : {llm.hidden, llm.seq_len, llm.layers, llm.global_batch, llm.micro_batch,
                          llm.tile_size, p.system.chips, p.system.cores, p.run.word_bytes})
    if (v > kLargest)
      throw InputError(run_at,
                       "expected sizes, counts and word <= 2147483647, found " + std::to_string(v));
  if (llm.micro_batch < 0 || llm.tile_size < 0)
    throw InputError(run_at, "llm: expected micro_batch_size and tile_size >= 0 (0: free)");
  if (llm.layers_in_graph > 1)
    throw InputError(run_at,
                     "llm: num_layer_in_graph > 1 (a whole-model graph cut into pipeline stages) "
                     "is not modelled; give a one-layer graph");
  if (p.run.compute_util < 0 || p.run.compute_util > 1)
    throw InputError(run_at, "expected compute_util in [0, 1] (0: cycle model)");
  if (p.run.num_config < 0) throw InputError(run_at, "expected num_config >= 0");

  const DataflowSystem& s = p.system;
  if (s.chips < 1) throw InputError(system_at, "system: expected num_chip >= 1");
  if (s.cores < 1 || s.systolic_width < 1 || s.systolic_height < 1 || !(s.freq_ghz > 0))
    throw InputError(system_at,
                     "accelerator: expected core, systolic_width, systolic_height >= 1 and "
                     "freq > 0");
  if (!(s.sram_bytes > 0)) throw InputError(system_at, "accelerator: expected sram_cap > 0");
  if (!(s.dram_gbps > 0)) throw InputError(system_at, "memory: expected dram_bw > 0");
  int64_t fixed = 1;
  std::set<ParallelRole> roles;
  for (size_t i = 0; i < s.dimensions.size(); ++i) {
    const TopologyDimension& d = s.dimensions[i];
    const std::string axis(1, "xyz"[i]);
    if (!(d.link_gbps > 0))
      throw InputError(system_at, s.topology + ": expected link_bw_" + axis + " > 0");
    if (d.size > 0) fixed *= d.size;
    if (d.role != ParallelRole::Unassigned && !roles.insert(d.role).second)
      throw InputError(system_at, s.topology +
                                      ": expected each parallelism on one dimension, found it "
                                      "on two");
  }
  if (s.chips % fixed != 0)
    throw InputError(system_at, s.topology + ": the fixed dimension sizes (product " +
                                    std::to_string(fixed) + ") do not divide num_chip " +
                                    std::to_string(s.chips));

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
