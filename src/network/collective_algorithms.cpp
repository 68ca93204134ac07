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

// One rank's bandwidth across spanned dimension d for a ring (all its channels together): a
// switch port; one link of a mesh; both directions of a ring's links (one when the ring has two
// positions, where routing uses one link each way); the NICs of the least connected server
// (GroupShape::nics), over the oversubscription above the leaves. Each times the fewest members
// a level-d block holds, as every one of them runs a ring through its own links.
Bandwidth ring_capacity(const Topology& t, const GroupShape& g, size_t d) {
  const Dimension& dim = t[d];
  const auto fewest = static_cast<double>(g.fewest_at(d));
  switch (dim.kind) {
    case DimensionKind::FatTree: {
      const double nics = g.nics > 0 ? g.nics
                                     : fewest * static_cast<double>(t.rail_groups(d)) /
                                           static_cast<double>(t.positions_below(d));
      return t.nic_bandwidth(d) * (nics / (g.crosses_leaves ? dim.oversubscription : 1.0));
    }
    case DimensionKind::Ring:
      return dim.effective() * (g.span[d] >= 3 ? 2.0 : 1.0) * fewest;
    case DimensionKind::Switch:
    case DimensionKind::Mesh:
      break;
  }
  return dim.effective() * fewest;
}

Bandwidth ring_bandwidth(const Topology& t, const GroupShape& g) {
  Bandwidth bus = Bandwidth::bytes_per_second(INFINITY);
  for (const size_t d : spanned(g))
    bus = std::min(bus, ring_capacity(t, g, d));
  return bus;
}

// A ring over every rank: the bottleneck dimension's bandwidth, a latency per step of the
// dimension that step's hop crosses.
std::optional<Time> ring(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv) return std::nullopt;
  const Bandwidth bus = ring_bandwidth(t, g);
  const Time pass = ring_pass_latency(t, g);
  if (is_rooted(kind)) {
    // A pipelined chain: the message streams through at the ring's bandwidth after the first
    // chunk has filled the n - 2 links behind the first; one latency per hop.
    const auto chunks = static_cast<double>(pipeline_chunks(static_cast<Bytes>(s)));
    return bus.time_for(s * (1 + static_cast<double>(g.ranks - 2) / chunks)) + pass;
  }
  const int phases = kind == CollectiveKind::AllReduce ? 2 : 1;
  return bus.time_for(bus_factor(kind, g.ranks) * s) + pass * phases;
}

// The bandwidth of one rank for a ring step inside dimension d alone (hierarchical levels).
Bandwidth level_bandwidth(const Topology& t, const GroupShape& g, size_t d) {
  if (t[d].kind == DimensionKind::Ring) return t[d].effective() * (g.span[d] >= 3 ? 2.0 : 1.0);
  return step(t, g, d);
}

// The ring algorithm one dimension at a time; `phases` is 2 for all-reduce (reduce-scatter up,
// all-gather down), 1 otherwise.
std::optional<Time> hierarchical(const Topology& t, CollectiveKind kind, double s,
                                 const GroupShape& g) {
  const auto dims = spanned(g);
  if (!is_reduction_family(kind) || dims.size() < 2 || !g.regular()) return std::nullopt;
  const int phases = kind == CollectiveKind::AllReduce ? 2 : 1;
  Time total;
  double share = s;
  for (const size_t d : dims) {
    const auto k = static_cast<double>(g.span[d]);
    total +=
        (level_bandwidth(t, g, d).time_for((k - 1) / k * share) + t[d].latency * (g.span[d] - 1)) *
        phases;
    share /= k;
  }
  return total;
}

std::optional<Time> tree(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  const int out = g.outermost();
  if (kind != CollectiveKind::AllReduce || out < 1) return std::nullopt;
  Bandwidth bus = Bandwidth::bytes_per_second(INFINITY);
  Time inner_latency;
  for (const size_t d : spanned(g)) {
    Bandwidth b = ring_capacity(t, g, d);
    if (static_cast<int>(d) == out) {
      if (g.span[d] == 2) b = b * 2.0;  // two servers: half the network traffic of a ring
    } else {
      inner_latency += t[d].latency * (g.span[d] - 1);
    }
    bus = std::min(bus, b);
  }
  const Time latency =
      (t[static_cast<size_t>(out)].latency * ceil_log2(g.span[static_cast<size_t>(out)]) +
       inner_latency) *
      2;
  return (bus * kTreeEfficiency).time_for(bus_factor(kind, g.ranks) * s) + latency;
}

// NVLink SHARP: each GPU sends its whole buffer into the switch, which reduces it, and gets its
// share back multicast (S + S/n each way, nccl issue #1083), at nvls_efficiency of the port.
std::optional<Time> nvls(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  const auto dims = spanned(g);
  if (kind != CollectiveKind::AllReduce || dims.size() != 1 || !t[dims[0]].nvls)
    return std::nullopt;
  const Dimension& dim = t[dims[0]];
  const double bytes = s * (1 + 1 / static_cast<double>(g.ranks));
  return (dim.link_bandwidth * dim.nvls_efficiency).time_for(bytes) + nvls_latency(t, g);
}

std::optional<Time> halving_doubling(const Topology& t, CollectiveKind kind, double s,
                                     const GroupShape& g) {
  if (!is_reduction_family(kind) || !is_power_of_two(g.ranks) || !g.regular()) return std::nullopt;
  Time phase;
  double bytes = s;
  for (const size_t d : spanned(g)) {
    if (!is_power_of_two(g.span[d])) return std::nullopt;
    // One partner per step, over one path: one link direction on a ring.
    const Bandwidth b = t[d].kind == DimensionKind::Ring ? t[d].effective() : step(t, g, d);
    for (int64_t k = g.span[d]; k > 1; k /= 2) {
      bytes /= 2;
      phase += b.time_for(bytes) + t[d].latency;
    }
  }
  return kind == CollectiveKind::AllReduce ? phase * 2 : phase;
}

