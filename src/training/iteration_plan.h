// The priced plan of one training iteration, shared by the event and analytical simulators:
// every layer's compute and collectives with their costs on the cluster, the layers of each
// (micro-batch, model chunk), the stage-to-stage transfer, and how the iteration-level rows run.
//
// Rules (documented in docs/event-mode.md):
// - A collective overlapping compute takes SMs from it: an input-gradient collective overlapping
//   its layer's weight-gradient compute adds min(cost, compute) x channels / units to that
//   compute; asynchronous collectives and gradient buckets slow the compute that follows them on
//   the stage by channels / units, over as much of it as their cost covers (stage_program.h).
// - A collective run beside a phase's GEMM (Transformer Engine's overlap, Phase::overlapped) is
//   folded into that phase's compute (gemm_overlap_time.h); the part its GEMM does not hide
//   (PlannedPhase::exposed_overlap) is reported as exposed tensor-parallel communication.
// - Collectives in the tensor, expert and pipeline groups block the compute stream. A layer's
//   input-gradient collective overlaps its own weight-gradient compute when overlap is on.
// - Weight-gradient collectives of micro-batch layers in a data-parallel group are asynchronous
//   (own stream) when overlap is on.
// - Iteration-level rows (before the first and after the last pass) run after the stage's last
//   backward pass, in file order. Their weight-gradient reduce-scatters / all-reduces in a
//   data-parallel group are the gradient reduction: with overlap they are split into buckets
//   issued as the last micro-batch's backward produces each layer's gradients (in proportion to
//   its weight-gradient compute). Their data-parallel all-gathers gather the updated parameters
//   after the optimizer compute and end the iteration; with Workload::param_gather_bucket_bytes
//   and overlap they are instead split into the same kind of buckets, gathered during each model
//   chunk's first forward (Megatron's overlap_param_gather; stage_program.h), launched from the
//   interleaved schedule with Workload::align_param_gather (param_gather_launch.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "network/collective_algorithms.h"
#include "network/collective_model.h"
#include "training/simulation_options.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

enum class CommRole : uint8_t {
  Blocking,           // the compute stream waits for it
  Async,              // runs on its group's stream; awaited before the iteration-level rows
  GradientReduction,  // iteration-level DP reduction (bucketed over the last backward if overlap)
  ParameterGather,    // iteration-level DP all-gather after the optimizer
  ParameterPrefetch,  // a ParameterGather split into buckets gathered during the first forward
};

struct PlannedComm {
  Communication comm;
  int64_t ranks = 1;
  Time cost;
  CommRole role = CommRole::Blocking;
  Algorithm algorithm = Algorithm::Ring;  // the algorithm the cost was priced with
  int64_t channels = 0;                   // the SMs its kernel occupies (CollectiveCost::channels)
};

struct PlannedPhase {
  Time compute;
  // The part of `compute` that is a tensor-parallel collective folded in (Phase::overlapped) and
  // not hidden by its GEMM: the overlap's time beyond the slowed GEMM, or with --no-overlap the
  // whole collective. Reports charge it to the tensor group's exposed communication.
  Time exposed_overlap;
  std::optional<PlannedComm> comm;
  std::optional<PlannedComm> overlapped;  // the folded collective, priced on its own (reports)
};

struct PlannedLayer {
  PlannedPhase forward, input_grad, weight_grad;
  // Layers whose forward re-runs just before this layer's backward (activation recompute).
  std::vector<size_t> recompute;
  int32_t stage_set = -1;  // Layer::stage_set
};

// A share of an iteration-level data-parallel collective, tied to `layer`: a gradient reduction's
// is issued once the layer's weight gradient of the last micro-batch is computed; a parameter
// gather's is awaited before the layer's forward in the first micro-batch (the first layer of the
// bucket in forward order).
struct CommBucket {
  size_t layer = 0;
  size_t row = 0;      // the iteration-level row whose collective it is a share of
  int64_t chunk = -1;  // the model chunk whose run of `layer` issues it; -1: any
  CommGroup group = CommGroup::Data;
  CollectiveKind kind = CollectiveKind::ReduceScatter;
  Bytes bytes = 0;
  Time cost;
  Algorithm algorithm = Algorithm::Ring;
  int64_t channels = 0;
};

struct IterationPlan {
  Parallelism parallelism;                         // as simulated (world-size override applied)
  ScheduleKind schedule = ScheduleKind::OneFOneB;  // resolved, never Auto
  int64_t chunks = 1;                              // model chunks per stage
  bool overlap = true;
  // The GPU's compute units (0: unknown). A collective that runs beside compute occupies
  // `channels` of them, so the compute it overlaps slows: over an overlap of duration o it loses
  // o x sm_contention_share(channels, compute_units, contention_overhead) of progress, added to
  // its time (docs/event-mode.md, SM contention).
  int64_t compute_units = 0;
  double contention_overhead = 0;

