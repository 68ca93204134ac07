// What a GEMM and a collective run together by Transformer Engine's communication-GEMM overlap
// cost (workload/gemm_overlap.h says the methods). Times in picoseconds.
//
// The communication kernels hold `sms` SMs while they run, so the GEMM of duration G is slowed as
// beside any collective (sm_contention.h): G' = G + contention_delay(G, C, share), share from the
// SMs held and the device's contention_overhead, which is left out where TE launches the GEMM for
// the SMs left (set_sm_margin). With C the collective's cost as the network model prices it:
//   bulk (independent, started together):   max(G', C)
//   pipelined in k chunks:                  max(G', C) + min(G', C) / k
//     (k steps of max(G'/k, C/k) plus the first chunk's GEMM and the last chunk's collective,
//     which have nothing beside them)
//   ring exchange over t ranks:             max(G' (t - 1) / t, C) + G' / t
//     (t - 1 steps of max(G'/t, C/(t - 1)), each multiplying one shard while the next arrives,
//     then the last shard's GEMM alone)
//
// Scope and limitations: chunks are equal and each step's collective is priced as that share of
// the whole (its latency terms too); the GEMM split into chunks runs as fast as the whole one (an
// optimistic bound: NeMo's overlapped GEMMs as chunks measured 3 % slower than the whole GEMM's
// price on an H100, 8 % on an H200, docs/references/h100-kernels.md); the collective's own
// slowdown by the GEMM's memory traffic is not modelled.
#pragma once

#include <cstdint>

#include "core/time.h"
#include "workload/gemm_overlap.h"

namespace orrery {

struct GemmOverlapTime {
  Time gemm;   // G': the GEMM slowed by the SMs the collective holds
  Time total;  // the pair; total - gemm is the communication the GEMM does not hide
};

// The GEMM `overlap.gemm` and the collective of cost `comm` run together, on a device of
// `compute_units` SMs (0: unknown, no slowdown) with its `contention_overhead`.
GemmOverlapTime gemm_overlap_time(const GemmOverlap& overlap, Time comm, int64_t compute_units,
                                  double contention_overhead);

}  // namespace orrery
