#include "network/collective_flows.h"

#include <algorithm>
#include <map>

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
std::vector<std::vector<int64_t>> groups_outside(const Topology& t,
                                                 std::span<const int64_t> members, size_t d);

// Steps of ring reduce-scatter or all-gather (`steps` of them) over each ring in `rings`, each
// ring moving `per_step` bytes per rank per step.
void ring_steps(const std::vector<std::vector<int64_t>>& rings, int64_t steps, double per_step,
                std::vector<FlowStep>& out) {
  if (steps < 1) return;
  std::vector<Transfer> step;
  for (const auto& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    for (size_t i = 0; i < n; ++i)
      step.push_back({ring[i], ring[(i + 1) % n], per_step});
  }
  out.push_back(merged(std::move(step), steps));
}

int steps_of(CollectiveKind kind, int64_t n) {
  return static_cast<int>(kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1);
}

// NCCL-like channels over `members`: c rings, c = the NICs a server's members can use when the
// group spans servers (1 inside one), each visiting a server's members rotated so that it crosses
// to the next server between GPUs of one rail.
std::vector<std::vector<int64_t>> channel_rings(const Topology& t,
                                                std::span<const int64_t> members) {
  // Blocks: members sharing every coordinate but the innermost (one switch domain each).
  const auto blocks = groups_outside(t, members, 0);
  int64_t channels = 1;
  if (blocks.size() > 1) {
    int64_t per_block = 0;
    for (const auto& b : blocks)
      per_block = std::max<int64_t>(per_block, static_cast<int64_t>(b.size()));
    int64_t rails = per_block;
    for (size_t d = 1; d < t.size(); ++d)
      if (t[d].kind == DimensionKind::FatTree) {
        rails = t[d].rails;
        break;
      }
    channels = std::max<int64_t>(1, std::min(per_block, rails));
  }
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
  ring_steps(rings, steps_of(kind, n), per_step, out);
  return out;
}

// Broadcast (from members[0]) and reduce (to it) as a pipelined chain along each channel's ring
// started at the root: C chunks, step t moves chunk t - i from chain position i to i + 1.
std::vector<FlowStep> chain(const Topology& t, CollectiveKind kind, Bytes bytes,
                            std::span<const int64_t> members) {
  const auto n = static_cast<int64_t>(members.size());
  std::vector<std::vector<int64_t>> chains = channel_rings(t, members);
  for (auto& c : chains) {
    std::rotate(c.begin(), std::find(c.begin(), c.end(), members.front()), c.end());
    if (kind == CollectiveKind::Reduce) std::reverse(c.begin(), c.end());  // ends at the root
  }
  const int64_t chunks = pipeline_chunks(bytes);
  const double per_chunk = static_cast<double>(bytes) /
                           static_cast<double>(chunks * static_cast<int64_t>(chains.size()));
  std::vector<FlowStep> out;
  for (int64_t step = 0; step < chunks + n - 2; ++step) {
    std::vector<Transfer> transfers;
    for (const auto& c : chains)
      for (int64_t i = 0; i + 1 < n; ++i)
        if (step - i >= 0 && step - i < chunks)
          transfers.push_back(
              {c[static_cast<size_t>(i)], c[static_cast<size_t>(i + 1)], per_chunk});
    FlowStep next = merged(std::move(transfers));
    const auto same = [&](const FlowStep& a) {
      if (a.transfers.size() != next.transfers.size()) return false;
      for (size_t k = 0; k < a.transfers.size(); ++k)
        if (a.transfers[k].src != next.transfers[k].src ||
            a.transfers[k].dst != next.transfers[k].dst ||
            a.transfers[k].bytes != next.transfers[k].bytes)
          return false;
      return true;
    };
    if (!out.empty() && same(out.back()))
      ++out.back().repeat;
    else
      out.push_back(std::move(next));
  }
  return out;
}

std::vector<FlowStep> shift(double s, std::span<const int64_t> members) {
  std::vector<Transfer> step;
  for (size_t i = 0; i < members.size(); ++i)
    step.push_back({members[i], members[(i + 1) % members.size()], s});
  return {FlowStep{std::move(step), 1}};
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
    int64_t span;
    double share;
    int directions;
  };
  std::vector<Level> levels;
  double share = s;
  for (const size_t d : spanned_dimensions(t, members)) {
    Level level{groups_outside(t, members, d), 0, share, 1};
    for (const auto& r : level.rings)
      level.span = std::max<int64_t>(level.span, static_cast<int64_t>(r.size()));
    share /= static_cast<double>(level.span);
    if (t[d].kind == DimensionKind::Ring) {
      add_reverse_rings(level.rings);
      level.directions = 2;
    }
    levels.push_back(std::move(level));
  }
  std::vector<FlowStep> out;
  const auto phase = [&](const Level& l) {
    ring_steps(l.rings, l.span - 1, l.share / static_cast<double>(l.span * l.directions), out);
  };
  if (kind != CollectiveKind::AllGather)
    for (const Level& l : levels)
      phase(l);
  if (kind != CollectiveKind::ReduceScatter)
    for (auto it = levels.rbegin(); it != levels.rend(); ++it)
      phase(*it);
  return out;
}

std::vector<FlowStep> halving_doubling(CollectiveKind kind, double s,
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
    return FlowStep{std::move(step), 1};
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

std::vector<FlowStep> direct(CollectiveKind kind, double s, std::span<const int64_t> members) {
  std::vector<Transfer> step;
  const double per_peer = s / static_cast<double>(members.size());
  for (const int64_t a : members)
    for (const int64_t b : members)
      if (a != b) step.push_back({a, b, per_peer});
  return {FlowStep{std::move(step), kind == CollectiveKind::AllReduce ? 2 : 1}};
}

std::vector<FlowStep> nvls(const Topology& t, double s, std::span<const int64_t> members) {
  const Dimension& dim = t[spanned_dimensions(t, members).front()];
  const double leg = s / 2 * dim.efficiency / dim.nvls_efficiency;
  std::vector<Transfer> step;
  for (const int64_t m : members) {
    step.push_back({m, kIntoSwitch, leg});
    step.push_back({m, kOutOfSwitch, leg});
  }
  return {FlowStep{std::move(step), 2}};
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
  if (kind == CollectiveKind::SendRecv) return shift(s, members);
  switch (algorithm) {
    case Algorithm::Ring:
      return ring(t, kind, s, members);
    case Algorithm::Hierarchical:
      return hierarchical(t, kind, s, members);
    case Algorithm::HalvingDoubling:
      return halving_doubling(kind, s, members);
    case Algorithm::Direct:
      return direct(kind, s, members);
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
  if (decomposes(forced) && algorithm_time(t, forced, kind, bytes, shape)) return forced;
  std::optional<Time> best;
  Algorithm choice = kind == CollectiveKind::AllToAll ? Algorithm::Direct : Algorithm::Ring;
  for (const Algorithm a : auto_candidates(t, kind)) {
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
  for (const FlowStep& step : collective_steps(t, run.algorithm, kind, bytes, members)) {
    Time latency;
    paths.assign(step.transfers.size(), {});
    for (size_t i = 0; i < step.transfers.size(); ++i)
      latency = std::max(latency, transfer_route(t, links, step.transfers[i], hash++, paths[i]));
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
