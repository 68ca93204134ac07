// SM contention: what a collective running beside compute costs that compute (docs/event-mode.md).
//
// NCCL runs a collective as one thread block per channel, each holding an SM (compute unit) for
// the collective's whole duration, so the kernels beside it run on the U - c units left of the U
// the device has. Over an overlap of duration o they make o (U - c) / U of progress: the compute
// ends later by
//   o * share,   share = c / U          (0 when the channels or the units are unknown; at most 1)
// that is, it runs U / (U - c) times slower while the two overlap.
//
// Scope and limitations: the units are interchangeable and the collective's memory traffic costs
// the compute nothing. Measured on H200s (tests/data/h200_sm_contention.csv and
// h200_sm_contention_few.csv, docs/references/h200-kernels.md), BF16 GEMMs beside a kernel
// holding 1 to 66 of the 132 SMs ran 1.06 to 2.2 times slower; U / (U - c) falls short of that by
// 13 % on average, and by 13-14 % at 8 to 32 SMs, NCCL's usual channel counts. cuBLAS runs these
// GEMMs as persistent kernels sized for every SM (66 two-SM clusters), so one held SM already
// costs 7-32 %; re-pricing the GEMMs on U - c units (wave quantization) closes little of the gap,
// and streaming memory from the held SMs added 2 % on average. This model is optimistic by that
// much for compute beside collectives.
#pragma once

#include <algorithm>
#include <cstdint>

namespace orrery {

inline double sm_contention_share(int64_t channels, int64_t compute_units) {
  if (channels <= 0 || compute_units <= 0) return 0;
  return std::min(1.0, static_cast<double>(channels) / static_cast<double>(compute_units));
}

}  // namespace orrery
