#include "network/collective_flows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/diagnostics.h"
#include "network/rank_placement.h"

namespace orrery {
namespace {

// Transfers between the same endpoints (and routed alike) merged into one.
std::vector<Transfer> merged(std::vector<Transfer> transfers) {
  std::sort(transfers.begin(), transfers.end(), [](const Transfer& a, const Transfer& b) {
    return std::tie(a.src, a.dst, a.mirror) < std::tie(b.src, b.dst, b.mirror);
  });
  std::vector<Transfer> out;
  for (const Transfer& t : transfers) {
    if (!out.empty() && out.back().src == t.src && out.back().dst == t.dst &&
        out.back().mirror == t.mirror)
      out.back().bytes += t.bytes;
    else
      out.push_back(t);
  }
  return out;
}

// Members grouped by their coordinates outside dimension d (ordered), each group sorted.
std::vector<std::vector<int64_t>> groups_outside(const Topology& t,
                                                 std::span<const int64_t> members, size_t d) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (const int64_t m : members) {
    std::vector<int64_t> c = t.coordinates(m);
    c.erase(c.begin() + static_cast<long>(d));
    groups[c].push_back(m);
  }
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, list] : groups)
    out.push_back(std::move(list));
  return out;
}

// On ring (torus) dimensions a ring runs in both directions at once, half the data each way.
void add_reverse_rings(std::vector<std::vector<int64_t>>& rings) {
  const size_t n = rings.size();
  for (size_t i = 0; i < n; ++i)
    rings.emplace_back(rings[i].rbegin(), rings[i].rend());
}

std::vector<size_t> spanned_dimensions(const Topology& t, std::span<const int64_t> members) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < t.size(); ++d) {
    const int64_t first = t.coordinate(members.front(), d);
    for (const int64_t m : members)
      if (t.coordinate(m, d) != first) {
        dims.push_back(d);
        break;
      }
  }
  return dims;
}

bool all_rings(const Topology& t, const std::vector<size_t>& dims) {
  return !dims.empty() && std::all_of(dims.begin(), dims.end(),
                                      [&](size_t d) { return t[d].kind == DimensionKind::Ring; });
}

// One step of every ring in `rings` (each rank to the next, one unit each), repeated per pass
// for each hop of a pass: `hops[d]` of the n - 1 hop in dimension d, each with d's latency.
FlowStep ring_step(const Topology& t, const std::vector<std::vector<int64_t>>& rings,
                   const std::vector<int64_t>& hops, int passes, double share) {
  FlowStep step;
  step.runs.clear();
  for (const auto& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t i = 0; i < n; ++i)
      step.transfers.push_back({ring[i], ring[(i + 1) % n], 1.0});
  }
  for (size_t d = 0; d < hops.size(); ++d)
    if (hops[d] * passes > 0)
      step.runs.push_back({hops[d] * passes, t[d].latency, is_network(t, d)});
  step.scale.share = share;
  return step;
}

// Rings over a group spanning the fat-tree dimension e, as NCCL's channels: one channel per rail
// that every server's members sit on; on each server a channel enters at its rail's first
// member, visits the server's members in order from there, and leaves from the one before it
// to the next server's entry GPU, through that rail (routing relays over NVLink to the rail's
// GPU, as NCCL's PXN). A server's NIC thus carries one channel each way.
std::vector<std::vector<int64_t>> rail_rings(const Topology& t, size_t e,
                                             const std::vector<int64_t>& members) {
  const int64_t per_server = t.positions_below(e);
  std::vector<std::vector<int64_t>> servers;
  for (const int64_t m : members) {
    if (servers.empty() || servers.back().front() / per_server != m / per_server)
      servers.emplace_back();
    servers.back().push_back(m);
  }
  const auto rail = [&](int64_t m) { return t.rail_of(e, m % per_server); };
  std::vector<int64_t> common;  // rails every server has members on
  for (const int64_t m : servers.front()) {
    const int64_t r = rail(m);
    if (!common.empty() && common.back() == r) continue;
    if (std::all_of(servers.begin(), servers.end(), [&](const std::vector<int64_t>& s) {
          return std::any_of(s.begin(), s.end(), [&](int64_t x) { return rail(x) == r; });
        }))
      common.push_back(r);
  }
  if (common.empty()) common.push_back(-1);  // no shared rail: one channel
  std::vector<std::vector<int64_t>> rings;
  for (const int64_t r : common) {
    std::vector<int64_t> order;
    for (const auto& s : servers) {
      const auto entry = std::find_if(s.begin(), s.end(), [&](int64_t x) { return rail(x) == r; });
      const size_t first = entry == s.end() ? 0 : static_cast<size_t>(entry - s.begin());
      for (size_t k = 0; k < s.size(); ++k)
        order.push_back(s[(first + k) % s.size()]);
    }
    rings.push_back(std::move(order));
  }
  return rings;
}

