#include "network/link_graph.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/diagnostics.h"

namespace orrery {
namespace {

// Loads of the forward links of one ring line of k positions (link x: x -> x + 1) when source a
// sends u[a] x v[b] to each destination b at forward distance 1 .. h (h = h_even for even a,
// h_odd for odd a), added to fwd. Per parity class with one reach h:
//   fwd[x] = sum over j < h of u[x - j] (Q[x - j + h] - Q[x]),  Q the prefix sums of v,
// two sliding-window sums over the positions unrolled three times: O(k).
void ring_line_loads(const std::vector<double>& u, const std::vector<double>& v, int64_t k,
                     int64_t h_even, int64_t h_odd, std::vector<double>& fwd) {
  std::vector<double> q(static_cast<size_t>(3 * k + 1), 0.0);  // q[t + 1] = v[0 .. t] unrolled
  for (int64_t t = 0; t < 3 * k; ++t)
    q[static_cast<size_t>(t + 1)] = q[static_cast<size_t>(t)] + v[static_cast<size_t>(t % k)];
  const auto Q = [&](int64_t t) { return q[static_cast<size_t>(t + 1)]; };
  std::vector<double> pa(static_cast<size_t>(2 * k + 1)), pb(static_cast<size_t>(2 * k + 1));
  for (const int parity : {0, 1}) {
    const int64_t h = parity == 0 ? h_even : h_odd;
    if (h <= 0) continue;
    pa[0] = pb[0] = 0;
    for (int64_t i = 0; i < 2 * k; ++i) {
      const double ui = (i % k) % 2 == parity ? u[static_cast<size_t>(i % k)] : 0.0;
      pa[static_cast<size_t>(i + 1)] = pa[static_cast<size_t>(i)] + ui * Q(i + h);
      pb[static_cast<size_t>(i + 1)] = pb[static_cast<size_t>(i)] + ui;
    }
    for (int64_t x = 0; x < k; ++x) {
      const int64_t hi = x + k + 1, lo = x + k - h + 1;  // sources i in [lo, hi)
      fwd[static_cast<size_t>(x)] +=
          (pa[static_cast<size_t>(hi)] - pa[static_cast<size_t>(lo)]) -
          Q(x + k) * (pb[static_cast<size_t>(hi)] - pb[static_cast<size_t>(lo)]);
    }
  }
}

// Members grouped by a key: per group the key, its positions along one dimension with their
// counts (ascending), their total, and a dense copy (positions 0 .. k - 1).
struct Line {
  int64_t key = 0;
  std::vector<std::pair<int64_t, double>> at;
  double total = 0;
  size_t dense = 0;  // offset into the dense table
};

std::vector<Line> lines_of(std::vector<std::pair<int64_t, int64_t>> keyed, int64_t k,
                           std::vector<double>& dense) {
  std::sort(keyed.begin(), keyed.end());
  std::vector<Line> lines;
  for (size_t i = 0; i < keyed.size(); ++i) {
    if (lines.empty() || lines.back().key != keyed[i].first) {
      lines.push_back({keyed[i].first, {}, 0, dense.size()});
      dense.resize(dense.size() + static_cast<size_t>(k), 0.0);
    }
    Line& line = lines.back();
    if (line.at.empty() || line.at.back().first != keyed[i].second)
      line.at.emplace_back(keyed[i].second, 0.0);
    line.at.back().second += 1;
    line.total += 1;
    dense[line.dense + static_cast<size_t>(keyed[i].second)] += 1;
  }
  return lines;
}

// The members of one all-pairs exchange seen along one dimension of k positions (`below`
// positions inside it): the lines of sources (by coordinates outside the dimension) and of
// destinations (by coordinates inside it), and the dimension's first link.
struct PairLines {
  int64_t k = 0, below = 1;
  LinkId base = 0;
  std::vector<Line> sources, targets;
  std::vector<double> u_dense, v_dense;  // the lines' dense counts

