// Backward times for a workload whose file gives forward times only (Workload::forward_times_only,
// a NeuSight table run without is_train). The file says nothing about the backward, so its time is
// an assumption, made here where timing is decided rather than in the reader:
//   backward = ratio x forward,
// split evenly between input and weight gradient for the layers that own parameters
// (ForwardTimesOnly::parameter_layers), all input gradient for the others. A warning names the
// ratio as an assumption (--backward-ratio).
#pragma once

#include "core/diagnostics.h"
#include "workload/workload.h"

namespace orrery {

// The ratio assumed when none is given, and the largest accepted (it keeps every estimated time
// inside Time's range).
inline constexpr double kDefaultBackwardRatio = 2.0;
inline constexpr double kMaxBackwardRatio = 100.0;
// The most compute time an iteration may hold once its backward is estimated: 1e9 ms, about 11.6
// days, far inside Time's range (about 106 days).
inline constexpr double kMaxIterationComputeMs = 1e9;

// Sets the input- and weight-gradient compute of every layer of a workload with forward times only
// and clears Workload::forward_times_only; a workload with its own backward times is left as it is.
// `ratio` must be above 0 and at most kMaxBackwardRatio. Throws InputError naming the file and the
// line of the row at which the iteration's compute passes kMaxIterationComputeMs.
void estimate_backward(Workload& workload, double ratio, Diagnostics& diagnostics);

}  // namespace orrery