// NCCL-like channels over `members`: across a fat-tree, rail_rings(); inside one switch domain
// (or on tori and meshes) one ring in rank order; across other dimensions around switch domains,
// one ring per member of a domain, each visiting a domain's members rotated so that it crosses
// to the next domain between GPUs of one local position.
std::vector<std::vector<int64_t>> channel_rings(const Topology& t,
                                                std::span<const int64_t> members) {
  std::vector<int64_t> sorted(members.begin(), members.end());
  std::sort(sorted.begin(), sorted.end());
  const auto dims = spanned_dimensions(t, sorted);
  const auto e = t.fat_tree();
  if (e && std::find(dims.begin(), dims.end(), *e) != dims.end()) return rail_rings(t, *e, sorted);
  // Inside one switch domain (no dimension spanned but the first) or off switches: rank order.
  const bool one_domain = std::all_of(dims.begin(), dims.end(), [](size_t d) { return d == 0; });
  if (one_domain || t[0].kind != DimensionKind::Switch) return {sorted};
  const auto blocks = groups_outside(t, sorted, 0);
  int64_t channels = 0;
  for (const auto& b : blocks)
    channels = std::max<int64_t>(channels, static_cast<int64_t>(b.size()));
  std::vector<std::vector<int64_t>> rings;
  for (int64_t ch = 0; ch < channels; ++ch) {
    std::vector<int64_t> order;
    for (size_t j = 0; j < blocks.size(); ++j) {
      const auto& b = blocks[j];
      const auto size = static_cast<int64_t>(b.size());
      const int64_t first = ((ch - static_cast<int64_t>(j)) % size + size) % size;
      for (int64_t k = 0; k < size; ++k)
        order.push_back(b[static_cast<size_t>((first + k) % size)]);
    }
    rings.push_back(std::move(order));
  }
  return rings;
}

std::vector<FlowStep> ring(const Topology& t, CollectiveKind kind, std::span<const int64_t> members,
                           const GroupShape& shape) {
  const auto n = static_cast<double>(members.size());
  std::vector<std::vector<int64_t>> rings = channel_rings(t, members);
  double share = 1 / (n * static_cast<double>(rings.size()));
  if (all_rings(t, spanned_dimensions(t, members))) {
    add_reverse_rings(rings);
    share /= 2;
  }
  return {ring_step(t, rings, ring_hops(shape), kind == CollectiveKind::AllReduce ? 2 : 1, share)};
}

