// The per-layer table (`orrery simulate --csv FILE`): one row per workload record with its
// compute and the cost of each collective, per execution. Times in microseconds, sizes in bytes.
// Columns: layer, line, executions, recomputes, then for each phase p in fwd, ig, wg:
//   p_compute_us, p_comm (collective or empty), p_group, p_ranks, p_bytes, p_comm_us.
#pragma once

#include <iosfwd>

#include "workload/result.h"

namespace orrery {

void write_layer_csv(std::ostream& out, const Result& result);

}  // namespace orrery
