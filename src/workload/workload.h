// A training workload as read from a file: where it came from, how it is parallelised, and the
// Program every rank runs (all pipeline stages run copies of it), or, for execution traces, the
// task graph of every rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/bandwidth.h"
#include "workload/graph_program.h"
#include "workload/model_summary.h"
#include "workload/parallelism.h"
#include "workload/program.h"

namespace orrery {

// Activation recomputation: when the backward pass reaches a trigger layer it re-runs the
// forward from the nearest checkpoint layer at or before it. Indices are into Program::layers.
struct Recompute {
  std::vector<int64_t> checkpoints;
  std::vector<int64_t> triggers;
};

// A file that gives forward times only (a NeuSight table run without is_train): every backward
// time is left 0 and estimated where timing is decided (training/backward_estimate.h).
// `parameter_layers`: indices into Program::layers of the layers that own parameters, so that
// their backward has a weight gradient.
struct ForwardTimesOnly {
  std::vector<size_t> parameter_layers;
};

struct Workload {
  std::string name;    // short name for reports (the file's stem)
  std::string source;  // path it was read from
  // The line that messages about the workload as a whole point at (its header); 0 for a workload
  // with no lines of its own (generated from a model description).
  int64_t header_line = 1;
  std::string format;  // reader that produced it, e.g. "simai"
  std::string policy;  // training loop named by the file, e.g. "HYBRID_TRANSFORMER_FWD_IN_BCKWD"

  Parallelism parallelism;
  // False when the file does not say how many GPUs run the job (operator-level formats); the
  // caller then chooses the data-parallel degree (--dp, --gpus or the cluster).
  bool world_size_from_file = true;
  // Bytes sent between adjacent pipeline stages per micro-batch (each direction), if the file
  // says (AICB "pp_comm").
  std::optional<Bytes> stage_boundary_bytes;
  // Megatron's scatter/gather of stage-to-stage activations: each tensor-parallel rank sends its
  // 1/tp share (stage_boundary_bytes) and the receiving tensor group all-gathers the whole.
  bool stage_boundary_gathered = false;
  // The schedule waits for each stage-to-stage send and receive before computing on (Megatron's
  // p2p without overlap); false: transfers run on their own streams beside compute.
  bool blocking_p2p = false;
  Recompute recompute;
  // Megatron's gradient buckets: an overlapped gradient reduction is issued in buckets of at least
  // this many bytes, each when the last micro-batch's backward has produced all its gradients.
  // Absent: one bucket per layer that produces weight gradients.
  std::optional<Bytes> gradient_bucket_bytes;
  // Megatron's overlap_param_gather: present, the iteration-level data-parallel all-gathers of
  // the updated parameters are not run after the optimizer but in buckets of at least this many
  // bytes (the gradient buckets' parameters at the gathered width) during each model chunk's
  // first forward, each awaited by the first layer it holds (with overlap; training/
  // stage_program.h). Absent: after the optimizer, as the rows are listed.
  std::optional<Bytes> param_gather_bucket_bytes;
  // With param_gather_bucket_bytes, under the interleaved schedule: Megatron-LM's aligned launch
  // (align_param_gather, its default), each model chunk's buckets all issued from the schedule
  // (training/param_gather_launch.h) and awaited by their first layers; false: the lazy chain,
  // each bucket issued once the forward has waited for the one before.
  bool align_param_gather = true;
  Program program;
  // Execution traces (Chakra): every rank's task graph, run as is instead of `program` (which
  // is then empty; docs/chakra.md).
  std::optional<GraphProgram> graph;
  std::optional<ModelSummary> model;  // from model-level formats
  std::optional<ForwardTimesOnly> forward_times_only;
};

}  // namespace orrery
