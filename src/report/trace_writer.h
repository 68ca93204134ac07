// The simulated iteration as a Chrome/Perfetto trace (Trace Event Format, JSON object form):
// one process per pipeline stage (per rank shown, in flow mode), one thread per stream (compute,
// tp, ep, dp, dp_ep, pp, cp, pp send fwd, pp send bwd), one complete event ('X') per slice with
// its bytes, FLOPs, group and algorithm as arguments, and in flow mode one counter ('C') per
// busiest link with its utilisation in percent. Timestamps and durations are microseconds, as the
// format defines, rounded to the nanosecond. Opens in ui.perfetto.dev and chrome://tracing.
#pragma once

#include <iosfwd>
#include <vector>

#include "workload/result.h"

namespace orrery {

// Results without a timeline contribute nothing; several results (jobs) are prefixed "job k".
void write_trace(std::ostream& out, const std::vector<Result>& results);

}  // namespace orrery
