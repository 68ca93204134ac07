// Megatron-LM's aligned launch of the overlapped parameter gathers (align_param_gather, its
// default) under the interleaved schedule: the schedule, not the forward, starts each model
// chunk's whole gather. Chunks 0 and 1 are launched before the stage's first forward; chunk
// c >= 2 when the stage starts the forward that runs `stage` forwards before the stage's first
// forward of chunk c - 1. A stage lags the first by about one forward per stage, so every stage
// launches chunk c at about the time stage 0 starts chunk c - 1: at the same time across the
// pipeline. Positions are indices into the stage's schedule order; no times are involved.
#pragma once

#include <cstdint>
#include <vector>

#include "training/pipeline_schedule.h"

namespace orrery {

// For each of the `chunks` model chunks of stage `stage` running `order` (pipeline_order): the
// index in `order` of the forward at whose start the chunk's gather is launched, or -1 for before
// the first forward.
std::vector<int64_t> aligned_gather_launches(const std::vector<PipelineOp>& order, int64_t stage,
                                             int64_t chunks);

}  // namespace orrery
