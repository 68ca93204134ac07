// Pipeline schedules: the order in which one stage runs the forward and backward passes of each
// (micro-batch, model chunk). A stage's order is fixed before the run, as in Megatron-LM; the
// event simulator enforces it on the stage's compute stream and the dependencies between stages
// decide when each pass can start.
#pragma once

#include <cstdint>
#include <vector>

#include "training/simulation_options.h"

namespace orrery {

struct PipelineOp {
  bool forward = true;
  int64_t micro_batch = 0;
  int64_t chunk = 0;  // model chunk on this stage (0 .. chunks-1)

  bool operator==(const PipelineOp&) const = default;
};

// The order of stage `stage` (0-based) of `stages`, for `micro_batches` micro-batches and
// `chunks` model chunks per stage. `kind` must not be Auto. 1f1b requires chunks == 1.
//   gpipe:       F(all micro-batches, chunk 0), F(..., chunk 1), ..., then B in reverse chunk
//   order. 1f1b:        min(stages - stage - 1, m) warm-up forwards, then alternate F and B, then
//   drain. interleaved: Megatron's order: micro-batches in groups of `stages`, each group through
//   chunk 0,
//                1, ...; warm-up of 2(stages - stage - 1) + (chunks - 1) * stages forwards. When
//                the micro-batches are not a multiple of the stages the last group takes the
//                remainder and each backward keeps its place after the forward it waits on
//                (Megatron requires the multiple; its formula deadlocks otherwise).
std::vector<PipelineOp> pipeline_order(ScheduleKind kind, int64_t stages, int64_t stage,
                                       int64_t micro_batches, int64_t chunks);

}  // namespace orrery
