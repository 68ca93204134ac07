#include "network/collective_algorithms.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace orrery {
namespace {

// The spanned dimensions of a group, innermost first.
std::vector<size_t> spanned(const GroupShape& shape) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.span.size(); ++d)
    if (shape.span[d] > 1) dims.push_back(d);
  return dims;
}

Bandwidth step(const Topology& t, const GroupShape& shape, size_t d) {
  return t.step_bandwidth(d, shape.crosses_leaves);
}

int64_t ceil_log2(int64_t n) {
  return n <= 1 ? 0 : std::bit_width(static_cast<uint64_t>(n - 1));
}

bool is_power_of_two(int64_t n) {
  return n > 0 && std::has_single_bit(static_cast<uint64_t>(n));
}

bool is_reduction_family(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce || kind == CollectiveKind::AllGather ||
         kind == CollectiveKind::ReduceScatter;
}

// A ring over every rank: bandwidth of the bottleneck tier (with the parallel rings of the ranks
// below it), the slowest step latency.
std::optional<Time> ring(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv) return std::nullopt;
  const auto dims = spanned(g);
  double below = 1;
  Bandwidth bus = Bandwidth::bytes_per_second(INFINITY);
  Time alpha;
  for (const size_t d : dims) {
    bus = std::min(bus, step(t, g, d) * below);
    alpha = std::max(alpha, t[d].latency);
    below *= static_cast<double>(g.span[d]);
  }
  if (is_rooted(kind)) {
    // A pipelined chain: C chunks, C + n - 2 steps of one chunk each.
    const int64_t chunks = pipeline_chunks(static_cast<Bytes>(s));
    return (bus.time_for(s / static_cast<double>(chunks)) + alpha) * (chunks + g.ranks - 2);
  }
  const int64_t steps = kind == CollectiveKind::AllReduce ? 2 * (g.ranks - 1) : g.ranks - 1;
  return bus.time_for(bus_factor(kind, g.ranks) * s) + alpha * steps;
}

// The ring algorithm one dimension at a time; `phases` is 2 for all-reduce (reduce-scatter up,
// all-gather down), 1 otherwise.
std::optional<Time> hierarchical(const Topology& t, CollectiveKind kind, double s,
                                 const GroupShape& g) {
  const auto dims = spanned(g);
  if (!is_reduction_family(kind) || dims.size() < 2) return std::nullopt;
  const int phases = kind == CollectiveKind::AllReduce ? 2 : 1;
  Time total;
  double share = s;
  for (const size_t d : dims) {
    const auto k = static_cast<double>(g.span[d]);
    total +=
        (step(t, g, d).time_for((k - 1) / k * share) + t[d].latency * (g.span[d] - 1)) * phases;
    share /= k;
  }
  return total;
}

std::optional<Time> tree(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  const int out = g.outermost();
  if (kind != CollectiveKind::AllReduce || out < 1) return std::nullopt;
  const auto dims = spanned(g);
  double below = 1;
  Bandwidth bus = Bandwidth::bytes_per_second(INFINITY);
  Time inner_latency;
  for (const size_t d : dims) {
    Bandwidth b = step(t, g, d) * below;
    if (static_cast<int>(d) == out) {
      if (g.span[d] == 2) b = b * 2.0;  // two servers: half the network traffic of a ring
    } else {
      inner_latency += t[d].latency * (g.span[d] - 1);
    }
    bus = std::min(bus, b);
    below *= static_cast<double>(g.span[d]);
  }
  const Time latency =
      (t[static_cast<size_t>(out)].latency * ceil_log2(g.span[static_cast<size_t>(out)]) +
       inner_latency) *
      2;
  return (bus * kTreeEfficiency).time_for(bus_factor(kind, g.ranks) * s) + latency;
}

std::optional<Time> nvls(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  const auto dims = spanned(g);
  if (kind != CollectiveKind::AllReduce || dims.size() != 1 || !t[dims[0]].nvls)
    return std::nullopt;
  const Dimension& dim = t[dims[0]];
  return (dim.link_bandwidth * dim.nvls_efficiency).time_for(s) + dim.latency * 2;
}

std::optional<Time> halving_doubling(const Topology& t, CollectiveKind kind, double s,
                                     const GroupShape& g) {
  if (!is_reduction_family(kind) || !is_power_of_two(g.ranks)) return std::nullopt;
  Time phase;
  double bytes = s;
  for (const size_t d : spanned(g)) {
    if (!is_power_of_two(g.span[d])) return std::nullopt;
    for (int64_t k = g.span[d]; k > 1; k /= 2) {
      bytes /= 2;
      phase += step(t, g, d).time_for(bytes) + t[d].latency;
    }
  }
  return kind == CollectiveKind::AllReduce ? phase * 2 : phase;
}

// Direct exchange: every rank sends S/n to every other rank at once.
Time direct_exchange(const Topology& t, double s, const GroupShape& g) {
  const double per_peer = s / static_cast<double>(g.ranks);
  Time slowest, alpha;
  double below = 1;
  for (const size_t d : spanned(g)) {
    const auto k = static_cast<double>(g.span[d]);
    const Dimension& dim = t[d];
    Time time;
    if (dim.kind == DimensionKind::Ring) {
      // Each GPU's ring carries its traffic to the k-1 other positions (below peers each) along
      // shortest paths: the busiest link direction carries k^2/8 of one pair's bytes.
      time = dim.effective().time_for(per_peer * below * k * k / 8);
    } else if (dim.kind == DimensionKind::Mesh) {
      time = (dim.effective() * (k - 1)).time_for(per_peer * below * (k - 1));
    } else {
      time = step(t, g, d).time_for(per_peer * (below * k - below));
    }
    slowest = std::max(slowest, time);
    alpha = std::max(alpha, dim.latency);
    below *= k;
  }
  return slowest + alpha;
}

