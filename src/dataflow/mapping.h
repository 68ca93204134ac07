// One complete mapping of a dataflow problem onto its system: the topology shape and which
// parallelism each dimension carries, micro-batch and tile sizes, the execution style and the
// configuration (fused group) of every kernel; plus the model switches whose right value depends
// on the DFModel version being reproduced.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/dataflow_problem.h"

namespace orrery {

struct Mapping {
  std::vector<int64_t> shape;       // chips along each topology dimension (x, y, z)
  std::vector<ParallelRole> roles;  // the parallelism of each dimension
  int64_t tp = 1, pp = 1, dp = 1;   // products of the dimensions carrying each role
  int64_t micro_batch = 1;          // samples per micro-batch
  int64_t tile_size = 1;            // sequence elements per tile
  ExecutionStyle style = ExecutionStyle::KernelByKernel;
  std::vector<int64_t> config;  // per kernel (file index); kernel-by-kernel: the kernel's index
  int64_t config_count = 0;     // configurations, empty ones included

  int64_t num_tile(int64_t seq_len) const { return (seq_len + tile_size - 1) / tile_size; }
  int64_t micro_batches(int64_t global_batch) const { return global_batch / (dp * micro_batch); }
  int64_t layers_per_stage(int64_t layers) const { return (layers + pp - 1) / pp; }
};

struct ModelOptions {
  // Factor on tensor- and data-parallel all-reduces: 2 (reduce-scatter + all-gather) in the
  // DFModel version that produced the seed and with `separate_rs_ag_for_ar: true`; 1 in the later
  // fork's code without it.
  int allreduce_factor = 2;
  // Buffers of a DRAM-staged edge held in SRAM: 1 (seed era) or 2 (double buffering, later).
  int staging_buffers = 1;
};

}  // namespace orrery
