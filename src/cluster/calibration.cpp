#include "cluster/calibration.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"

namespace orrery {
namespace {

constexpr double kNudge = 1e-3;          // relative step of the numeric derivatives
constexpr int kMaxIterations = 60;       // Gauss-Newton steps per dimension
constexpr int kMaxHalvings = 30;         // of one step, until the objective falls
constexpr double kMinEfficiency = 1e-3;  // the fit's floor (the schema allows any e > 0)
constexpr double kDecimals = 1e4;        // fitted values are rounded to 4 decimals
constexpr double kConverged = 1e-12;     // relative fall of the objective that ends the fit

const std::vector<size_t> kAxis = {0};

// A parameter point of one dimension: its efficiency and the factor on its latencies.
struct Params {
  double efficiency = 1;
  double scale = 1;
};

Topology with_params(const Topology& base, size_t d, const Dimension& original, Params p) {
  std::vector<Dimension> dims = base.dimensions();
  dims[d].efficiency = p.efficiency;
  dims[d].latency = original.latency.scaled(p.scale);
  dims[d].base_latency = original.base_latency.scaled(p.scale);
  dims[d].rendezvous_latency = original.rendezvous_latency.scaled(p.scale);
  Topology t(std::move(dims));
  t.set_gpu_memory(base.gpu_memory());
  t.set_reduction_memory(base.reduction_memory());
  t.set_ideal_links(base.ideal_links());
  return t;
}

// Predicted seconds of every point of `series`, in order, as `orrery collective` prices them.
std::vector<double> predict(const Topology& t, const std::vector<const MeasuredSeries*>& series) {
  std::vector<double> out;
  for (const MeasuredSeries* s : series) {
    const RankPlacement placement({{"ranks", s->ranks}}, t);
    const LinkGraph links(t, s->ranks);
    const CollectiveModel model(links, {placement.group_members(kAxis, 0)});
    for (const MeasuredPoint& p : s->points)
      out.push_back(model.cost(s->kind, p.bytes).time.seconds());
  }
  return out;
}

std::vector<double> measured_seconds(const std::vector<const MeasuredSeries*>& series) {
  std::vector<double> out;
  for (const MeasuredSeries* s : series)
    for (const MeasuredPoint& p : s->points)
      out.push_back(p.time.seconds());
  return out;
}

double log_ratio(double predicted, double measured) {
  return std::log(std::max(predicted, 1e-18) / measured);
}

double objective(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double sum = 0;
  for (size_t i = 0; i < predicted.size(); ++i)
    sum += std::pow(log_ratio(predicted[i], measured[i]), 2);
  return sum;
}

// Fits dimension d of `current` on `series` (whose outermost spanned dimension it is) and fills
// `fit`; returns the rounded parameters, or the cluster's own where they price no worse.
Params fit_dimension(const Topology& current, size_t d,
                     const std::vector<const MeasuredSeries*>& series, DimensionFit& fit) {
  const Dimension& original = current[d];
  const std::vector<double> measured = measured_seconds(series);
  // The fit works in x = (u, k), u = 1 / efficiency: the time is close to linear in both.
  struct X {
    double u = 1, k = 1;
  };
  const auto price = [&](X x) {
    return predict(with_params(current, d, original, {1 / x.u, x.k}), series);
  };
  const Time longest =
      std::max({original.latency, original.base_latency, original.rendezvous_latency});
  const double max_scale = longest > Time::zero() ? 1.0 / longest.seconds() : 1.0;
  const double max_inverse = 1 / kMinEfficiency;
  const auto clamp = [&](X p) {
    p.u = std::clamp(p.u, 1.0, max_inverse);
    p.k = std::clamp(p.k, 0.0, max_scale);
    return p;
  };

  const Params start{original.efficiency, 1};
  X x{1 / original.efficiency, 1};
  bool free_u = true, free_k = longest > Time::zero();
  if (!free_k) fit.note = "no latency to scale (both latencies are 0)";

  // Coarse scans first, of the efficiency and then of the latency scale, so that the fit starts
  // where each parameter matters: a dimension that does not bound the times at the cluster's
  // efficiency may at a lower one (a 2-server ring runs at the slower of the NVSwitch ports and
  // the NICs).
  // Ties go to the value nearest the cluster's; a parameter no value of which changes any time
  // is not fitted.
  const auto scan = [&](const std::vector<X>& grid, bool& free) {
    std::vector<double> first;
    double best_s = 0, best_distance = 0;
    bool varies = false;
    X best = x;
    for (const X& g : grid) {
      const std::vector<double> t = price(g);
      const double s = objective(t, measured);
      const double distance = std::fabs(g.u - 1 / original.efficiency) + std::fabs(g.k - 1);
      if (first.empty()) first = t;
      for (size_t i = 0; i < t.size() && !varies; ++i)
        varies = std::fabs(std::log(t[i] / first[i])) > 1e-9;
      if (&g == &grid.front() || s < best_s * (1 - 1e-12) ||
          (s <= best_s * (1 + 1e-12) && distance < best_distance)) {
        best = g;
        best_s = s;
        best_distance = distance;
      }
    }
    if (varies) x = best;
    free = varies;
  };
  std::vector<X> grid = {x};
  for (int percent = 100; percent >= 5; percent -= 5)
    grid.push_back({100.0 / percent, x.k});
  scan(grid, free_u);
  if (!free_u) fit.note = "efficiency kept: these logs' times do not depend on it";
  if (free_k) {
    grid = {x};
    for (const double k : {0.0, 0.25, 0.5, 0.75, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0})
      if (k <= max_scale) grid.push_back({x.u, k});
    scan(grid, free_k);
    if (!free_k) fit.note = "latency kept: these logs' times do not depend on it";
  }

  // Gauss-Newton from there.
  std::vector<double> t0 = price(x);
  double s0 = objective(t0, measured);
  for (int it = 0; it < kMaxIterations && s0 > 0 && (free_u || free_k); ++it) {
    fit.iterations = it + 1;
    // Jacobian of the log residuals, by forward differences (backward at the upper bounds).
    const double du = kNudge * x.u;
    const double hk = kNudge * std::max(x.k, 0.01);
    const double dk = x.k + hk <= max_scale ? hk : -hk;
    const std::vector<double> tu = free_u ? price({x.u + du, x.k}) : t0;
    const std::vector<double> tk = free_k ? price({x.u, x.k + dk}) : t0;
    double nuu = 0, nuk = 0, nkk = 0, gu = 0, gk = 0;
    for (size_t i = 0; i < measured.size(); ++i) {
      const double r = log_ratio(t0[i], measured[i]);
      const double ju = free_u ? (std::log(tu[i]) - std::log(t0[i])) / du : 0.0;
      const double jk = free_k ? (std::log(tk[i]) - std::log(t0[i])) / dk : 0.0;
      nuu += ju * ju;
      nuk += ju * jk;
      nkk += jk * jk;
      gu += ju * r;
      gk += jk * r;
    }
    // The Gauss-Newton step, clamped to the bounds: a parameter held at a bound, the other
    // re-solved alone.
    double step_u = 0, step_k = 0;
    const double det = nuu * nkk - nuk * nuk;
    if (free_u && free_k && det > 1e-12 * nuu * nkk) {
      step_u = -(nkk * gu - nuk * gk) / det;
      step_k = -(nuu * gk - nuk * gu) / det;
    } else if (nuu * x.u * x.u >= nkk * std::max(x.k, 0.01) * std::max(x.k, 0.01)) {
      step_u = nuu > 0 ? -gu / nuu : 0.0;
    } else {
      step_k = nkk > 0 ? -gk / nkk : 0.0;
    }
    const X wanted{x.u + step_u, x.k + step_k};
    if (free_u && free_k && clamp(wanted).u != wanted.u) {
      step_u = clamp(wanted).u - x.u;
      step_k = nkk > 0 ? -(gk + nuk * step_u) / nkk : 0.0;
    } else if (free_u && free_k && clamp(wanted).k != wanted.k) {
      step_k = clamp(wanted).k - x.k;
      step_u = nuu > 0 ? -(gu + nuk * step_k) / nuu : 0.0;
    }
    bool improved = false;
    double alpha = 1;
    for (int h = 0; h < kMaxHalvings && !improved; ++h, alpha /= 2) {
      const X next = clamp({x.u + alpha * step_u, x.k + alpha * step_k});
      if (next.u == x.u && next.k == x.k) break;
      std::vector<double> t = price(next);
      const double s = objective(t, measured);
      if (s < s0) {
        improved = true;
        const double fall = (s0 - s) / s0;
        x = next;
        t0 = std::move(t);
        s0 = s;
        if (fall < kConverged) it = kMaxIterations;
      }
    }
    if (!improved) break;
  }

  Params rounded;
  rounded.efficiency = std::clamp(std::round(kDecimals / x.u) / kDecimals, kMinEfficiency, 1.0);
  rounded.scale = std::min(std::round(x.k * kDecimals) / kDecimals,
                           std::floor(max_scale * kDecimals) / kDecimals);
  if (!free_u) rounded.efficiency = start.efficiency;
  if (!free_k) rounded.scale = start.scale;
  // Keep the cluster's values where the fitted ones price the logs no better.
  const auto price_params = [&](Params p) {
    return predict(with_params(current, d, original, p), series);
  };
  if (objective(price_params(rounded), measured) >= objective(price_params(start), measured)) {
    fit.note = "kept as in the cluster: the fit does not improve on its values";
    return start;
  }
  fit.efficiency_fitted = free_u;
  fit.latency_fitted = free_k;
  return rounded;
}

ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured,
                       const std::vector<size_t>& points) {
  ErrorStats e;
  for (const size_t i : points) {
    const double error = predicted[i] / measured[i] - 1;
    e.mape_pct += std::fabs(error);
    e.bias_pct += error;
    ++e.points;
  }
  if (e.points > 0) {
    e.mape_pct *= 100.0 / static_cast<double>(e.points);
    e.bias_pct *= 100.0 / static_cast<double>(e.points);
  }
  return e;
}

}  // namespace