std::optional<Time> direct(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  if (is_rooted(kind)) return std::nullopt;
  if (kind == CollectiveKind::SendRecv) {
    // Each rank sends S to the next: the slowest dimension a rank's transfer may cross.
    Bandwidth slowest = Bandwidth::bytes_per_second(INFINITY);
    Time alpha;
    for (const size_t d : spanned(g)) {
      const Bandwidth b = t[d].kind == DimensionKind::Ring ? t[d].effective() : step(t, g, d);
      slowest = std::min(slowest, b);
      alpha = std::max(alpha, t[d].latency);
    }
    return slowest.time_for(s) + alpha;
  }
  const Time exchange = direct_exchange(t, s, g);
  return kind == CollectiveKind::AllReduce ? exchange * 2 : exchange;
}

}  // namespace

std::string_view to_string(Algorithm algorithm) {
  switch (algorithm) {
    case Algorithm::Auto:
      return "auto";
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Hierarchical:
      return "hierarchical";
    case Algorithm::Tree:
      return "tree";
    case Algorithm::Nvls:
      return "nvls";
    case Algorithm::HalvingDoubling:
      return "halving-doubling";
    case Algorithm::Direct:
      return "direct";
  }
  return "?";
}

std::vector<Algorithm> all_algorithms() {
  return {Algorithm::Ring, Algorithm::Hierarchical,    Algorithm::Tree,
          Algorithm::Nvls, Algorithm::HalvingDoubling, Algorithm::Direct};
}

std::optional<Algorithm> parse_algorithm(std::string_view name) {
  if (name == "auto") return Algorithm::Auto;
  for (const Algorithm a : all_algorithms())
    if (to_string(a) == name) return a;
  return std::nullopt;
}

double bus_factor(CollectiveKind kind, int64_t ranks) {
  const auto n = static_cast<double>(ranks);
  switch (kind) {
    case CollectiveKind::AllReduce:
      return 2 * (n - 1) / n;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll:
      return (n - 1) / n;
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
    case CollectiveKind::SendRecv:
      return 1;
  }
  return 1;
}

bool is_rooted(CollectiveKind kind) {
  return kind == CollectiveKind::Broadcast || kind == CollectiveKind::Reduce;
}

int64_t pipeline_chunks(Bytes bytes) {
  const Bytes chunks = (bytes + kPipelineChunk - 1) / kPipelineChunk;
  return static_cast<int64_t>(std::clamp<Bytes>(chunks, 1, kMaxPipelineChunks));
}

std::optional<Time> algorithm_time(const Topology& t, Algorithm algorithm, CollectiveKind kind,
                                   Bytes bytes, const GroupShape& g) {
  if (g.ranks <= 1) return Time::zero();
  const auto s = static_cast<double>(bytes);
  switch (algorithm) {
    case Algorithm::Ring:
      return ring(t, kind, s, g);
    case Algorithm::Hierarchical:
      return hierarchical(t, kind, s, g);
    case Algorithm::Tree:
      return tree(t, kind, s, g);
    case Algorithm::Nvls:
      return nvls(t, kind, s, g);
    case Algorithm::HalvingDoubling:
      return halving_doubling(t, kind, s, g);
    case Algorithm::Direct:
      return direct(t, kind, s, g);
    case Algorithm::Auto:
      break;
  }
  return std::nullopt;
}

std::vector<Algorithm> auto_candidates(const Topology& t, CollectiveKind kind) {
  if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv)
    return {Algorithm::Direct};
  if (is_rooted(kind)) return {Algorithm::Ring};
  std::vector<Algorithm> candidates = {Algorithm::Ring, Algorithm::Tree, Algorithm::Nvls};
  const bool direct_network =
      std::any_of(t.dimensions().begin(), t.dimensions().end(), [](const Dimension& d) {
        return d.kind == DimensionKind::Ring || d.kind == DimensionKind::Mesh;
      });
  if (direct_network) {
    candidates.push_back(Algorithm::Hierarchical);
    candidates.push_back(Algorithm::Direct);
  }
  return candidates;
}

CollectiveCost collective_cost(const Topology& t, CollectiveKind kind, Bytes bytes,
                               const GroupShape& g, Algorithm algorithm) {
  if (algorithm != Algorithm::Auto)
    if (const auto time = algorithm_time(t, algorithm, kind, bytes, g)) return {*time, algorithm};
  CollectiveCost best{Time::max(), Algorithm::Ring};
  for (const Algorithm a : auto_candidates(t, kind))
    if (const auto time = algorithm_time(t, a, kind, bytes, g); time && *time < best.time)
      best = {*time, a};
  return best;
}

Time point_to_point_time(const Topology& t, Bytes bytes, const GroupShape& pair) {
  const int d = pair.outermost();
  if (d < 0) return Time::zero();
  const Dimension& dim = t[static_cast<size_t>(d)];
  // One direction of one link: a ring's step bandwidth counts both.
  Bandwidth b = t.step_bandwidth(static_cast<size_t>(d), pair.crosses_leaves);
  if (dim.kind == DimensionKind::Ring) b = dim.effective();
  return b.time_for(static_cast<double>(bytes)) + dim.latency;
}

}  // namespace orrery