// Broadcast (from members[0]) and reduce (to it) as a pipelined chain along each channel's ring
// rotated to start at the root (as NCCL's ring broadcast). The stream and the pipeline fill run
// as one step: every chain link at once, carrying its channel's share of S + (n - 2) min(S,
// chunk) (the last rank receives the first chunk after n - 1 links, then the rest streams in),
// then one latency per hop of a chain in rank order from the root (a channel entering the
// root's server elsewhere crosses one more server boundary, which this leaves out). A reduce
// runs the same chains towards the root, each transfer retracing the broadcast's route.
std::vector<FlowStep> chain(const Topology& t, CollectiveKind kind,
                            std::span<const int64_t> members, const GroupShape& shape) {
  const auto n = static_cast<int64_t>(members.size());
  const int64_t root = members.front();
  std::vector<std::vector<int64_t>> chains = channel_rings(t, members);
  if (all_rings(t, spanned_dimensions(t, members))) add_reverse_rings(chains);
  FlowStep step;
  for (auto& c : chains) {
    std::rotate(c.begin(), std::find(c.begin(), c.end(), root), c.end());
    for (size_t i = 0; i + 1 < c.size(); ++i) {
      if (kind == CollectiveKind::Reduce)
        step.transfers.push_back({c[i + 1], c[i], 1.0, true});
      else
        step.transfers.push_back({c[i], c[i + 1], 1.0});
    }
  }
  step.scale = {1 / static_cast<double>(chains.size()), n - 2};
  const int out = shape.outermost();
  step.runs = {
      {1, ring_pass_latency(t, shape), out >= 0 && is_network(t, static_cast<size_t>(out))}};
  return {std::move(step)};
}

// One exchange between GPUs a and b: the latency of the outermost dimension they differ in.
StepRun separation(const Topology& t, int64_t a, int64_t b) {
  const std::vector<int64_t> x = t.coordinates(a), y = t.coordinates(b);
  for (size_t d = x.size(); d-- > 0;)
    if (x[d] != y[d]) return {1, t[d].latency, is_network(t, d)};
  return {1, Time::zero()};
}

// Every rank sends S to the next at once; the latency of the outermost dimension crossed.
std::vector<FlowStep> shift(const Topology& t, std::span<const int64_t> members) {
  FlowStep out;
  StepRun slowest{1, Time::zero()};
  for (size_t i = 0; i < members.size(); ++i) {
    const int64_t next = members[(i + 1) % members.size()];
    out.transfers.push_back({members[i], next, 1.0});
    const StepRun r = separation(t, members[i], next);
    if (*r.latency > *slowest.latency) slowest = r;
  }
  out.runs = {slowest};
  return {std::move(out)};
}

std::vector<FlowStep> hierarchical(const Topology& t, CollectiveKind kind,
                                   std::span<const int64_t> members) {
  std::vector<FlowStep> levels;
  double share = 1;
  for (const size_t d : spanned_dimensions(t, members)) {
    std::vector<std::vector<int64_t>> rings = groups_outside(t, members, d);
    int64_t span = 0;
    for (const auto& r : rings)
      span = std::max<int64_t>(span, static_cast<int64_t>(r.size()));
    std::vector<int64_t> hops(t.size(), 0);
    hops[d] = span - 1;
    double per_step = share / static_cast<double>(span);
    share /= static_cast<double>(span);
    if (t[d].kind == DimensionKind::Ring) {
      add_reverse_rings(rings);
      per_step /= 2;
    }
    levels.push_back(ring_step(t, rings, hops, 1, per_step));
  }
  std::vector<FlowStep> out;
  if (kind != CollectiveKind::AllGather) out.insert(out.end(), levels.begin(), levels.end());
  if (kind != CollectiveKind::ReduceScatter) out.insert(out.end(), levels.rbegin(), levels.rend());
  return out;
}

std::vector<FlowStep> halving_doubling(const Topology& t, CollectiveKind kind,
                                       std::span<const int64_t> members) {
  const auto n = static_cast<int64_t>(members.size());
  std::vector<int64_t> bits;
  for (int64_t b = 1; b < n; b *= 2)
    bits.push_back(b);
  const auto exchange = [&](int64_t bit, double share) {
    FlowStep out;
    for (int64_t i = 0; i < n; ++i)
      out.transfers.push_back(
          {members[static_cast<size_t>(i)], members[static_cast<size_t>(i ^ bit)], 1.0});
    out.runs = {separation(t, members[0], members[static_cast<size_t>(bit)])};
    out.scale.share = share;
    return out;
  };
  std::vector<FlowStep> out;
  if (kind != CollectiveKind::AllGather) {
    double share = 1;
    for (const int64_t bit : bits)
      out.push_back(exchange(bit, share /= 2));
  }
  if (kind != CollectiveKind::ReduceScatter) {
    double share = 1 / static_cast<double>(n);
    for (auto it = bits.rbegin(); it != bits.rend(); ++it) {
      out.push_back(exchange(*it, share));
      share *= 2;
    }
  }
  return out;
}

