// Calculon's execution description (its execution JSON: num_procs, tensor_par, pipeline_par,
// data_par, batch_size, microbatch_size, datatype, activation_recompute, pipeline_interleaving,
// optimizer_sharding, tensor_par_comm_type, ...) read as Orrery's parallel plan. Keys with no
// counterpart are reported by name when they ask for something Orrery does not model; unknown
// keys are reported by name (docs/calculon.md, "Mapping"). Counts are plain integers, batches in
// sequences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/parallel_plan.h"

namespace orrery {

struct CalculonExecution {
  // tp, pp, vpp, micro_batch, recompute, sequence_parallel, distributed_optimizer, dtype and
  // value_bytes as the file sets them; the rest Orrery's defaults.
  ParallelPlan plan;
  int64_t num_procs = 1;     // world size: tensor_par x pipeline_par x data_par
  int64_t global_batch = 1;  // batch_size, sequences per iteration
  bool multi_query = false;  // attention_type multiquery: one key-value head for all heads
  // data_par_overlap: data-parallel gradient reductions overlap the backward pass.
  bool overlap = false;
  std::vector<std::string> warnings;
};

// Parses the JSON text; throws InputError naming `source`, the key and what was expected.
CalculonExecution parse_calculon_execution(const std::string& text, const std::string& source);

// Reads the file; throws InputError when it cannot be read or parsed.
CalculonExecution load_calculon_execution(const std::string& path);

}  // namespace orrery
