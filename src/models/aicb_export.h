// A generated training workload (training_workload.h) reshaped into what SimAI/AICB layer-wise
// text can hold, for `orrery convert --model ... --to simai`: one stage's rows for every stage,
// each micro-batch pass opened by an `embedding_layer` row, the iteration-level rows named
// `optimizer_*` (the reader's tail), activation recompute as the header's checkpoint lists, and
// the policy that uses them. Compute must already be priced (the format holds times).
//
// What the format cannot say is dropped, each with a sentence in `lost`: stages that differ (the
// file holds the middle stage's rows; the first stage's embedding and the last stage's LM head go),
// Megatron's gradient bucket size, the parameter gather overlapped with the next forward,
// Transformer Engine's overlap of tensor-parallel collectives with their GEMMs, blocking
// and gathered stage-to-stage transfers, and context parallelism (its collectives go; its ranks
// count as data-parallel ones). A plan with one stage, one model chunk, one context rank and one
// data-parallel rank loses nothing: the file read back simulates to the same iteration within the
// nanosecond rounding of its times.
#pragma once

#include <string>
#include <vector>

#include "workload/workload.h"

namespace orrery {

struct AicbExport {
  Workload workload;
  std::vector<std::string> lost;  // what the file does not carry, one sentence each
};

AicbExport aicb_workload(const Workload& generated);

}  // namespace orrery
