// Calibration of a cluster's network on the user's own collective measurements (nccl-tests
// logs): the efficiency and a latency scale of each dimension the measured groups span are
// fitted, by the model Orrery predicts with (network/collective_model.h), so that predictions
// match the measurements (docs/network.md, "Calibrating from your own measurements").
//
// Each series is one collective on the first `ranks` GPUs of the cluster, as `orrery collective
// --ranks N` runs it. A series belongs to the outermost dimension its group spans; dimensions
// are fitted innermost first, each on its own series with the dimensions inside it as fitted
// before (or as the cluster has them, where no series stays inside them). The parameters of
// dimension d are its efficiency e (in (0, 1]) and a factor k on its latency, its base_latency
// and (fat-trees) its rendezvous_latency alike (their ratios kept; each stays within [0, 1 s]). The
// objective is the sum over all points of log(predicted / measured)^2. First a coarse scan of e (1,
// 0.95, ..., 0.05) and then of k (0 to 8) picks the start, so that a dimension that does not bound
// the times at the cluster's efficiency (a 2-server ring runs at the slower of the NVSwitch ports
// and the NICs) is fitted where it does; a parameter no scanned value of which changes any time is
// not fitted. Then, as the model's time is linear in (1/e, k) for a fixed (algorithm, protocol)
// choice, Gauss-Newton converges in a few steps: price every point at the current parameters and
// with each nudged, solve the 2x2 normal equations for the step, clamp it to the bounds, and halve
// it until the objective falls. Fitted values are rounded to 4 decimals (e and k) before the final
// pricing, so the written cluster reproduces every reported figure, and kept only where they price
// the series better than the cluster's own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/diagnostics.h"
#include "core/time.h"

namespace orrery {

struct MeasuredPoint {
  Bytes bytes = 0;  // > 0, nccl-tests' size convention (as `orrery collective`)
  Time time;        // > 0
};

// One measured collective at several sizes (one nccl-tests log).
struct MeasuredSeries {
  std::string name;      // how reports name it (the log's file name)
  SourceLocation where;  // where an error about it points (the log and the line of its GPUs)
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t ranks = 0;
  std::vector<MeasuredPoint> points;
};

// Mean absolute and mean signed relative error of predictions, in percent (positive bias: the
// model is slower than the measurement).
struct ErrorStats {
  int64_t points = 0;
  double mape_pct = 0;
  double bias_pct = 0;
};

struct RangeStats {
  std::string range;  // "< 1 MiB", "1-64 MiB", "> 64 MiB" or "all"
  ErrorStats before, after;
};

struct SeriesReport {
  std::string name;
  CollectiveKind kind = CollectiveKind::AllReduce;
  int64_t ranks = 0;
  size_t dimension = 0;            // the outermost dimension its group spans
  std::vector<RangeStats> ranges;  // the size ranges holding points, then "all"
};

struct DimensionFit {
  size_t dimension = 0;
  std::string name;
  bool fitted = false;
  std::string note;  // why it was not fitted, or what was not identifiable
  int64_t series = 0, points = 0;
  bool efficiency_fitted = false, latency_fitted = false;
  double efficiency_before = 1, efficiency_after = 1;
  double latency_scale = 1;  // after = before x latency_scale, for both latencies
  Time latency_before, latency_after, base_latency_before, base_latency_after;
  Time rendezvous_latency_before, rendezvous_latency_after;
  int iterations = 0;
};

struct Calibration {
  Cluster cluster;                       // the input cluster with the fitted values
  std::vector<DimensionFit> dimensions;  // every dimension of the network, innermost first
  std::vector<SeriesReport> series;      // in input order
  RangeStats overall;                    // every point of every series ("all")
  std::vector<std::string> notes;        // e.g. which dimensions were left as they were, and why
};

// Throws InputError at a series' `where` when it cannot be priced on the cluster: fewer than 2
// GPUs, more GPUs than the cluster holds, no points.
Calibration calibrate(const Cluster& cluster, const std::vector<MeasuredSeries>& series);

// "< 1 MiB" below 1 MiB, "1-64 MiB" up to 64 MiB, "> 64 MiB" above.
std::string size_range(Bytes bytes);

}  // namespace orrery