// Direct exchange: every rank sends S/n to every other rank at once, routed dimension by
// dimension innermost first, so a dimension's links carry every pair whose coordinates differ
// in it: per position pair of a dimension of k positions, n/k ranks' worth of pairs.
Time direct_exchange(const Topology& t, double s, const GroupShape& g) {
  const auto n = static_cast<double>(g.ranks);
  const double per_peer = s / n;
  const int out = g.outermost();
  Time slowest;
  for (const size_t d : spanned(g)) {
    const auto k = static_cast<double>(g.span[d]);
    const Dimension& dim = t[d];
    Time time;
    switch (dim.kind) {
      case DimensionKind::Switch:  // a port carries the pairs to the k - 1 other positions
        time = dim.effective().time_for(per_peer * n * (k - 1) / k);
        break;
      case DimensionKind::Mesh:  // one link per position pair
        time = dim.effective().time_for(per_peer * n / k);
        break;
      case DimensionKind::Ring:  // the busiest link direction of shortest paths
        time = dim.effective().time_for(per_peer * n / k * ring_link_load(g.span[d]));
        break;
      case DimensionKind::FatTree: {
        // A server's members send to every member outside it, through the server's NICs.
        const auto members = static_cast<double>(g.fewest_at(d));
        const double leaving = static_cast<int>(d) == out ? n - members : n * (k - 1) / k;
        time = ring_capacity(t, g, d).time_for(per_peer * members * leaving);
        break;
      }
    }
    slowest = std::max(slowest, time);
  }
  return slowest + peer_latency(t, g);
}

std::optional<Time> direct(const Topology& t, CollectiveKind kind, double s, const GroupShape& g) {
  if (is_rooted(kind)) return std::nullopt;
  if (kind == CollectiveKind::SendRecv) {
    // Each rank sends S to the next: the slowest dimension a rank's transfer may cross (one
    // link of a ring, one NIC of a fat-tree).
    Bandwidth slowest = Bandwidth::bytes_per_second(INFINITY);
    Time alpha;
    for (const size_t d : spanned(g)) {
      Bandwidth b = t[d].effective();
      if (t[d].kind == DimensionKind::FatTree)
        b = t.nic_bandwidth(d) * (1 / (g.crosses_leaves ? t[d].oversubscription : 1.0));
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
  return static_cast<int64_t>(std::max<Bytes>(1, (bytes + kPipelineChunk - 1) / kPipelineChunk));
}

std::vector<int64_t> ring_hops(const GroupShape& g) {
  std::vector<int64_t> hops(g.span.size());
  for (size_t d = 0; d < hops.size(); ++d)
    hops[d] = g.blocks_at(d) - g.blocks_at(d + 1);
  return hops;
}

Time ring_pass_latency(const Topology& t, const GroupShape& g) {
  Time total;
  const std::vector<int64_t> hops = ring_hops(g);
  for (size_t d = 0; d < hops.size(); ++d)
    total += t[d].latency * hops[d];
  return total;
}

Time peer_latency(const Topology& t, const GroupShape& g) {
  Time total;
  for (size_t d = 0; d < g.span.size(); ++d)
    total += t[d].latency * (g.fewest_at(d + 1) - g.fewest_at(d));
  return total;
}

Time nvls_latency(const Topology& t, const GroupShape& g) {
  const int d = g.outermost();
  return d < 0 ? Time::zero() : t[static_cast<size_t>(d)].latency * (2 * (g.ranks - 1));
}

double ring_link_load(int64_t k) {
  if (k < 2) return 0;
  if (k % 2 == 1) return static_cast<double>((k * k - 1) / 8);
  const int64_t half = k / 2;
  return static_cast<double>((half - 1) * half / 2 + (half + 1) / 2);
}

std::string unavailable_reason(const Topology& t, Algorithm a, CollectiveKind kind,
                               const GroupShape& g) {
  const std::string op(to_string(kind));
  const std::string n = std::to_string(g.ranks) + " ranks";
  switch (a) {
    case Algorithm::Ring:
      return "ring does not run " + op + " (direct does)";
    case Algorithm::Hierarchical:
      if (!is_reduction_family(kind))
        return "hierarchical runs all-reduce, all-gather and "
               "reduce-scatter only";
      return "hierarchical needs a group spread evenly over two or more dimensions (" + n + ")";
    case Algorithm::Tree:
      if (kind != CollectiveKind::AllReduce) return "tree runs all-reduce only";
      return "tree needs a group spanning more than one server (" + n + ")";
    case Algorithm::Nvls:
      if (kind != CollectiveKind::AllReduce) return "nvls runs all-reduce only";
      if (std::none_of(t.dimensions().begin(), t.dimensions().end(),
                       [](const Dimension& d) { return d.nvls; }))
        return "nvls needs a switch dimension with nvls: true";
      return "nvls runs inside one NVLS switch domain only (" + n + ")";
    case Algorithm::HalvingDoubling:
      if (!is_reduction_family(kind))
        return "halving-doubling runs all-reduce, all-gather and reduce-scatter only";
      return "halving-doubling needs a power-of-two group spread evenly, a power of two per "
             "dimension (" +
             n + "; recursive doubling for other sizes is not modelled)";
    case Algorithm::Direct:
      return "direct does not run " + op;
    case Algorithm::Auto:
      break;
  }
  return "";
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
