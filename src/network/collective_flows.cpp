#include "network/collective_flows.h"

#include <algorithm>
#include <map>

#include "core/diagnostics.h"

#include "network/flow_network.h"

namespace orrery {
namespace {

// A step of `transfers`, repeated, with transfers between the same endpoints merged.
FlowStep merged(std::vector<Transfer> transfers, int64_t repeat = 1) {
  std::sort(transfers.begin(), transfers.end(), [](const Transfer& a, const Transfer& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  FlowStep out;
  out.repeat = repeat;
  for (const Transfer& t : transfers) {
    if (!out.transfers.empty() && out.transfers.back().src == t.src &&
        out.transfers.back().dst == t.dst)
      out.transfers.back().bytes += t.bytes;
    else
      out.transfers.push_back(t);
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

bool all_rings(const Topology& t, const std::vector<size_t>& dims) {
  return !dims.empty() && std::all_of(dims.begin(), dims.end(),
                                      [&](size_t d) { return t[d].kind == DimensionKind::Ring; });
}

std::vector<size_t> spanned_dimensions(const Topology& t, std::span<const int64_t> members);

// Steps of ring reduce-scatter or all-gather over each ring in `rings`, each ring moving
// `per_step` bytes per rank per step: `steps` of them in all, each with the latency of the
// dimension its hop crosses (`hops` per pass of n - 1 steps, times `passes`).
void ring_steps(const Topology& t, const std::vector<std::vector<int64_t>>& rings,
                const std::vector<int64_t>& hops, int passes, double per_step,
                std::vector<FlowStep>& out) {
  std::vector<Transfer> step;
  for (const auto& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t i = 0; i < n; ++i)
      step.push_back({ring[i], ring[(i + 1) % n], per_step});
  }
  if (step.empty()) return;
  FlowStep base = merged(std::move(step));
  for (size_t d = 0; d < hops.size(); ++d) {
    if (hops[d] * passes < 1) continue;
    FlowStep s = base;
    s.repeat = hops[d] * passes;
    s.latency = t[d].latency;
    out.push_back(std::move(s));
  }
}

// Rings over a group spanning the fat-tree dimension e, as NCCL's channels: one channel per rail
// that every server's members sit on; on each server a channel enters at its rail's first
// member, visits the server's members in order from there, and leaves from the one before it
// to the next server's entry GPU, through that rail (routing relays over NVLink to the rail's
// GPU, as NCCL's PXN). A server's NIC thus carries one channel each way: the ring's bandwidth
// across the fat-tree is the channels' NICs.
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
  const auto blocks = groups_outside(t, sorted, 0);
  if (blocks.size() == 1 || t[0].kind != DimensionKind::Switch) return {sorted};
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

std::vector<FlowStep> ring(const Topology& t, CollectiveKind kind, double s,
                           std::span<const int64_t> members) {
  const auto n = static_cast<int64_t>(members.size());
  std::vector<std::vector<int64_t>> rings = channel_rings(t, members);
  double per_step = s / static_cast<double>(n * static_cast<int64_t>(rings.size()));
  if (all_rings(t, spanned_dimensions(t, members))) {
    add_reverse_rings(rings);
    per_step /= 2;
  }
  std::vector<FlowStep> out;
  ring_steps(t, rings, ring_hops(shape_of(t, members)), kind == CollectiveKind::AllReduce ? 2 : 1,
             per_step, out);
  return out;
}

// Broadcast (from members[0]) and reduce (to it) as a pipelined chain along each channel's ring
// rotated to start at the root (as NCCL's ring broadcast). As in the closed form, the stream and
// the pipeline fill run as one step: every chain link at once, carrying its share of the message
// plus the n - 2 chunks the fill takes; then one latency per hop of a chain in rank order from
// the root (a channel entering the root's server elsewhere crosses one more server boundary,
// which this leaves out).
std::vector<FlowStep> chain(const Topology& t, CollectiveKind kind, Bytes bytes,
                            std::span<const int64_t> members) {
  const auto n = static_cast<int64_t>(members.size());
  const int64_t root = members.front();
  std::vector<std::vector<int64_t>> chains = channel_rings(t, members);
  if (all_rings(t, spanned_dimensions(t, members))) add_reverse_rings(chains);
  for (auto& c : chains) {
    std::rotate(c.begin(), std::find(c.begin(), c.end(), root), c.end());
    if (kind == CollectiveKind::Reduce) std::reverse(c.begin(), c.end());  // ends at the root
  }
  const auto chunks = static_cast<double>(pipeline_chunks(bytes));
  const double per_link = static_cast<double>(bytes) * (1 + static_cast<double>(n - 2) / chunks) /
                          static_cast<double>(chains.size());
  std::vector<Transfer> transfers;
  for (const auto& c : chains)
    for (size_t i = 0; i + 1 < c.size(); ++i)
      transfers.push_back({c[i], c[i + 1], per_link});
  FlowStep step = merged(std::move(transfers));
  step.latency = ring_pass_latency(t, shape_of(t, members));
  return {std::move(step)};
}

[[noreturn]] void throw_too_many_flows(double flows) {
  throw InputError("flow mode would run " + std::to_string(static_cast<uint64_t>(flows)) +
                   " flows for this collective; the limit is " +
                   std::to_string(kMaxCollectiveFlows) +
                   " (about ten seconds): use the analytical mode or fewer ranks");
}

// The latency of the outermost dimension in which GPUs a and b differ.
Time separation(const Topology& t, int64_t a, int64_t b) {
  const std::vector<int64_t> x = t.coordinates(a), y = t.coordinates(b);
  for (size_t d = x.size(); d-- > 0;)
    if (x[d] != y[d]) return t[d].latency;
  return Time::zero();
}

// Every rank sends S to the next at once; the latency of the outermost dimension crossed.
std::vector<FlowStep> shift(const Topology& t, double s, std::span<const int64_t> members) {
  std::vector<Transfer> step;
  Time latency;
  for (size_t i = 0; i < members.size(); ++i) {
    const int64_t next = members[(i + 1) % members.size()];
    step.push_back({members[i], next, s});
    latency = std::max(latency, separation(t, members[i], next));
  }
  FlowStep out = merged(std::move(step));
  out.latency = latency;
  return {std::move(out)};
}

std::vector<size_t> spanned_dimensions(const Topology& t, std::span<const int64_t> members) {
  std::vector<size_t> dims;
  const std::vector<int64_t> first = t.coordinates(members.front());
  for (size_t d = 0; d < t.size(); ++d)
    for (const int64_t m : members)
      if (t.coordinates(m)[d] != first[d]) {
        dims.push_back(d);
        break;
      }
  return dims;
}

std::vector<FlowStep> hierarchical(const Topology& t, CollectiveKind kind, double s,
                                   std::span<const int64_t> members) {
  struct Level {
    std::vector<std::vector<int64_t>> rings;
    std::vector<int64_t> hops;  // span - 1 steps of dimension d
    double per_step;
  };
  std::vector<Level> levels;
  double share = s;
  for (const size_t d : spanned_dimensions(t, members)) {
    Level level{groups_outside(t, members, d), std::vector<int64_t>(t.size(), 0), 0};
    int64_t span = 0;
    for (const auto& r : level.rings)
      span = std::max<int64_t>(span, static_cast<int64_t>(r.size()));
    level.hops[d] = span - 1;
    level.per_step = share / static_cast<double>(span);
    share /= static_cast<double>(span);
    if (t[d].kind == DimensionKind::Ring) {
      add_reverse_rings(level.rings);
      level.per_step /= 2;
    }
    levels.push_back(std::move(level));
  }
  std::vector<FlowStep> out;
  const auto phase = [&](const Level& l) { ring_steps(t, l.rings, l.hops, 1, l.per_step, out); };
  if (kind != CollectiveKind::AllGather)
    for (const Level& l : levels)
      phase(l);
  if (kind != CollectiveKind::ReduceScatter)
    for (auto it = levels.rbegin(); it != levels.rend(); ++it)
      phase(*it);
  return out;
}

std::vector<FlowStep> halving_doubling(const Topology& t, CollectiveKind kind, double s,
                                       std::span<const int64_t> members) {
  const auto n = static_cast<int64_t>(members.size());
  std::vector<int64_t> bits;
  for (int64_t b = 1; b < n; b *= 2)
    bits.push_back(b);
  const auto exchange = [&](int64_t bit, double bytes) {
    std::vector<Transfer> step;
    for (int64_t i = 0; i < n; ++i)
      step.push_back(
          {members[static_cast<size_t>(i)], members[static_cast<size_t>(i ^ bit)], bytes});
    FlowStep out{std::move(step), 1, std::nullopt};
    out.latency = separation(t, members[0], members[static_cast<size_t>(bit)]);
    return out;
  };
  std::vector<FlowStep> out;
  if (kind != CollectiveKind::AllGather) {
    double bytes = s;
    for (const int64_t bit : bits)
      out.push_back(exchange(bit, bytes /= 2));
  }
  if (kind != CollectiveKind::ReduceScatter) {
    double bytes = s / static_cast<double>(n);
    for (auto it = bits.rbegin(); it != bits.rend(); ++it) {
      out.push_back(exchange(*it, bytes));
      bytes *= 2;
    }
  }
  return out;
}

std::vector<FlowStep> direct(const Topology& t, CollectiveKind kind, double s,
                             std::span<const int64_t> members) {
  const auto n = static_cast<double>(members.size());
  if (n * (n - 1) > static_cast<double>(kMaxCollectiveFlows)) throw_too_many_flows(n * (n - 1));
  std::vector<Transfer> step;
  const double per_peer = s / static_cast<double>(members.size());
  for (const int64_t a : members)
    for (const int64_t b : members)
      if (a != b) step.push_back({a, b, per_peer});
  FlowStep out{std::move(step), kind == CollectiveKind::AllReduce ? 2 : 1, std::nullopt};
  out.latency = peer_latency(t, shape_of(t, members));
  return {std::move(out)};
}

// Each GPU sends S (1 + 1/n) into the switch and receives as much, both at once (the reduction
// and the multicast of a pipelined NVLS all-reduce overlap), at nvls_efficiency of the port:
// the bytes are scaled so that links of efficiency x port carry them in the same time.
std::vector<FlowStep> nvls(const Topology& t, double s, std::span<const int64_t> members) {
  const Dimension& dim = t[spanned_dimensions(t, members).front()];
  const double leg =
      s * (1 + 1 / static_cast<double>(members.size())) * dim.efficiency / dim.nvls_efficiency;
  std::vector<Transfer> step;
  for (const int64_t m : members) {
    step.push_back({m, kIntoSwitch, leg});
    step.push_back({m, kOutOfSwitch, leg});
  }
  FlowStep out{std::move(step), 1, std::nullopt};
  out.latency = nvls_latency(t, shape_of(t, members));
  return {std::move(out)};
}

}  // namespace

bool decomposes(Algorithm algorithm) {
  return algorithm != Algorithm::Tree && algorithm != Algorithm::Auto;
}

std::vector<FlowStep> collective_steps(const Topology& t, Algorithm algorithm, CollectiveKind kind,
                                       Bytes bytes, std::span<const int64_t> members) {
  if (members.size() < 2) return {};
  const auto s = static_cast<double>(bytes);
  if (is_rooted(kind)) return chain(t, kind, bytes, members);
  if (kind == CollectiveKind::SendRecv) return shift(t, s, members);
  switch (algorithm) {
    case Algorithm::Ring:
      return ring(t, kind, s, members);
    case Algorithm::Hierarchical:
      return hierarchical(t, kind, s, members);
    case Algorithm::HalvingDoubling:
      return halving_doubling(t, kind, s, members);
    case Algorithm::Direct:
      return direct(t, kind, s, members);
    case Algorithm::Nvls:
      return nvls(t, s, members);
    case Algorithm::Tree:
    case Algorithm::Auto:
      break;
  }
  return ring(t, kind, s, members);
}

Algorithm flow_algorithm(const Topology& t, CollectiveKind kind, Bytes bytes,
                         const GroupShape& shape, Algorithm forced) {
  const Algorithm chosen = collective_cost(t, kind, bytes, shape, forced).algorithm;
  if (decomposes(chosen)) return chosen;
  // A stand-in for one without a decomposition (tree): the fastest that has one.
  std::optional<Time> best;
  Algorithm choice = kind == CollectiveKind::AllToAll ? Algorithm::Direct : Algorithm::Ring;
  for (const Algorithm a : all_algorithms()) {
    if (!decomposes(a)) continue;
    const auto time = algorithm_time(t, a, kind, bytes, shape);
    if (time && (!best || *time < *best)) {
      best = time;
      choice = a;
    }
  }
  return choice;
}

}  // namespace orrery

namespace orrery {

void check_flow_count(std::span<const FlowStep> steps) {
  double flows = 0;
  for (const FlowStep& s : steps)
    flows += static_cast<double>(s.transfers.size()) * static_cast<double>(s.repeat);
  if (flows > static_cast<double>(kMaxCollectiveFlows)) throw_too_many_flows(flows);
}

Time transfer_route(const Topology& t, const LinkGraph& links, const Transfer& x, uint64_t hash,
                    std::vector<LinkId>& path) {
  if (x.dst >= 0) return links.route(x.src, x.dst, hash, path);
  for (size_t d = 0; d < t.size(); ++d)
    if (t[d].nvls) {
      path.push_back(links.switch_port(d, x.src, x.dst == kIntoSwitch));
      return t[d].latency;
    }
  return Time::zero();
}

CollectiveFlowRun run_collective_flows(const Topology& t, CollectiveKind kind, Bytes bytes,
                                       std::span<const int64_t> members, const GroupShape& shape,
                                       Algorithm forced) {
  CollectiveFlowRun run;
  run.algorithm = flow_algorithm(t, kind, bytes, shape, forced);
  const int64_t gpus = *std::max_element(members.begin(), members.end()) + 1;
  const LinkGraph links(t, gpus);
  std::vector<double> capacity(links.link_count());
  for (LinkId l = 0; l < links.link_count(); ++l)
    capacity[l] = links.capacity(l);
  FlowNetwork network(std::move(capacity));
  std::vector<FlowNetwork::FlowId> done;
  Time now;
  uint64_t hash = 0;
  std::vector<std::vector<LinkId>> paths;
  const std::vector<FlowStep> steps = collective_steps(t, run.algorithm, kind, bytes, members);
  check_flow_count(steps);
  for (const FlowStep& step : steps) {
    Time latency;
    paths.assign(step.transfers.size(), {});
    for (size_t i = 0; i < step.transfers.size(); ++i)
      latency = std::max(latency, transfer_route(t, links, step.transfers[i], hash++, paths[i]));
    if (step.latency) latency = *step.latency;
    for (int64_t r = 0; r < step.repeat; ++r) {
      for (size_t i = 0; i < step.transfers.size(); ++i)
        network.start(paths[i], step.transfers[i].bytes, now);
      run.flows += step.transfers.size();
      for (Time next = network.next_completion(); next != Time::max();
           next = network.next_completion()) {
        now = next;
        done.clear();
        network.complete(now, done);
      }
      now += latency;
    }
  }
  run.time = now;
  return run;
}

}  // namespace orrery