std::vector<FlowStep> direct(const Topology& t, CollectiveKind kind,
                             std::span<const int64_t> members) {
  FlowStep out = direct_exchange_frame(t, kind, members);
  const auto n = static_cast<double>(members.size());
  const auto runs = static_cast<double>(out.repeats());
  if (const double seconds = flow_seconds(n * (n - 1), runs); seconds > kFlowBudgetSeconds)
    throw_too_many_flows(n * (n - 1) * runs, seconds);
  for (const int64_t a : members)
    for (const int64_t b : members)
      if (a != b) out.transfers.push_back({a, b, 1.0});
  return {std::move(out)};
}

// Each GPU sends S (1 + 1/n) into the switch and receives as much, both at once (the reduction
// and the multicast of a pipelined NVLS all-reduce overlap), at nvls_efficiency of the port:
// the bytes are scaled so that links of efficiency x port carry them in the same time.
std::vector<FlowStep> nvls(const Topology& t, std::span<const int64_t> members) {
  const Dimension& dim = t[spanned_dimensions(t, members).front()];
  FlowStep out;
  for (const int64_t m : members) {
    out.transfers.push_back({m, kIntoSwitch, 1.0});
    out.transfers.push_back({m, kOutOfSwitch, 1.0});
  }
  out.runs = {{1, nvls_latency(t, shape_of(t, members))}};
  out.scale.share =
      (1 + 1 / static_cast<double>(members.size())) * dim.efficiency / dim.nvls_efficiency;
  return {std::move(out)};
}

}  // namespace

double StepScale::bytes(double s) const {
  return share * (s + static_cast<double>(fill) * std::min(s, static_cast<double>(kPipelineChunk)));
}

int64_t FlowStep::repeats() const {
  int64_t total = 0;
  for (const StepRun& r : runs)
    total += r.count;
  return total;
}

double flow_seconds(double flows, double repeats) {
  return repeats * flows * (kFlowBaseSeconds + kFlowSharingSeconds * std::sqrt(flows));
}

[[noreturn]] void throw_too_many_flows(double flows, double seconds, std::string_view what) {
  throw FlowBudgetError(fmt::format(
      "flow mode would run {:.0f} flows for {}, about {:.3g} s of computer time "
      "(docs/network.md); the limit is {:.0f} s: use the analytical mode or fewer ranks",
      flows, what, seconds, kFlowBudgetSeconds));
}

[[noreturn]] void throw_flows_contend(uint64_t resolved) {
  throw FlowBudgetError(fmt::format(
      "flow mode stopped: its flows share links so much that their rates were re-solved {} times "
      "so far, about {:.3g} s of computer time (docs/network.md); the limit is {:.0f} s: use "
      "the analytical mode or fewer ranks",
      resolved, static_cast<double>(resolved) * kResolveSeconds, kFlowBudgetSeconds));
}

bool is_network(const Topology& t, size_t d) {
  return t[d].kind == DimensionKind::FatTree;
}

bool decomposes(Algorithm algorithm) {
  return algorithm != Algorithm::Tree && algorithm != Algorithm::NvlsTree &&
         algorithm != Algorithm::Auto;
}

std::vector<FlowStep> collective_pattern(const Topology& t, Algorithm algorithm,
                                         CollectiveKind kind, std::span<const int64_t> members) {
  if (members.size() < 2) return {};
  const GroupShape shape = shape_of(t, members);
  std::vector<FlowStep> steps;
  if (is_rooted(kind)) {
    steps = chain(t, kind, members, shape);
  } else if (kind == CollectiveKind::SendRecv) {
    steps = shift(t, members);
  } else {
    switch (algorithm) {
      case Algorithm::Hierarchical:
        steps = hierarchical(t, kind, members);
        break;
      case Algorithm::HalvingDoubling:
        steps = halving_doubling(t, kind, members);
        break;
      case Algorithm::Direct:
        steps = direct(t, kind, members);
        break;
      case Algorithm::Nvls:
        steps = nvls(t, members);
        break;
      case Algorithm::Ring:
      case Algorithm::Tree:
      case Algorithm::NvlsTree:
      case Algorithm::Auto:
        steps = ring(t, kind, members, shape);
        break;
    }
  }
  append_base_latency(t, shape, steps);
  return steps;
}

