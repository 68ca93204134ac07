// The per-kernel and per-edge terms of DFModel's latency model for one choice of TP/PP/DP, their
// dimensions, micro-batch and tile size, and how they add up into one configuration's time.
// All times are nanoseconds for one sample of one layer (DFModel's unit: bytes / (GB/s) = ns and
// FLOP / GFLOPS = ns); they are doubles because DFModel's figures are fractions of a nanosecond.
//
// For kernel k with its tensor-parallel axis divided by TP and its tiled axis by num_tile
// (shard_M, shard_K, shard_N per chip and tile; M counts outer * M), and configuration c:
//   compute, util mode (compute_util u > 0):
//       C_c = num_tile * sum_k FLOP_k / (u * F),  FLOP_k = 2 shard_M shard_K shard_N (systolic)
//             or shard_M shard_N (SIMD), times num_input; F = 2 w h cores freq GFLOPS per chip
//   compute, cycle mode (u = 0): kernels of c share the cores; each gets lane x stage cores and
//       takes ceil(shard_M / (lane w)) ceil(shard_N / (stage h)) shard_K cycles (SIMD: stage 1,
//       shard_N instead of the last two factors); C_c = num_tile * max_k cycles_k / freq, with
//       the cores split to minimise the max
//   memory: M_c = (num_tile * sum of b_e over edges with exactly one end in c
//                  + sum_k memory_size_k) / DRAM_BW,   b_e = shard_M shard_N word of the producer
//   network: N_c = sum_k f rho_AR A_k num_tile (tensor-parallel all-reduce, A_k = shard_M shard_N
//                  word) + sum_k f rho_ARP A_k / n_mb (data-parallel gradient all-reduce, spread
//                  over the micro-batches) + sum over edges produced in c of rho b_e num_tile
//   II_c = C_c + M_c + N_c, or max(C_c, M_c, N_c) with perfect overlap, or max(C_c, M_c) + N_c.
// SRAM of c: staging_buffers * sum of b_e over DRAM-staged edges + sum of b_e * buffer_depth over
// fused edges + one byte per weight streamed (weights stream from DRAM at no modelled cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dataflow/dataflow_graph.h"
#include "dataflow/mapping.h"
#include "dataflow/sharding_plan.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct KernelTerms {
  int64_t shard_m = 0, shard_k = 0, shard_n = 0;  // per chip, per tile
  double compute_ns = 0;                          // util mode: num_tile * FLOP / (u F)
  double tp_network_ns = 0;                       // tensor-parallel collective of the kernel
  double dp_network_ns = 0;                       // data-parallel gradient all-reduce share
  double memory_extra_bytes = 0;
  double weight_bytes = 0;  // per chip (0 for kernels without a weight)
  // Cycle mode: the fewest cycles per tile reachable with a number of cores, as steps of
  // (cores, cycles) with cores increasing and cycles decreasing; the first step has >= 1 core.
  struct CycleStep {
    int64_t cores = 1;
    double cycles = 0;
  };
  std::vector<CycleStep> cycle_steps;
};

struct EdgeTerms {
  double tile_bytes = 0;     // b_e: per chip, per tile
  double tp_network_ns = 0;  // re-layout collective, charged to the producer's configuration
  int64_t buffer_depth = 1;
};

// What one configuration adds up to; filled by ConfigTerms.
struct ConfigTiming {
  double compute_ns = 0, memory_ns = 0, tp_network_ns = 0, dp_network_ns = 0;
  double ii_ns = 0;
  double sram_bytes = 0;
  bool fits = true;            // SRAM and cores suffice
  bool cores_fit = true;       // cores suffice (then they do for no configuration holding these)
  double cycles_per_tile = 0;  // cycle mode: the slowest kernel's cycles per tile
  double network_ns() const { return tp_network_ns + dp_network_ns; }
};

class CostTerms {
 public:
  // Requires a llm run; `mapping.config` is not used.
  CostTerms(const DataflowProblem& problem, const DataflowGraph& graph, const ShardingPlan& plan,
            const Mapping& mapping, const ModelOptions& options);

  const KernelTerms& kernel(size_t k) const { return kernels_[k]; }
  const EdgeTerms& edge(size_t e) const { return edges_[e]; }
  int64_t num_tile() const { return num_tile_; }
  double peak_gflops() const { return peak_gflops_; }

