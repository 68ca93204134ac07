#include "network/collective_algorithms.h"

#include <algorithm>
#include <bit>

namespace orrery {
namespace {

// The number of dimensions a group spans, and the innermost of them (-1 for a single rank):
// pricing asks these for every size, so they allocate nothing.
int spanned_count(const GroupShape& shape) {
  return static_cast<int>(
      std::count_if(shape.span.begin(), shape.span.end(), [](int64_t s) { return s > 1; }));
}

int innermost(const GroupShape& shape) {
  for (size_t d = 0; d < shape.span.size(); ++d)
    if (shape.span[d] > 1) return static_cast<int>(d);
  return -1;
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
    case Algorithm::NvlsTree:
      return "nvls-tree";
    case Algorithm::HalvingDoubling:
      return "halving-doubling";
    case Algorithm::Direct:
      return "direct";
  }
  return "?";
}

std::vector<Algorithm> all_algorithms() {
  return {Algorithm::Ring,     Algorithm::Hierarchical,    Algorithm::Tree,  Algorithm::Nvls,
          Algorithm::NvlsTree, Algorithm::HalvingDoubling, Algorithm::Direct};
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
  const int d = g.outermost();
  return d < 0 ? Time::zero() : t[static_cast<size_t>(d)].latency;
}

Time tree_latency(const Topology& t, const GroupShape& g) {
  const int out = g.outermost();
  if (out < 0) return Time::zero();
  Time inner;
  for (size_t d = 0; d < static_cast<size_t>(out); ++d)
    if (g.span[d] > 1) inner += t[d].latency * (g.span[d] - 1);
  return (t[static_cast<size_t>(out)].latency * ceil_log2(g.span[static_cast<size_t>(out)]) +
          inner) *
         2;
}

Time tree_outer_latency(const Topology& t, const GroupShape& g) {
  const int out = g.outermost();
  if (out < 0) return Time::zero();
  const auto d = static_cast<size_t>(out);
  return t[d].latency * (2 * ceil_log2(g.span[d]));
}

Time collective_base_latency(const Topology& t, const GroupShape& g) {
  Time base;
  for (size_t d = 0; d < g.span.size(); ++d)
    if (g.span[d] > 1) base = std::max(base, t[d].base_latency);
  return base;
}

Time collective_rendezvous_latency(const Topology& t, const GroupShape& g) {
  Time rendezvous;
  for (size_t d = 0; d < g.span.size(); ++d)
    if (g.span[d] > 1) rendezvous = std::max(rendezvous, t[d].rendezvous_latency);
  return rendezvous;
}

bool can_run(const Topology& t, Algorithm a, CollectiveKind kind, const GroupShape& g) {
  switch (a) {
    case Algorithm::Ring:
      return kind != CollectiveKind::AllToAll && kind != CollectiveKind::SendRecv;
    case Algorithm::Hierarchical:
      return is_reduction_family(kind) && spanned_count(g) >= 2 && g.regular();
    case Algorithm::Tree:
      return kind == CollectiveKind::AllReduce && g.outermost() >= 1;
    case Algorithm::Nvls:
      return kind == CollectiveKind::AllReduce && spanned_count(g) == 1 &&
             t[static_cast<size_t>(g.outermost())].nvls;
    case Algorithm::NvlsTree: {
      if (kind != CollectiveKind::AllReduce || spanned_count(g) != 2) return false;
      const auto in = static_cast<size_t>(innermost(g)), out = static_cast<size_t>(g.outermost());
      return t[in].nvls && t[out].kind == DimensionKind::FatTree && g.regular() &&
             g.span[in] == t[in].size;
    }
    case Algorithm::HalvingDoubling: {
      if (!is_reduction_family(kind) || !is_power_of_two(g.ranks) || !g.regular()) return false;
      for (const int64_t span : g.span)
        if (span > 1 && !is_power_of_two(span)) return false;
      return true;
    }
    case Algorithm::Direct:
      return !is_rooted(kind);
    case Algorithm::Auto:
      break;
  }
  return false;
}

Time nvls_latency(const Topology& t, const GroupShape& g) {
  const int d = g.outermost();
  return d < 0 ? Time::zero() : t[static_cast<size_t>(d)].latency.scaled(kNvlsHops);
}

Time nvls_tree_latency(const Topology& t, const GroupShape& g) {
  return t[static_cast<size_t>(innermost(g))].latency.scaled(kNvlsHops) + tree_outer_latency(t, g);
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
    case Algorithm::NvlsTree:
      if (kind != CollectiveKind::AllReduce) return "nvls-tree runs all-reduce only";
      return "nvls-tree needs whole servers whose switch has nvls: true, joined by a fat-tree (" +
             n + ")";
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

std::span<const Algorithm> auto_candidates(const Topology& t, CollectiveKind kind) {
  static constexpr Algorithm kDirect[] = {Algorithm::Direct};
  static constexpr Algorithm kChain[] = {Algorithm::Ring};
  static constexpr Algorithm kSwitched[] = {Algorithm::Ring, Algorithm::Tree, Algorithm::Nvls,
                                            Algorithm::NvlsTree};
  static constexpr Algorithm kDirectNetwork[] = {Algorithm::Ring,         Algorithm::Tree,
                                                 Algorithm::Nvls,         Algorithm::NvlsTree,
                                                 Algorithm::Hierarchical, Algorithm::Direct};
  if (kind == CollectiveKind::AllToAll || kind == CollectiveKind::SendRecv) return kDirect;
  if (is_rooted(kind)) return kChain;
  const bool direct_network =
      std::any_of(t.dimensions().begin(), t.dimensions().end(), [](const Dimension& d) {
        return d.kind == DimensionKind::Ring || d.kind == DimensionKind::Mesh;
      });
  if (direct_network) return kDirectNetwork;
  return kSwitched;
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