std::string size_range(Bytes bytes) {
  if (bytes < kMiB) return "< 1 MiB";
  return bytes <= 64 * kMiB ? "1-64 MiB" : "> 64 MiB";
}

Calibration calibrate(const Cluster& cluster, const std::vector<MeasuredSeries>& series) {
  const Topology& network = cluster.network;
  std::vector<size_t> outermost;
  for (const MeasuredSeries& s : series) {
    if (s.ranks < 2)
      throw InputError(s.where, "expected a collective of at least 2 GPUs, found " +
                                    std::to_string(s.ranks) + " (one GPU moves no data)");
    if (const auto capacity = network.capacity(); capacity && s.ranks > *capacity)
      throw InputError(s.where, "a collective of " + std::to_string(s.ranks) +
                                    " GPUs does not fit cluster '" + cluster.name + "' (" +
                                    std::to_string(*capacity) + " GPUs)");
    if (s.points.empty())
      throw InputError(s.where, "expected measurements of a positive size and time; found none");
    try {
      const RankPlacement placement({{"ranks", s.ranks}}, network);
      outermost.push_back(
          static_cast<size_t>(std::max(0, placement.group_shape(kAxis).outermost())));
    } catch (const std::invalid_argument& e) {
      throw InputError(s.where, std::string("a collective of ") + std::to_string(s.ranks) +
                                    " GPUs on cluster '" + cluster.name + "': " + e.what());
    }
  }

  Calibration c;
  Topology current = network;
  const size_t spanned =
      series.empty() ? 0 : *std::max_element(outermost.begin(), outermost.end()) + 1;
  for (size_t d = 0; d < network.size(); ++d) {
    DimensionFit fit;
    fit.dimension = d;
    fit.name = network[d].name;
    std::vector<const MeasuredSeries*> own;
    for (size_t i = 0; i < series.size(); ++i)
      if (outermost[i] == d) {
        own.push_back(&series[i]);
        fit.points += static_cast<int64_t>(series[i].points.size());
      }
    fit.series = static_cast<int64_t>(own.size());
    const Dimension& original = network[d];
    if (!own.empty()) {
      const Params p = fit_dimension(current, d, own, fit);
      current = with_params(current, d, current[d], p);
      fit.fitted = fit.efficiency_fitted || fit.latency_fitted;
      fit.latency_scale = p.scale;
    } else if (d < spanned) {
      fit.note = "kept as in the cluster: no log stays within one " + original.name +
                 " position, so the dimensions outside it were fitted with it as it was";
      c.notes.push_back(original.name + ": " + fit.note);
    } else {
      fit.note = "kept as in the cluster: no log spans it";
      c.notes.push_back(original.name + ": " + fit.note);
    }
    fit.efficiency_before = original.efficiency;
    fit.efficiency_after = current[d].efficiency;
    fit.latency_before = original.latency;
    fit.latency_after = current[d].latency;
    fit.base_latency_before = original.base_latency;
    fit.base_latency_after = current[d].base_latency;
    fit.rendezvous_latency_before = original.rendezvous_latency;
    fit.rendezvous_latency_after = current[d].rendezvous_latency;
    c.dimensions.push_back(std::move(fit));
  }
  c.cluster = cluster;
  c.cluster.network = current;

  std::vector<const MeasuredSeries*> all;
  for (const MeasuredSeries& s : series)
    all.push_back(&s);
  const std::vector<double> measured = measured_seconds(all);
  const std::vector<double> before = predict(network, all);
  const std::vector<double> after = predict(current, all);
  const auto range_stats = [&](const std::string& range, const std::vector<size_t>& points) {
    return RangeStats{range, error_stats(before, measured, points),
                      error_stats(after, measured, points)};
  };
  std::vector<size_t> every;
  size_t first = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const MeasuredSeries& s = series[i];
    SeriesReport report{s.name, s.kind, s.ranks, outermost[i], {}};
    std::vector<size_t> points;
    for (const std::string range : {"< 1 MiB", "1-64 MiB", "> 64 MiB"}) {
      std::vector<size_t> in_range;
      for (size_t j = 0; j < s.points.size(); ++j)
        if (size_range(s.points[j].bytes) == range) in_range.push_back(first + j);
      if (!in_range.empty()) report.ranges.push_back(range_stats(range, in_range));
      points.insert(points.end(), in_range.begin(), in_range.end());
    }
    std::sort(points.begin(), points.end());
    report.ranges.push_back(range_stats("all", points));
    every.insert(every.end(), points.begin(), points.end());
    first += s.points.size();
    c.series.push_back(std::move(report));
  }
  c.overall = range_stats("all", every);
  return c;
}

}  // namespace orrery
