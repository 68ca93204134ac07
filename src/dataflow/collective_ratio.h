// DFModel's collective "ratios": nanoseconds per byte of a collective among n chips along one
// topology dimension of the given link kind and per-link bandwidth beta (GB/s = bytes per ns).
//
//   collective            ring (R)        switch (SW)     full mesh (FC)
//   all-reduce            (n-1)/(n beta)  (n-1)/(n beta)  1/(n beta)
//   all-gather            (n-1)/(n beta)  (n-1)/(n beta)  1/(n beta)
//   all-to-all            n^2/(8 beta)    n/(4 beta)      1/beta
//   point-to-point        1/beta          1/beta          1/beta
//
// The all-reduce ratio counts one pass; DFModel's seed era charges an all-reduce twice this
// (reduce-scatter + all-gather), see ModelOptions::allreduce_factor. A group of one chip costs 0.
#pragma once

#include <cstdint>

#include "workload/dataflow_problem.h"

namespace orrery {

enum class RatioKind : uint8_t { AllReduce, AllGather, AllToAll, PointToPoint };

constexpr double collective_ratio(RatioKind kind, LinkKind link, int64_t n, double beta_gbps) {
  if (n <= 1 || beta_gbps <= 0) return 0.0;
  const double nn = static_cast<double>(n);
  switch (kind) {
    case RatioKind::AllReduce:
    case RatioKind::AllGather:
      return link == LinkKind::FullMesh ? 1.0 / (nn * beta_gbps) : (nn - 1) / (nn * beta_gbps);
    case RatioKind::AllToAll:
      switch (link) {
        case LinkKind::Ring:
          return nn * nn / (8 * beta_gbps);
        case LinkKind::Switch:
          return nn / (4 * beta_gbps);
        case LinkKind::FullMesh:
          return 1.0 / beta_gbps;
      }
      return 0.0;
    case RatioKind::PointToPoint:
      return 1.0 / beta_gbps;
  }
  return 0.0;
}

}  // namespace orrery
