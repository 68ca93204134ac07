// Writer of SimAI / AICB layer-wise text workloads (the format read by simai_text.h): the header
// line with the parallel degrees, the recompute lists (checkpoints, checkpoint_initiates) and
// pp_comm, the record count, then one 12-field record per
// layer row (times in ns, rounded; sizes in bytes). Iteration-level rows are written where they
// sit in the Program; micro-batch passes must start with a row named "embedding_layer*" for a
// reader to find them again. Collectives are written in the column's default group (tensor for
// forward and input-gradient, data-parallel for weight-gradient) or with the _EP / _DP_EP suffix;
// a collective the format cannot express in its column is an error (std::invalid_argument).
#pragma once

#include <iosfwd>

#include "workload/workload.h"

namespace orrery {

void write_simai_text(std::ostream& out, const Workload& workload);

}  // namespace orrery