  // Time of the configuration holding `members` (kernel indices), where in_config(k) tells
  // membership; edges with exactly one end inside are DRAM-staged, edges with both are fused.
  template <typename InConfig>
  ConfigTiming config(const std::vector<size_t>& members, InConfig in_config) const;

  // The same from running sums (used by the fusion search, which grows configurations).
  struct Sums {
    double compute_ns = 0, tp_network_ns = 0, dp_network_ns = 0;
    double staged_tile_bytes = 0, fused_sram_bytes = 0, memory_extra_bytes = 0;
    int64_t kernels = 0, weighted = 0;
    // Cycle mode: a lower bound on the configuration's cycles per tile, such as the answer for
    // some of its members (adding kernels never lowers it).
    double cycles_at_least = 0;
  };
  ConfigTiming finish(const Sums& sums, const std::vector<size_t>& members) const;

 private:
  double cycle_mode_compute_ns(const std::vector<size_t>& members, double at_least, bool& fits,
                               double& cycles) const;

  const DataflowProblem& problem_;
  const DataflowGraph& graph_;
  ModelOptions options_;
  std::vector<KernelTerms> kernels_;
  std::vector<EdgeTerms> edges_;
  std::vector<double> cycle_values_;  // cycle mode: every kernel's step cycles, sorted, unique
  int64_t num_tile_ = 1;
  double peak_gflops_ = 0;
  bool cycle_mode_ = false;
};

template <typename InConfig>
ConfigTiming CostTerms::config(const std::vector<size_t>& members, InConfig in_config) const {
  Sums s;
  for (const size_t k : members) {
    const KernelTerms& t = kernels_[k];
    s.compute_ns += t.compute_ns;
    s.tp_network_ns += t.tp_network_ns;
    s.dp_network_ns += t.dp_network_ns;
    s.memory_extra_bytes += t.memory_extra_bytes;
    ++s.kernels;
    if (t.weight_bytes > 0) ++s.weighted;
    for (const size_t e : graph_.out_edges(k)) {
      s.tp_network_ns += edges_[e].tp_network_ns;
      if (in_config(graph_.edges()[e].to))
        s.fused_sram_bytes += edges_[e].tile_bytes * static_cast<double>(edges_[e].buffer_depth);
      else
        s.staged_tile_bytes += edges_[e].tile_bytes;
    }
    for (const size_t e : graph_.in_edges(k))
      if (!in_config(graph_.edges()[e].from)) s.staged_tile_bytes += edges_[e].tile_bytes;
  }
  return finish(s, members);
}

// The pipeline of DFModel (per iteration = one global batch), in ns:
//   T = II * phi * L_s * (B / DP) + T_p2p,   phi = 1 + (PP - 1) / (n_mb * c),
//   c = L_s - 1 if L_s >= 2 else 1,   T_p2p = rho_P2P * 2 h S word * L (training, PP > 1).
struct PipelineTiming {
  double pipeline_factor = 1;
  double p2p_ns = 0;
  double samples_per_replica = 0;  // B / DP
  int64_t layers_per_stage = 1;
  int64_t micro_batches = 1;
  double iteration_ns(double all_config_ii_ns) const {
    return all_config_ii_ns * pipeline_factor * static_cast<double>(layers_per_stage) *
               samples_per_replica +
           p2p_ns;
  }
};

PipelineTiming pipeline_timing(const DataflowProblem& problem, const DataflowGraph& graph,
                               const Mapping& mapping);

// DFModel's seed-era DRAM footprint of a mapping (bytes): weights * L_s + 2 * weights (their
// gradients) + 4 * num_tile * sum over configurations of their DRAM-staged tile bytes.
double dram_footprint_bytes(const DataflowProblem& problem, const DataflowGraph& graph,
                            const CostTerms& terms, const std::vector<int64_t>& config,
                            int64_t layers_per_stage);

// Bandwidth (GB/s) and link kind of the dimension(s) carrying `role` (the first such dimension).
struct RoleLink {
  LinkKind kind = LinkKind::Ring;
  double gbps = 0;
};
RoleLink role_link(const DataflowSystem& system, const Mapping& mapping, ParallelRole role);

}  // namespace orrery