  std::vector<PlannedLayer> layers;  // aligned with Program::layers
  // passes[k][chunk]: the layer indices of a distinct pass's model chunk, in forward order;
  // micro-batch i runs pass pass_of[i] (micro-batches listing one layer range share it).
  std::vector<std::vector<std::vector<size_t>>> passes;
  std::vector<size_t> pass_of;
  std::vector<size_t> iteration_layers;  // iteration-level rows, file order
  std::vector<CommBucket> buckets;       // gradient reductions; empty without overlap, or when
                                         // not asked for
  // Parameter gathers (Workload::param_gather_bucket_bytes, with overlap): each chain (the
  // buckets of one row and model chunk) contiguous, in forward order.
  std::vector<CommBucket> gather_buckets;
  // The gathers' aligned launch (Workload::align_param_gather) under the interleaved schedule:
  // each model chunk's buckets issued together from the schedule (param_gather_launch.h) instead
  // of as the lazy chain; off for the other schedules, which run one chain per chunk.
  bool aligned_gathers = false;

  // Program::pass_per_model_chunk: every chunk's list holds the whole pass, and stage s runs a
  // layer of chunk c only when stage_sets says virtual stage c * pp + s does.
  bool pass_per_model_chunk = false;
  std::vector<std::vector<bool>> stage_sets;  // Program::stage_sets

  Bytes transfer_bytes = 0;  // per micro-batch per stage boundary, each direction
  // Per pipeline boundary k, between stages k and (k + 1) mod pp (the last is the interleaved
  // schedule's wrap-around), one such transfer either way, priced on the boundary's own pair
  // (GroupPricing::transfer): its time (with the receiver's all-gather, if gathered), and how the
  // flow mode runs it (the factor on its bytes, its latency). Empty when pp is 1.
  std::vector<TransferCost> transfers;
  bool blocking_p2p = false;  // Workload::blocking_p2p

  int64_t micro_batches() const { return static_cast<int64_t>(pass_of.size()); }
  // The transfer from stage `from` to its neighbour `to`: the boundary the two stages share; none
  // (free) from a stage to itself, as one stage passes between its model chunks.
  const TransferCost& transfer(int64_t from, int64_t to) const {
    static const TransferCost none;
    if (from == to) return none;
    const int64_t k = to == (from + 1) % parallelism.pp ? from : to;
    return transfers[static_cast<size_t>(k)];
  }
  // The layers of each model chunk of micro-batch `micro_batch`'s pass.
  const std::vector<std::vector<size_t>>& chunk_layers(size_t micro_batch) const {
    return passes[pass_of[micro_batch]];
  }

  // True when stage `stage` runs `layer` in its model chunk `chunk`.
  bool runs(size_t layer, int64_t stage, int64_t chunk) const {
    const int32_t set = layers[layer].stage_set;
    return set < 0 || stage_sets[static_cast<size_t>(set)]
                                [static_cast<size_t>(chunk * parallelism.pp + stage)];
  }
  // True when stage `stage` runs the iteration-level row `layer` (one of its chunks is in the
  // row's set).
  bool runs_row(size_t layer, int64_t stage) const {
    for (int64_t c = 0; c < parallelism.vpp; ++c)
      if (runs(layer, stage, c)) return true;
    return false;
  }
};

// Throws InputError when the parallelism does not fit the cluster or the world size, or, for a
// task simulation, the iteration would need more than kMaxStageTasks tasks.
// `for_closed_form`: the plan is for the closed form (analytical mode), which simulates no tasks
// and hides the overlapped gradient reductions behind the last backward whole, so neither the
// task limit nor the reductions' buckets apply; the parameter gathers are split either way.
IterationPlan plan_iteration(const Workload& workload, const Cluster& cluster,
                             const SimulationOptions& options, Diagnostics& diagnostics,
                             bool for_closed_form = false);

// Per-layer costs for the report: one row per workload layer.
std::vector<LayerTiming> layer_timings(const Workload& workload, const IterationPlan& plan);

// The Result of a simulation in `mode`: what was simulated, the stages' timings, the iteration
// time and breakdown of the critical stage (the last to finish; the first of equals), and, with
// `layer_rows` (SimulationOptions::layer_rows), the per-layer costs.
Result plan_result(std::string mode, const Workload& workload, const Cluster& cluster,
                   const IterationPlan& plan, std::vector<StageTiming> stages, bool layer_rows);

}  // namespace orrery
