// What one rank does in one training iteration, layer by layer.
//
// A Layer is one record of a layer-wise workload (a model layer, an operator, or an
// iteration-level step such as an optimizer update). Each has three phases, each a compute span on
// the rank's compute stream optionally followed by a collective:
//   forward -> (later, in reverse layer order) input-gradient -> weight-gradient.
// A phase whose file gives no time lists the kernels it runs as compute demands (FLOPs, bytes);
// training/compute_pricing.h prices them into `compute` on a device before any simulator runs.
// A Program groups the layers into micro-batch passes and iteration-level rows. How passes are
// ordered, overlapped and pipelined is the simulator's business (src/training/), not the IR's.
//
// Pipeline stages run the same pass unless the program says otherwise. A program generated from a
// model description (src/models/) lists in each pass the layers of one model chunk (one virtual
// pipeline stage: chunk c of stage s is virtual stage c * pp + s, Megatron's numbering) and marks
// each layer with the virtual stages that run it, so the first stage can carry the embedding, the
// last the LM head, and stages can hold different numbers of layers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/compute_demand.h"
#include "core/time.h"
#include "workload/communication.h"
#include "workload/gemm_overlap.h"

namespace orrery {

// The most tasks the stage programs of one iteration may hold (pp x micro-batches x layers x
// phases, about kTasksPerLayerRun for each run of a layer without recompute): beyond it the task
// simulations refuse the workload, before building them where they can (the closed form takes it).
constexpr int64_t kMaxStageTasks = 20'000'000;
constexpr double kTasksPerLayerRun = 6;

struct Phase {
  Time compute;                       // duration on the compute stream
  std::optional<Communication> comm;  // issued when the compute ends; absent if none
  // The file's own words for the communication, verbatim, for peers' compatibility modes:
  std::string source_comm_type;  // e.g. "ALLTOALL_EP", "NONE"
  Bytes source_comm_bytes = 0;
  // The kernels `compute` is priced from when the file gives no time (operator-level formats).
  std::vector<ComputeDemand> kernels;
  // A collective run beside the phase's first GEMM kernel instead of after the compute
  // (Transformer Engine's communication-GEMM overlap, workload/gemm_overlap.h); absent: none.
  std::optional<GemmOverlap> overlapped;
};

struct Layer {
  std::string name;
  int64_t line = 0;  // 1-based line of the record in its file; 0 when the format has no lines
  Phase forward;
  Phase input_grad;
  Phase weight_grad;
  // Operator kind in operator-level workloads ("addmm", "softmax"); empty otherwise.
  std::string op;
  // The virtual stages that run this layer: an index into Program::stage_sets, or -1 for all.
  // Iteration-level rows: the stages (a stage runs the row when one of its chunks is in the set).
  int32_t stage_set = -1;
};

// Half-open index range [begin, end) into Program::layers.
struct LayerRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

struct Program {
  std::vector<Layer> layers;              // every record, in file order
  std::vector<LayerRange> micro_batches;  // one pass per micro-batch, in order
  LayerRange before;  // iteration-level rows listed before the first pass (AICB: grad sync, ...)
  LayerRange after;   // iteration-level rows listed after the last pass (AICB: loss, optimizer)

  // false: a pass lists one pipeline stage's layers, which the simulator splits into its model
  // chunks. true: a pass lists one model chunk's layers, each run where its stage_set says.
  bool pass_per_model_chunk = false;
  // stage_sets[k][v]: virtual stage v runs the layers whose stage_set is k.
  std::vector<std::vector<bool>> stage_sets;

  // True when virtual stage `v` runs `layer`.
  bool runs_on(const Layer& layer, int64_t v) const {
    return layer.stage_set < 0 ||
           stage_sets[static_cast<size_t>(layer.stage_set)][static_cast<size_t>(v)];
  }
};

}  // namespace orrery