  // The GPU (rank in the dimension's layout) at position x between a target and a source line.
  int64_t gpu(const Line& lo, int64_t x, const Line& hi) const {
    return lo.key + x * below + hi.key * below * k;
  }
  double u(const Line& hi, int64_t x) const { return u_dense[hi.dense + static_cast<size_t>(x)]; }
  double v(const Line& lo, int64_t x) const { return v_dense[lo.dense + static_cast<size_t>(x)]; }
};

// A switch: every GPU's up port carries what it sends to other positions, its down port what it
// receives from them.
void add_switch_pairs(const PairLines& p, double bytes, std::vector<double>& load) {
  for (const Line& lo : p.targets)
    for (const Line& hi : p.sources) {
      for (const auto& [a, u] : hi.at)  // up: a's sources to every other position
        load[p.base + static_cast<LinkId>(2 * p.gpu(lo, a, hi))] +=
            u * (lo.total - p.v(lo, a)) * bytes;
      for (const auto& [b, v] : lo.at)  // down: b's destinations from every other one
        load[p.base + static_cast<LinkId>(2 * p.gpu(lo, b, hi) + 1)] +=
            v * (hi.total - p.u(hi, b)) * bytes;
    }
}

// A full mesh: one link per ordered pair of positions.
void add_mesh_pairs(const PairLines& p, double bytes, std::vector<double>& load) {
  const int64_t k = p.k;
  for (const Line& lo : p.targets)
    for (const Line& hi : p.sources)
      for (const auto& [a, u] : hi.at)
        for (const auto& [b, v] : lo.at)
          if (a != b)
            load[p.base + static_cast<LinkId>(p.gpu(lo, a, hi) * (k - 1) + (b < a ? b : b - 1))] +=
                u * v * bytes;
}

// A bidirectional ring: forward from a to destinations up to k/2 ahead (ties: even a), the rest
// backward.
void add_ring_pairs(const PairLines& p, double bytes, std::vector<double>& load) {
  const int64_t k = p.k;
  const auto at = [](int64_t x) { return static_cast<size_t>(x); };
  const int64_t h_even = k / 2, h_odd = (k - 1) / 2;
  const int64_t g_even = k - 1 - h_even, g_odd = k - 1 - h_odd;
  std::vector<double> u(at(k)), v(at(k)), ur(at(k)), vr(at(k)), fwd(at(k)), back(at(k));
  for (const Line& lo : p.targets)
    for (const Line& hi : p.sources) {
      for (int64_t x = 0; x < k; ++x) {
        u[at(x)] = p.u(hi, x);
        v[at(x)] = p.v(lo, x);
        // Reflected (x -> -x): backward routes become forward ones, parities kept.
        ur[at((k - x) % k)] = u[at(x)];
        vr[at((k - x) % k)] = v[at(x)];
      }
      std::fill(fwd.begin(), fwd.end(), 0.0);
      std::fill(back.begin(), back.end(), 0.0);
      ring_line_loads(u, v, k, h_even, k % 2 ? h_even : h_odd, fwd);
      ring_line_loads(ur, vr, k, k % 2 ? h_odd : g_even, k % 2 ? h_odd : g_odd, back);
      for (int64_t x = 0; x < k; ++x) {
        const int64_t g = p.gpu(lo, x, hi);
        load[p.base + static_cast<LinkId>(2 * g)] += fwd[at(x)] * bytes;
        // The backward link at x (x -> x - 1) is the reflected forward link at -x.
        load[p.base + static_cast<LinkId>(2 * g + 1)] += back[at((k - x) % k)] * bytes;
      }
    }
}

// A fat-tree's leaves and spines, as add_fat_tree_pairs needs them: a leaf per (rail, pod of
// per_leaf servers), its spine traffic kept in its spine-0 link (slot `up` onwards), and the rail
// of each line of destinations.
struct LeafTier {
  int64_t rails = 1, per_leaf = 1, pods = 1, spines = 1;
  LinkId up = 0;
  std::vector<int64_t> rail;  // per PairLines::targets
};

// Members per pod of a line's positions, ascending by pod.
std::vector<std::pair<int64_t, double>> per_pod(const Line& line, int64_t line_key, int64_t k,
                                                int64_t per_leaf) {
  std::vector<std::pair<int64_t, double>> pods;
  for (const auto& [x, count] : line.at) {
    const int64_t pod = (x + line_key * k) / per_leaf;
    if (pods.empty() || pods.back().first != pod) pods.emplace_back(pod, 0.0);
    pods.back().second += count;
  }
  return pods;
}

// A rail-optimized fat-tree: each GPU's NIC up and down as a switch port, and between pods each
// pod's leaf sends what leaves it and receives what enters it.
void add_fat_tree_pairs(const PairLines& p, const LeafTier& tier, double bytes,
                        std::vector<double>& load) {
  const int64_t k = p.k;
  const auto count = [](const std::vector<std::pair<int64_t, double>>& list, int64_t pod) {
    const auto it =
        std::lower_bound(list.begin(), list.end(), std::pair<int64_t, double>{pod, -1.0});
    return it != list.end() && it->first == pod ? it->second : 0.0;
  };
  for (size_t t = 0; t < p.targets.size(); ++t) {
    const Line& lo = p.targets[t];
    const int64_t rail = tier.rail[t];
    for (const Line& hi : p.sources) {
      const auto server = [&](int64_t x) { return x + hi.key * k; };
      for (const auto& [a, u] : hi.at)
        load[p.base + static_cast<LinkId>(2 * (server(a) * tier.rails + rail))] +=
            u * (lo.total - p.v(lo, a)) * bytes;
      for (const auto& [b, v] : lo.at)
        load[p.base + static_cast<LinkId>(2 * (server(b) * tier.rails + rail) + 1)] +=
            v * (hi.total - p.u(hi, b)) * bytes;
      const auto out = per_pod(hi, hi.key, k, tier.per_leaf);
      const auto in = per_pod(lo, hi.key, k, tier.per_leaf);
      for (const auto& [pod, u] : out)
        load[tier.up + static_cast<LinkId>(2 * ((rail * tier.pods + pod) * tier.spines))] +=
            u * (lo.total - count(in, pod)) * bytes;
      for (const auto& [pod, v] : in)
        load[tier.up + static_cast<LinkId>(2 * ((rail * tier.pods + pod) * tier.spines) + 1)] +=
            v * (hi.total - count(out, pod)) * bytes;
    }
  }
}

}  // namespace

LinkGraph::LinkGraph(const Topology& topology, int64_t gpus) : topology_(topology), gpus_(gpus) {
  if (const auto cap = topology.capacity(); cap && gpus > *cap)
    throw std::invalid_argument(std::to_string(gpus) + " GPUs do not fit the network (" +
                                std::to_string(*cap) + ")");
  // Links exist for the positions the GPUs occupy: a slice of a torus closes into a torus of its
  // own extent (optical circuit switches do this for TPU slices), a switch has the ports in use.
  int64_t positions = 1;
  for (size_t d = 0; d < topology.size(); ++d) {
    const int64_t below = topology.positions_below(d);
    const int64_t used = (gpus + below - 1) / below;
    extent_.push_back(topology[d].size == 0 ? used : std::min(topology[d].size, used));
    positions *= extent_.back();
  }
  const int64_t all = positions;  // GPUs including the unused tail of the last block
  {
    double links = 0, inside = 1;
    for (size_t d = 0; d < topology.size(); ++d) {
      const double servers = static_cast<double>(all) / inside;
      switch (topology[d].kind) {
        case DimensionKind::Switch:
        case DimensionKind::Ring:
          links += 2.0 * static_cast<double>(all);
          break;
        case DimensionKind::Mesh:
          links += static_cast<double>(all) * static_cast<double>(extent_[d] - 1);
          break;
        case DimensionKind::FatTree: {
          // NICs up and down, and leaf-spine links up and down (spines sized by the job).
          const double per_leaf =
              topology[d].servers_per_leaf > 0
                  ? std::min(static_cast<double>(topology[d].servers_per_leaf), servers)
                  : servers;
          const double pods = std::ceil(servers / per_leaf);
          links += 2.0 * static_cast<double>(topology.rail_groups(d)) * (servers + pods * per_leaf);
          break;
        }
      }
      inside *= static_cast<double>(extent_[d]);
    }
    if (links > static_cast<double>(kMaxLinks))
      throw InputError("the network would have " + std::to_string(static_cast<int64_t>(links)) +
                       " links for " + std::to_string(gpus) + " GPUs; at most " +
                       std::to_string(kMaxLinks) +
                       " are modelled (a mesh dimension of many positions links every pair)");
  }
  int64_t below = 1;  // positions of the dimensions inside d, as laid out here
  for (size_t d = 0; d < topology.size(); ++d) {
    const Dimension& dim = topology[d];
    Family f;
    f.base = static_cast<LinkId>(link_count_);
    f.capacity = dim.effective().in_bytes_per_second();
    switch (dim.kind) {
      case DimensionKind::Switch:
      case DimensionKind::Ring:
        link_count_ += static_cast<size_t>(2 * all);
        break;
      case DimensionKind::Mesh:
        link_count_ += static_cast<size_t>(all * (extent_[d] - 1));
        break;
      case DimensionKind::FatTree: {
        // One server per position of this dimension and of the ones outside it.
        f.servers = all / below;
        const int64_t per_leaf = dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers;
        f.pods = (f.servers + per_leaf - 1) / per_leaf;
        // One pod needs no spine; more pods fill every leaf, so per_leaf <= servers there: the
        // spines are never more than the job's servers (a huge servers_per_leaf costs nothing).
        f.spines = std::min(per_leaf, f.servers);
        const int64_t rails = topology.rail_groups(d);
        f.capacity = topology.nic_bandwidth(d).in_bytes_per_second();
        f.uplink_capacity = f.capacity / dim.oversubscription;
        link_count_ += static_cast<size_t>(2 * f.servers * rails);
        link_count_ += static_cast<size_t>(2 * rails * f.pods * f.spines);
        break;
      }
    }
    f.count = static_cast<LinkId>(link_count_ - f.base);
    family_.push_back(f);
    below *= extent_[d];
  }
}

double LinkGraph::capacity(LinkId link) const {
  for (size_t d = 0; d < family_.size(); ++d) {
    const Family& f = family_[d];
    if (link < f.base || link >= f.base + f.count) continue;
    return topology_[d].kind == DimensionKind::FatTree && link >= uplinks(d) ? f.uplink_capacity
                                                                             : f.capacity;
  }
  return 0;
}

std::vector<double> LinkGraph::capacities() const {
  std::vector<double> all(link_count_);
  for (LinkId l = 0; l < link_count_; ++l)
    all[l] = capacity(l);
  return all;
}

LinkGraph::Leaves LinkGraph::leaves(size_t d) const {
  const Family& f = family_.at(d);
  const Dimension& dim = topology_[d];
  return {f.servers,
          dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers,
          f.pods,
          f.spines,
          topology_.rail_groups(d),
          f.uplink_capacity};
}

int64_t LinkGraph::rank_of(const std::vector<int64_t>& coords) const {
  int64_t rank = 0, stride = 1;
  for (size_t d = 0; d < coords.size(); ++d) {
    rank += coords[d] * stride;
    stride *= extent_[d];
  }
  return rank;
}

std::vector<int64_t> LinkGraph::coords_of(int64_t rank) const {
  std::vector<int64_t> coords(extent_.size());
  for (size_t d = 0; d < extent_.size(); ++d) {
    coords[d] = rank % extent_[d];
    rank /= extent_[d];
  }
  return coords;
}

LinkId LinkGraph::uplinks(size_t d) const {
  return family_[d].base + static_cast<LinkId>(2 * family_[d].servers * topology_.rail_groups(d));
}

int64_t LinkGraph::server_of(size_t d, const std::vector<int64_t>& coords) const {
  int64_t server = 0, stride = 1;
  for (size_t j = d; j < coords.size(); ++j) {
    server += coords[j] * stride;
    stride *= extent_[j];
  }
  return server;
}

int64_t LinkGraph::rail_of(size_t d, const std::vector<int64_t>& coords) const {
  // The GPU's index inside its server (the dimensions inside d at their full sizes).
  int64_t local = 0, stride = 1;
  for (size_t j = 0; j < d; ++j) {
    local += coords[j] * stride;
    stride *= topology_[j].size;
  }
  return topology_.rail_of(d, local);
}

Time LinkGraph::route(int64_t src, int64_t dst, uint64_t hash, std::vector<LinkId>& path) const {
  // Coordinates in buffers of this thread's own: routing millions of transfers allocates nothing.
  thread_local std::vector<int64_t> at, to;
  topology_.coordinates(src, at);
  topology_.coordinates(dst, to);
  Time latency;
  for (size_t d = 0; d < topology_.size(); ++d) {
    if (at[d] == to[d]) continue;
    const Dimension& dim = topology_[d];
    const Family& f = family_[d];
    const int64_t here = rank_of(at);
    switch (dim.kind) {
      case DimensionKind::Switch:
        path.push_back(f.base + static_cast<LinkId>(2 * here));
        at[d] = to[d];
        path.push_back(f.base + static_cast<LinkId>(2 * rank_of(at) + 1));
        latency = std::max(latency, dim.latency);
        break;
      case DimensionKind::Mesh: {
        const int64_t peer = to[d] < at[d] ? to[d] : to[d] - 1;  // index among the other positions
        path.push_back(f.base + static_cast<LinkId>(here * (extent_[d] - 1) + peer));
        at[d] = to[d];
        latency = std::max(latency, dim.latency);
        break;
      }
      case DimensionKind::Ring: {
        const int64_t k = extent_[d];
        const int64_t ahead = ((to[d] - at[d]) % k + k) % k;
        // Equally short both ways: even positions go forward, odd ones back, which splits
        // symmetric traffic evenly over the two directions.
        const bool forward = ahead < k - ahead || (ahead == k - ahead && at[d] % 2 == 0);
        const int64_t hops = forward ? ahead : k - ahead;
        for (int64_t h = 0; h < hops; ++h) {
          path.push_back(f.base + static_cast<LinkId>(2 * rank_of(at) + (forward ? 0 : 1)));
          at[d] = ((at[d] + (forward ? 1 : -1)) % k + k) % k;
        }
        latency = std::max(latency, dim.latency * hops);
        break;
      }
      case DimensionKind::FatTree: {
        const int64_t rails = topology_.rail_groups(d);
        const int64_t rail = rail_of(d, at);
        const int64_t from_server = server_of(d, at);
        at[d] = to[d];
        const int64_t to_server = server_of(d, at);
        const int64_t per_leaf = dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers;
        const LinkId nics = f.base, uplinks = f.base + static_cast<LinkId>(2 * f.servers * rails);
        path.push_back(nics + static_cast<LinkId>(2 * (from_server * rails + rail)));
        const int64_t from_leaf = rail * f.pods + from_server / per_leaf;
        const int64_t to_leaf = rail * f.pods + to_server / per_leaf;
        if (from_leaf != to_leaf) {
          const auto spine = static_cast<int64_t>(hash % static_cast<uint64_t>(f.spines));
          path.push_back(uplinks + static_cast<LinkId>(2 * (from_leaf * f.spines + spine)));
          path.push_back(uplinks + static_cast<LinkId>(2 * (to_leaf * f.spines + spine) + 1));
        }
        path.push_back(nics + static_cast<LinkId>(2 * (to_server * rails + rail) + 1));
        latency = std::max(latency, dim.latency);
        break;
      }
    }
  }
  return latency;
}

std::vector<int64_t> LinkGraph::route_class(int64_t src, int64_t dst) const {
  std::vector<int64_t> crossed;
  std::vector<LinkId> both;
  for (const auto& [from, to] : {std::pair{src, dst}, std::pair{dst, src}})
    crossed.push_back(route(from, to, 0, both).ps());
  // How many times each link is crossed (the two routes may share one), by tier: per dimension,
  // the links inside servers (or along it), then a fat-tree's leaf-spine links.
  std::sort(both.begin(), both.end());
  std::vector<std::vector<int64_t>> tiers(2 * family_.size());
  for (size_t i = 0; i < both.size();) {
    size_t end = i;
    while (end < both.size() && both[end] == both[i])
      ++end;
    for (size_t d = 0; d < family_.size(); ++d) {
      const Family& f = family_[d];
      if (both[i] < f.base || both[i] >= f.base + f.count) continue;
      const bool spine = topology_[d].kind == DimensionKind::FatTree && both[i] >= uplinks(d);
      tiers[2 * d + (spine ? 1 : 0)].push_back(static_cast<int64_t>(end - i));
    }
    i = end;
  }
  for (std::vector<int64_t>& tier : tiers) {
    std::sort(tier.begin(), tier.end());
    crossed.push_back(static_cast<int64_t>(tier.size()));
    crossed.insert(crossed.end(), tier.begin(), tier.end());
  }
  return crossed;
}

LinkId LinkGraph::switch_port(size_t d, int64_t gpu, bool up) const {
  return family_.at(d).base + static_cast<LinkId>(2 * gpu + (up ? 0 : 1));
}

LinkId LinkGraph::reverse(LinkId link) const {
  for (size_t d = 0; d < family_.size(); ++d) {
    const Family& f = family_[d];
    if (link < f.base || link >= f.base + f.count) continue;
    const int64_t i = link - f.base;
    const int64_t k = extent_[d];
    switch (topology_[d].kind) {
      case DimensionKind::Switch:
      case DimensionKind::FatTree:  // up and down (NIC, leaf-spine) pair as 2i, 2i + 1
        return f.base + static_cast<LinkId>(i ^ 1);
      case DimensionKind::Ring: {
        std::vector<int64_t> c = coords_of(i / 2);
        const bool forward = i % 2 == 0;
        c[d] = (c[d] + (forward ? 1 : k - 1)) % k;
        return f.base + static_cast<LinkId>(2 * rank_of(c) + (forward ? 1 : 0));
      }
      case DimensionKind::Mesh: {
        std::vector<int64_t> c = coords_of(i / (k - 1));
        const int64_t a = c[d], p = i % (k - 1), b = p < a ? p : p + 1;
        c[d] = b;
        return f.base + static_cast<LinkId>(rank_of(c) * (k - 1) + (a < b ? a : a - 1));
      }
    }
  }
  return link;
}

Time LinkGraph::add_route_load(int64_t src, int64_t dst, double bytes, bool mirror,
                               std::vector<double>& load) const {
  // Hash 0 sends spine traffic through spine 0, the slot busiest() spreads over all spines.
  thread_local std::vector<LinkId> path;
  path.clear();
  const Time latency = mirror ? route(dst, src, 0, path) : route(src, dst, 0, path);
  for (const LinkId l : path)
    load[mirror ? reverse(l) : l] += bytes;
  return latency;
}

void LinkGraph::add_all_pairs_load(std::span<const int64_t> members, double bytes,
                                   std::vector<double>& load) const {
  const size_t n = members.size();
  if (n < 2) return;
  std::vector<std::vector<int64_t>> coords(n);
  std::vector<int64_t> rank(n);
  for (size_t i = 0; i < n; ++i) {
    coords[i] = topology_.coordinates(members[i]);
    rank[i] = rank_of(coords[i]);
  }
  int64_t below = 1;  // positions inside dimension d, as laid out here
  for (size_t d = 0; d < topology_.size(); below *= extent_[d], ++d) {
    const int64_t k = extent_[d];
    if (k < 2) continue;
    // Sources by (coordinates outside d, position in d); destinations by (inside d, position).
    std::vector<std::pair<int64_t, int64_t>> src(n), dst(n);
    for (size_t i = 0; i < n; ++i) {
      src[i] = {rank[i] / (below * k), coords[i][d]};
      dst[i] = {rank[i] % below, coords[i][d]};
    }
    PairLines lines;
    lines.k = k;
    lines.below = below;
    lines.base = family_[d].base;
    lines.sources = lines_of(std::move(src), k, lines.u_dense);
    lines.targets = lines_of(std::move(dst), k, lines.v_dense);
    switch (topology_[d].kind) {
      case DimensionKind::Switch:
        add_switch_pairs(lines, bytes, load);
        break;
      case DimensionKind::Mesh:
        add_mesh_pairs(lines, bytes, load);
        break;
      case DimensionKind::Ring:
        add_ring_pairs(lines, bytes, load);
        break;
      case DimensionKind::FatTree: {
        const Family& f = family_[d];
        const Dimension& dim = topology_[d];
        LeafTier tier;
        tier.rails = topology_.rail_groups(d);
        tier.per_leaf = dim.servers_per_leaf > 0 ? dim.servers_per_leaf : f.servers;
        tier.pods = f.pods;
        tier.spines = f.spines;
        tier.up = uplinks(d);
        // The rail of each line of destinations' local position (routes cross on it, as PXN).
        for (const Line& lo : lines.targets)
          tier.rail.push_back(rail_of(d, coords_of(lo.key)));
        add_fat_tree_pairs(lines, tier, bytes, load);
        break;
      }
    }
  }
}

double LinkGraph::busiest(const std::vector<double>& load, size_t d) const {
  const Family& f = family_[d];
  double worst = busiest_in_servers(load, d);
  if (topology_[d].kind == DimensionKind::FatTree) {
    // A leaf's spine traffic sits in its spine-0 links, shared by all its spines.
    const auto spines = static_cast<double>(f.spines);
    for (LinkId l = uplinks(d); l < f.base + f.count; l += static_cast<LinkId>(2 * f.spines))
      for (const LinkId x : {l, l + 1})
        worst = std::max(worst, load[x] / spines / f.uplink_capacity);
  }
  return worst;
}

double LinkGraph::busiest_in_servers(const std::vector<double>& load, size_t d) const {
  const Family& f = family_[d];
  const LinkId end = topology_[d].kind == DimensionKind::FatTree ? uplinks(d) : f.base + f.count;
  // The links share one capacity, and dividing by it keeps the order: the most loaded is the
  // busiest.
  double most = 0;
  for (LinkId l = f.base; l < end; ++l)
    most = std::max(most, load[l]);
  return most / f.capacity;
}

std::string LinkGraph::link_name(LinkId link) const {
  for (size_t d = 0; d < family_.size(); ++d) {
    const Family& f = family_[d];
    if (link < f.base || link >= f.base + f.count) continue;
    const Dimension& dim = topology_[d];
    const int64_t i = link - f.base;
    switch (dim.kind) {
      case DimensionKind::Switch:
        return dim.name + (i % 2 ? " down to gpu " : " up from gpu ") + std::to_string(i / 2);
      case DimensionKind::Ring:
        return dim.name + " gpu " + std::to_string(i / 2) + (i % 2 ? " to previous" : " to next");
      case DimensionKind::Mesh:
        return dim.name + " gpu " + std::to_string(i / (extent_[d] - 1)) + " link " +
               std::to_string(i % (extent_[d] - 1));
      case DimensionKind::FatTree: {
        const int64_t rails = topology_.rail_groups(d);
        const int64_t nic_links = 2 * f.servers * rails;
        if (i < nic_links) {
          const int64_t nic = i / 2;
          return dim.name + " server " + std::to_string(nic / rails) + " rail " +
                 std::to_string(nic % rails) + (i % 2 ? " NIC down" : " NIC up");
        }
        const int64_t j = (i - nic_links) / 2;
        const int64_t leaf = j / f.spines;
        return dim.name + " leaf " + std::to_string(leaf) +
               (i % 2 ? " from spine " : " to spine ") + std::to_string(j % f.spines);
      }
    }
  }
  return "link " + std::to_string(link);
}

}  // namespace orrery
