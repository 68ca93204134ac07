#include "training/gemm_overlap_time.h"

#include <algorithm>

#include "training/sm_contention.h"

namespace orrery {

namespace {

// The pair's time from the slowed GEMM `gemm` (the formulas in the header).
Time pair_time(const GemmOverlap& overlap, Time gemm, Time comm) {
  const auto parts = static_cast<double>(std::max<int64_t>(1, overlap.chunks));
  switch (overlap.method) {
    case GemmOverlapMethod::Bulk:
      return std::max(gemm, comm);
    case GemmOverlapMethod::Pipelined:
      return std::max(gemm, comm) + std::min(gemm, comm).scaled(1 / parts);
    case GemmOverlapMethod::RingExchange:
      return std::max(gemm.scaled((parts - 1) / parts), comm) + gemm.scaled(1 / parts);
  }
  return gemm + comm;
}

}  // namespace

GemmOverlapTime gemm_overlap_time(const GemmOverlap& overlap, Time comm, int64_t compute_units,
                                  double contention_overhead) {
  const double share = sm_contention_share(overlap.sms, compute_units,
                                           overlap.sm_margin ? 0.0 : contention_overhead);
  const Time gemm = overlap.gemm + contention_delay(overlap.gemm, comm, share);
  return {gemm, pair_time(overlap, gemm, comm)};
}

}  // namespace orrery