FlowStep direct_exchange_frame(const Topology& t, CollectiveKind kind,
                               std::span<const int64_t> members) {
  FlowStep frame;
  const GroupShape shape = shape_of(t, members);
  const int out = shape.outermost();
  frame.runs = {{kind == CollectiveKind::AllReduce ? 2 : 1, peer_latency(t, shape),
                 out >= 0 && is_network(t, static_cast<size_t>(out))}};
  frame.scale.share = 1 / static_cast<double>(members.size());
  return frame;
}

void append_base_latency(const Topology& t, const GroupShape& shape, std::vector<FlowStep>& steps) {
  const Time base = collective_base_latency(t, shape);
  const Time rendezvous = collective_rendezvous_latency(t, shape);
  if (base == Time::zero() && rendezvous == Time::zero()) return;
  FlowStep last;
  last.runs = {{.latency = base, .fixed = rendezvous}};
  last.base = true;
  steps.push_back(std::move(last));
}

std::vector<FlowStep> collective_steps(const Topology& t, Algorithm algorithm, CollectiveKind kind,
                                       Bytes bytes, std::span<const int64_t> members) {
  std::vector<FlowStep> steps = collective_pattern(t, algorithm, kind, members);
  const auto s = static_cast<double>(bytes);
  for (FlowStep& step : steps) {
    const double unit = step.scale.bytes(s);
    for (Transfer& x : step.transfers)
      x.bytes *= unit;
    step.transfers = merged(std::move(step.transfers));
    step.scale = {};
  }
  return steps;
}

void check_flow_count(std::span<const FlowStep> steps) {
  double flows = 0, seconds = 0;
  for (const FlowStep& s : steps) {
    const auto f = static_cast<double>(s.transfers.size());
    const auto r = static_cast<double>(s.repeats());
    flows += f * r;
    seconds += flow_seconds(f, r);
  }
  if (seconds > kFlowBudgetSeconds) throw_too_many_flows(flows, seconds);
}

Time transfer_route(const Topology& t, const LinkGraph& links, const Transfer& x, uint64_t hash,
                    std::vector<LinkId>& path) {
  if (x.dst >= 0) {
    if (!x.mirror) return links.route(x.src, x.dst, hash, path);
    const size_t first = path.size();
    const Time latency = links.route(x.dst, x.src, hash, path);
    std::reverse(path.begin() + static_cast<long>(first), path.end());
    for (size_t i = first; i < path.size(); ++i)
      path[i] = links.reverse(path[i]);
    return latency;
  }
  for (size_t d = 0; d < t.size(); ++d)
    if (t[d].nvls) {
      path.push_back(links.switch_port(d, x.src, x.dst == kIntoSwitch));
      return t[d].latency;
    }
  return Time::zero();
}

std::vector<RoutedStep> route_steps(const Topology& t, const LinkGraph& links,
                                    std::span<const FlowStep> steps, uint64_t& hash) {
  std::vector<RoutedStep> routed;
  for (const FlowStep& fs : steps) {
    RoutedStep s;
    Time route_latency;
    for (const Transfer& x : fs.transfers) {
      s.path_begin.push_back(static_cast<uint32_t>(s.links.size()));
      route_latency = std::max(route_latency, transfer_route(t, links, x, hash++, s.links));
      s.bytes.push_back(x.bytes);
    }
    s.path_begin.push_back(static_cast<uint32_t>(s.links.size()));
    for (const StepRun& r : fs.runs) {
      if (r.count < 1) continue;
      RoutedStep run = s;
      run.repeat = r.count;
      run.latency = r.latency.value_or(route_latency).scaled(r.latency_scale) + r.fixed;
      routed.push_back(std::move(run));
    }
  }
  return routed;
}

}  // namespace orrery
