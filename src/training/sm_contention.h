// SM contention: what a collective running beside compute costs that compute (docs/event-mode.md).
//
// NCCL runs a collective as one thread block per channel, each holding an SM (compute unit) for
// the collective's whole duration, so the kernels beside it run on the U - c units left of the U
// the device has, and kernels sized for all U units (cuBLAS's persistent GEMMs on Hopper) lose a
// further share f (the device's `contention_overhead`) once any unit is taken. While the two
// overlap the compute runs
//   (1 + f) U / (U - c)
// times slower: it progresses at 1 - share, share = 1 - (U - c) / ((1 + f) U) = (c / U + f) /
// (1 + f) (0 when the channels or the units are unknown; c at most U; f = 0 gives c / U). Compute
// of duration w beside a collective that runs for o from the same start ends later by
//   min(o * share, w * share / (1 - share))
// the first while the collective ends before the slowed compute, the second when it outlasts it
// (the compute then takes w / (1 - share); all of o when share is 1).
//
// Scope and limitations: the units are interchangeable and the collective's memory traffic costs
// the compute nothing. f was fitted (least squares in log slowdown) on BF16 GEMMs measured on
// H200s beside a kernel holding 1 to 66 of the 132 SMs (tests/data/h200_sm_contention.csv and
// h200_sm_contention_few.csv, docs/references/h200-kernels.md): f = 0.155, mean error 0 in log
// (+0.5 % linear), mean absolute 7.8 %, where f = 0 was 13 % short on average. Measured slowdowns
// rise in steps with the units held (cuBLAS's cluster launch); one constant follows their mean, not
// their steps. Streaming memory from the held SMs added 2 % on average and is not modelled.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/time.h"

namespace orrery {

inline double sm_contention_share(int64_t channels, int64_t compute_units,
                                  double contention_overhead = 0) {
  if (channels <= 0 || compute_units <= 0) return 0;
  const double held =
      std::min(1.0, static_cast<double>(channels) / static_cast<double>(compute_units));
  return (held + contention_overhead) / (1 + contention_overhead);
}

// How much later compute of duration `work` ends beside a collective running for `beside` from
// the same start that takes `share` of its progress (above).
inline Time contention_delay(Time work, Time beside, double share) {
  if (share <= 0 || work <= Time::zero()) return Time::zero();
  if (share >= 1) return beside;
  return std::min(beside.scaled(share), work.scaled(share / (1 - share)));
}

}  // namespace orrery
