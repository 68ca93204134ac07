#include "network/collective_model.h"

#include <algorithm>
#include <limits>

#include "engine/kernel.h"
#include "network/collective_runs.h"
#include "network/leaf_loads.h"
#include "network/local_reduction.h"
#include "network/p2p_protocol.h"

namespace orrery {
namespace {

// Broadcast and reduce run a chain whatever the algorithm, sendrecv a shift (collective_pattern).
Algorithm pattern_of(Algorithm algorithm, CollectiveKind kind) {
  if (is_rooted(kind)) return Algorithm::Ring;
  if (kind == CollectiveKind::SendRecv) return Algorithm::Direct;
  return algorithm;
}

int64_t repeats(const auto& step) {
  int64_t count = 0;
  for (const auto& r : step.runs)
    count += r.count;
  return count;
}

// Adds a transfer's units to `load` and returns its route's latency.
Time add_transfer(const LinkGraph& links, const Transfer& x, std::vector<double>& load) {
  if (x.dst >= 0) return links.add_route_load(x.src, x.dst, x.bytes, x.mirror, load);
  const Topology& t = links.topology();
  for (size_t d = 0; d < t.size(); ++d)
    if (t[d].nvls) {
      load[links.switch_port(d, x.src, x.dst == kIntoSwitch)] += x.bytes;
      return t[d].latency;
    }
  return Time::zero();
}

// A ring's reduce-scatter and all-gather route the same transfers step for step, and its
// all-reduce runs them twice (collective_pattern): the three share the all-gather's routing.
bool shares_ring_routing(Algorithm a, CollectiveKind kind) {
  return a == Algorithm::Ring &&
         (kind == CollectiveKind::AllReduce || kind == CollectiveKind::ReduceScatter);
}

}  // namespace

CollectiveModel::CollectiveModel(const LinkGraph& links, std::vector<std::vector<int64_t>> groups)
    : CollectiveModel(links, listed_kind(links.topology(), std::move(groups))) {}

CollectiveModel::CollectiveModel(const LinkGraph& links, GroupKind kind)
    : links_(links), kind_(std::move(kind)) {
  shape_ = kind_.compact ? kind_.shape : shape_of(links_.topology(), kind_.groups.front());
  rendezvous_ = collective_rendezvous_latency(links_.topology(), shape_);
  if (!kind_.compact) return;
  const int64_t g = kind_.server_gpus;
  local_.emplace(links_.topology(), static_cast<int64_t>(kind_.servers.size()) * g);
  for (const auto& group : kind_.groups) {
    // Members in GPU order (as kinds list them) meet the ascending servers in order.
    std::vector<int64_t> local(group.size());
    auto server = kind_.servers.begin();
    for (size_t i = 0; i < group.size(); ++i) {
      if (i > 0 && group[i] < group[i - 1]) server = kind_.servers.begin();
      server = std::lower_bound(server, kind_.servers.end(), group[i] / g);
      local[i] = (server - kind_.servers.begin()) * g + group[i] % g;
    }
    local_groups_.push_back(std::move(local));
  }
}

CollectiveModel::Step CollectiveModel::evaluate(const LinkGraph& graph,
                                                const std::vector<double>& load, double leaf_load,
                                                const FlowStep& step, Time route_latency) const {
  Step s;
  const size_t outer = topology().size() - 1;
  for (size_t d = 0; d < topology().size(); ++d) {
    // A compact kind's own graph holds the links inside its servers and their NICs; the leaf-spine
    // links' load comes from every cluster (leaf_load).
    s.per_dimension.push_back(local_ && d == outer
                                  ? std::max(graph.busiest_in_servers(load, d), leaf_load)
                                  : graph.busiest(load, d));
    s.seconds_per_unit = std::max(s.seconds_per_unit, s.per_dimension.back());
  }
  s.scale = step.scale;
  s.base = step.base;
  for (const StepRun& r : step.runs)
    s.runs.push_back({r.count, r.latency.value_or(route_latency), r.network});
  return s;
}

CollectiveModel::GroupPatterns CollectiveModel::group_patterns(
    Algorithm a, CollectiveKind kind, const std::vector<std::vector<int64_t>>& groups) const {
  GroupPatterns out;
  out.source.resize(groups.size());
  out.moved.assign(groups.size(), 0);
  const bool ring = local_ && a == Algorithm::Ring && !is_rooted(kind);
  const int64_t server_gpus = kind_.server_gpus;
  // Rings: each group moved back to start on server 0, and (its pattern, how far it was moved).
  std::map<std::vector<int64_t>, std::pair<size_t, int64_t>> seen;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (ring) {
      const int64_t moved = groups[g].front() / server_gpus * server_gpus;
      std::vector<int64_t> at_start = groups[g];
      for (int64_t& m : at_start)
        m -= moved;
      const auto [it, fresh] = seen.try_emplace(std::move(at_start), out.patterns.size(), moved);
      if (!fresh) {
        out.source[g] = it->second.first;
        out.moved[g] = moved - it->second.second;
        continue;
      }
    }
    out.source[g] = out.patterns.size();
    out.patterns.push_back(collective_pattern(topology(), a, kind, groups[g]));
  }
  return out;
}

std::vector<CollectiveModel::Step> CollectiveModel::build(Algorithm a, CollectiveKind kind) const {
  const Topology& t = topology();
  const LinkGraph& graph = local_ ? *local_ : links_;
  const std::vector<std::vector<int64_t>>& groups = local_ ? local_groups_ : kind_.groups;
  std::optional<LeafLoads> leaves;
  if (local_) leaves.emplace(links_, kind_);
  const bool leafy = leaves && leaves->active();
  const auto leaf_load = [&] { return leafy ? leaves->busiest() : 0.0; };
  std::vector<double> load(graph.link_count(), 0.0);
  std::vector<Step> steps;
  if (a == Algorithm::Direct && kind != CollectiveKind::SendRecv) {
    // Every pair of every group at once, S/n each: counted per dimension line, not pair by pair,
    // so the loads carry each group's share and the frame's scale is the message itself.
    std::vector<FlowStep> frame = {direct_exchange_frame(t, kind, groups.front())};
    frame.front().scale = {};
    append_base_latency(t, shape_of(t, groups.front()), frame);
    for (size_t i = 0; i < groups.size(); ++i) {
      const double share = 1.0 / static_cast<double>(groups[i].size());
      graph.add_all_pairs_load(groups[i], share, load);
      if (leafy) leaves->add_all_pairs(kind_.groups[i], share);
      routed_ += static_cast<int64_t>(groups[i].size());
    }
    for (const FlowStep& step : frame) {
      steps.push_back(evaluate(graph, load, leaf_load(), step, Time::zero()));
      std::fill(load.begin(), load.end(), 0.0);
      if (leafy) leaves->clear();
    }
    return steps;
  }
  const GroupPatterns patterns = group_patterns(a, kind, groups);
  const size_t outer = t.size() - 1;
  const int64_t server_gpus = kind_.server_gpus;
  for (size_t i = 0; i < patterns.of(0).size(); ++i) {
    std::fill(load.begin(), load.end(), 0.0);
    if (leafy) leaves->clear();
    Time latency;  // of the first group's routes, as the flow mode charges a step without one
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<FlowStep>& pattern = patterns.of(g);
      if (i >= pattern.size()) continue;  // groups not alike: align their steps by index
      for (Transfer x : pattern[i].transfers) {
        x.src += patterns.moved[g];
        x.dst += patterns.moved[g];  // only rings move, and their transfers are between GPUs
        const Time l = add_transfer(graph, x, load);
        if (g == 0) latency = std::max(latency, l);
        if (leafy && x.dst >= 0) {
          // On the whole network: the servers the two GPUs stand for, crossing on the rail of
          // the GPU the route reaches the fat-tree from: the destination's position (a mirrored
          // transfer, routed from its destination, the source's).
          const int64_t rail = t.rail_of(outer, (x.mirror ? x.src : x.dst) % server_gpus);
          leaves->add(kind_.servers[static_cast<size_t>(x.src / server_gpus)],
                      kind_.servers[static_cast<size_t>(x.dst / server_gpus)], rail, x.bytes);
        }
      }
      routed_ += static_cast<int64_t>(pattern[i].transfers.size());
    }
    steps.push_back(evaluate(graph, load, leaf_load(), patterns.of(0)[i], latency));
  }
  return steps;
}

const std::vector<CollectiveModel::Step>& CollectiveModel::profile(Algorithm a,
                                                                   CollectiveKind kind) const {
  const auto key = std::make_pair(a, kind);
  if (const auto it = profiles_.find(key); it != profiles_.end()) return it->second;
  if (!shares_ring_routing(a, kind)) return profiles_.emplace(key, build(a, kind)).first->second;
  std::vector<Step> steps = profile(Algorithm::Ring, CollectiveKind::AllGather);
  if (kind == CollectiveKind::AllReduce)
    for (Step& step : steps)
      if (!step.base)
        for (StepRun& r : step.runs)
          r.count *= 2;
  return profiles_.emplace(key, std::move(steps)).first->second;
}

const CollectiveModel::Totals& CollectiveModel::totals(Algorithm a, CollectiveKind kind) const {
  const auto key = std::make_pair(a, kind);
  if (const auto it = totals_.find(key); it != totals_.end()) return it->second;
  Totals sum;
  const auto add = [&sum](double seconds_per_unit, const Step& step) {
    const double c = seconds_per_unit * step.scale.share * static_cast<double>(repeats(step));
    sum.per_byte += c;
    sum.per_chunk_byte += c * static_cast<double>(step.scale.fill);
  };
  if (a == Algorithm::Tree) {
    // The ring's steps at kTreeEfficiency, the outermost dimension's term halved on two of its
    // positions (a tree sends each byte across the network once where a ring sends it twice).
    const int out = shape_.outermost();
    for (const Step& step : profile(Algorithm::Ring, CollectiveKind::AllReduce)) {
      double worst = 0;
      for (size_t d = 0; d < step.per_dimension.size(); ++d) {
        const bool halved = static_cast<int>(d) == out && shape_.span[d] == 2;
        worst = std::max(worst, step.per_dimension[d] * (halved ? 0.5 : 1.0));
      }
      add(worst / kTreeEfficiency, step);
    }
  } else if (a != Algorithm::NvlsTree) {
    for (const Step& step : profile(pattern_of(a, kind), kind))
      add(step.seconds_per_unit, step);
    for (const Protocol p : all_protocols()) {
      const ProtocolTerms& terms_p = terms(p);
      Time& total = sum.latency[static_cast<size_t>(p)];
      for (const Step& step : profile(pattern_of(a, kind), kind))
        for (const StepRun& r : step.runs)
          total += r.latency->scaled(step.base   ? terms_p.base_scale
                                     : r.network ? terms_p.network_hop_scale
                                                 : terms_p.hop_scale) *
                   r.count;
    }
  }
  return totals_.emplace(key, sum).first->second;
}

double CollectiveModel::transfer_seconds(Algorithm a, CollectiveKind kind, double s) const {
  if (a == Algorithm::NvlsTree) return s * nvls_tree_seconds_per_byte();
  const Totals& t = totals(a, kind);
  return t.per_byte * s + t.per_chunk_byte * std::min(s, static_cast<double>(kPipelineChunk));
}

double CollectiveModel::nvls_tree_seconds_per_byte() const {
  const Topology& t = topology();
  const auto outer = static_cast<size_t>(shape_.outermost());
  size_t inner = 0;
  while (shape_.span[inner] < 2)
    ++inner;
  const auto g = static_cast<double>(shape_.span[inner]);
  const double in_switch =
      (1 + 1 / g) / (t[inner].link_bandwidth.in_bytes_per_second() * t[inner].nvls_efficiency);
  const double tree_load = shape_.span[outer] > 2 ? 2.0 : 1.0;
  const double across =
      tree_load / g / t.step_bandwidth(outer, shape_.crosses_leaves).in_bytes_per_second();
  return std::max(in_switch, across);
}

std::optional<Bandwidth> CollectiveModel::ll_cap() const {
  if (!across_servers()) return std::nullopt;
  const auto out = static_cast<size_t>(shape_.outermost());
  const Dimension& network = topology()[out];
  return shape_.span[out] == 2 ? network.ll_busbw_two_servers : network.ll_busbw_more_servers;
}

bool CollectiveModel::across_servers() const {
  const int out = shape_.outermost();
  return out >= 0 && is_network(topology(), static_cast<size_t>(out));
}

bool CollectiveModel::point_to_point(Algorithm a, CollectiveKind kind) const {
  // An all-to-all inside one NVSwitch domain, a sendrecv there or across servers. NCCL's
  // all-to-all across servers (its network chunks and channels spread over many peers) and any
  // transfer over a ring or mesh (a torus axis, an xGMI mesh: not NVLink through a switch) are not
  // modelled: there the collective protocols price it.
  const bool all_to_all = a == Algorithm::Direct && kind == CollectiveKind::AllToAll;
  if (!(all_to_all || kind == CollectiveKind::SendRecv) || topology().ideal_links()) return false;
  for (size_t d = 0; d < shape_.span.size(); ++d) {
    if (shape_.span[d] <= 1) continue;
    const DimensionKind k = topology()[d].kind;
    if (k != DimensionKind::Switch && (all_to_all || k != DimensionKind::FatTree)) return false;
  }
  return true;
}

P2pPath CollectiveModel::p2p_path_of(Algorithm a) const {
  return p2p_path(max_channels(a), shape_.ranks, across_servers());
}

double CollectiveModel::ramp_scale() const {
  return across_servers()
             ? kNetworkRampPerServer *
                   static_cast<double>(shape_.span[static_cast<size_t>(shape_.outermost())])
             : 1.0;
}

double CollectiveModel::protocol_rate(Algorithm a, CollectiveKind kind, double s, Protocol p,
                                      double link_seconds) const {
  if (topology().ideal_links()) return 1.0;
  // Across k servers the collectives' ramp sizes are kNetworkRampPerServer x k times larger
  // (protocol.h): each of their network steps moves 1/k of a step inside one server. The
  // algorithms auto compares share the protocol's factor for one size: computed once.
  if (point_to_point(a, kind)) return p2p_rate(kind, s, p, link_seconds);
  auto& [cached_bytes, cached_scale] = transfer_scales_[static_cast<size_t>(p)];
  if (cached_bytes != s) {
    cached_bytes = s;
    cached_scale = transfer_scale(p, s / ramp_scale());
  }
  double rate = cached_scale;
  if (a == Algorithm::Tree) rate /= tree_size_efficiency(p, s);
  const std::optional<Bandwidth> cap = p == Protocol::LL ? ll_cap() : std::nullopt;
  if (cap && link_seconds > 0)
    rate = std::max(rate,
                    bus_factor(kind, shape_.ranks) * s / cap->in_bytes_per_second() / link_seconds);
  return rate;
}

double CollectiveModel::p2p_rate(CollectiveKind kind, double s, Protocol p,
                                 double link_seconds) const {
  // Inside a server Simple ramps to its own size; across servers a Simple transfer moves the whole
  // message over its one network hop, bounded by the proxy's chunks instead (p2p_protocol.h), and
  // LL keeps the network's LL cap.
  if (!across_servers()) return p2p_transfer_scale(p, s);
  double rate = p == Protocol::Simple ? 1.0 : transfer_scale(p, s);
  const P2pPath path = p2p_path_of(Algorithm::Direct);
  const double peer = kind == CollectiveKind::SendRecv ? s : s / static_cast<double>(path.ranks);
  if (link_seconds <= 0) return rate;
  if (p == Protocol::Simple)
    rate = std::max(
        rate, p2p_proxy_seconds(peer, p2p_channels_per_peer(p, peer, path), path) / link_seconds);
  if (const std::optional<Bandwidth> cap = ll_cap(); cap && p == Protocol::LL)
    rate = std::max(rate,
                    bus_factor(kind, shape_.ranks) * s / cap->in_bytes_per_second() / link_seconds);
  return rate;
}

double CollectiveModel::latency_factor(Algorithm a, CollectiveKind kind, Protocol p) const {
  if (point_to_point(a, kind) && p == Protocol::Simple) return kP2pSimpleLatency;
  return a == Algorithm::Ring && kind == CollectiveKind::AllReduce && p == Protocol::Simple &&
                 across_servers() && !topology().ideal_links()
             ? kMultiServerRingSimpleLatency
             : 1.0;
}

Time CollectiveModel::latency_with(Algorithm a, CollectiveKind kind, Protocol p) const {
  const Topology& t = topology();
  const ProtocolTerms& terms_p = terms(p);
  // The network's rendezvous (rendezvous_) is paid once per call, whatever the algorithm and the
  // protocol.
  const Time base = collective_base_latency(t, shape_).scaled(terms_p.base_scale);
  if (a == Algorithm::NvlsTree) return rendezvous_ + base + nvls_tree_latency(t, shape_);
  if (a == Algorithm::Tree) {
    // The hops across the outermost dimension at the protocol's tree scale, the chains inside at
    // their hop scale.
    const Time across = tree_outer_latency(t, shape_);
    const int out = shape_.outermost();
    const bool network = out >= 0 && is_network(t, static_cast<size_t>(out));
    return rendezvous_ + base +
           across.scaled(network ? terms_p.tree_network_hop_scale : terms_p.hop_scale) +
           (tree_latency(t, shape_) - across).scaled(terms_p.hop_scale);
  }
  const Time total = totals(a, kind).latency[static_cast<size_t>(p)];
  return rendezvous_ + total.scaled(latency_factor(a, kind, p));
}

Time CollectiveModel::time_with(Algorithm a, CollectiveKind kind, double s, Protocol p) const {
  const Topology& t = topology();
  const Time own =
      (t.ideal_links() ? Time::zero() : own_shard_time(kind, s, shape_.ranks, t.gpu_memory())) +
      local_reduction_time(kind, s, shape_.ranks, t.reduction_memory());
  const double link_seconds = transfer_seconds(a, kind, s);
  return own + Time::from_seconds(link_seconds * protocol_rate(a, kind, s, p, link_seconds)) +
         latency_with(a, kind, p);
}

int64_t CollectiveModel::max_channels(Algorithm a) const {
  for (size_t d = 0; d < shape_.span.size(); ++d)
    if (shape_.span[d] > 1)
      return a == Algorithm::Nvls || a == Algorithm::NvlsTree ? topology()[d].nvls_channels
                                                              : topology()[d].channels;
  return 1;
}

std::optional<CollectiveCost> CollectiveModel::price(Algorithm a, CollectiveKind kind,
                                                     Bytes bytes) const {
  if (shape_.ranks <= 1) return CollectiveCost{Time::zero(), a, Protocol::Simple, 0};
  if (a == Algorithm::Auto || !can_run(topology(), a, kind, shape_)) return std::nullopt;
  const auto s = static_cast<double>(bytes);
  if (point_to_point(a, kind)) {
    // NCCL's point-to-point path sets the protocol and the channels by its own rules: an
    // all-to-all sends S / n to each peer, a sendrecv S to one.
    const P2pPath path = p2p_path_of(a);
    if (kind == CollectiveKind::SendRecv) {
      const Protocol p = p2p_protocol(s, path);
      return CollectiveCost{time_with(a, kind, s, p), a, p, p2p_channels_per_peer(p, s, path)};
    }
    const Protocol p = p2p_protocol(s / static_cast<double>(shape_.ranks), path);
    return CollectiveCost{time_with(a, kind, s, p), a, p, p2p_channels_used(p, s, path)};
  }
  std::optional<CollectiveCost> best;
  for (const Protocol p : all_protocols()) {
    // NVLS runs Simple only; ideal links have one protocol.
    const bool simple_only =
        a == Algorithm::Nvls || a == Algorithm::NvlsTree || topology().ideal_links();
    if (simple_only && p != Protocol::Simple) continue;
    const Time t = time_with(a, kind, s, p);
    if (!best || t < best->time) best = CollectiveCost{t, a, p, 0};
  }
  best->channels = channels_used(best->protocol, s, max_channels(a));
  return best;
}

std::optional<Time> CollectiveModel::time(Algorithm a, CollectiveKind kind, Bytes bytes) const {
  const auto c = price(a, kind, bytes);
  return c ? std::optional<Time>(c->time) : std::nullopt;
}

CollectiveCost CollectiveModel::cost(CollectiveKind kind, Bytes bytes, Algorithm a) const {
  if (a != Algorithm::Auto)
    if (const auto c = price(a, kind, bytes)) return *c;
  CollectiveCost best{Time::max(), Algorithm::Ring};
  for (const Algorithm c : auto_candidates(topology(), kind))
    if (const auto p = price(c, kind, bytes); p && p->time < best.time) best = *p;
  return best;
}

Algorithm CollectiveModel::flow_algorithm(CollectiveKind kind, Bytes bytes,
                                          Algorithm forced) const {
  const Algorithm chosen = cost(kind, bytes, forced).algorithm;
  if (decomposes(chosen)) return chosen;
  std::optional<Time> best;
  Algorithm choice = kind == CollectiveKind::AllToAll ? Algorithm::Direct : Algorithm::Ring;
  for (const Algorithm a : all_algorithms()) {
    if (!decomposes(a)) continue;
    const auto t = time(a, kind, bytes);
    if (t && (!best || *t < *best)) {
      best = t;
      choice = a;
    }
  }
  return choice;
}

TransferCost point_to_point_cost(const CollectiveModel& pair, Bytes bytes) {
  const Topology& t = pair.topology();
  if (t.ideal_links() || pair.shape().ranks <= 1)
    return {point_to_point_time(t, bytes, pair.shape()), 1, std::nullopt};
  const CollectiveCost c = pair.cost(CollectiveKind::SendRecv, bytes, Algorithm::Direct);
  const auto s = static_cast<double>(bytes);
  const double link = pair.transfer_seconds(Algorithm::Direct, CollectiveKind::SendRecv, s);
  const double rate =
      pair.protocol_rate(Algorithm::Direct, CollectiveKind::SendRecv, s, c.protocol, link);
  return {c.time, rate, c.time - Time::from_seconds(link * rate)};
}

CollectiveFlowPlan flow_plan(const CollectiveModel& model, CollectiveKind kind, Bytes bytes,
                             Algorithm forced, std::span<const int64_t> members) {
  CollectiveFlowPlan plan;
  plan.algorithm = model.flow_algorithm(kind, bytes, forced);
  const auto priced = model.price(plan.algorithm, kind, bytes);
  plan.protocol = priced ? priced->protocol : Protocol::Simple;
  const ProtocolTerms& protocol = terms(plan.protocol);
  const auto s = static_cast<double>(bytes);
  const Topology& t = model.topology();
  const double rate = model.protocol_rate(plan.algorithm, kind, s, plan.protocol,
                                          model.transfer_seconds(plan.algorithm, kind, s));
  const double latency_factor = model.latency_factor(plan.algorithm, kind, plan.protocol);
  plan.steps = collective_steps(t, plan.algorithm, kind, bytes, members);
  check_flow_count(plan.steps);
  for (FlowStep& step : plan.steps) {
    for (Transfer& x : step.transfers)
      x.bytes *= rate;  // the protocol's rate, as a larger load on the same links
    for (StepRun& r : step.runs)
      r.latency_scale = latency_factor * (step.base   ? protocol.base_scale
                                          : r.network ? protocol.network_hop_scale
                                                      : protocol.hop_scale);
  }
  const auto n = static_cast<int64_t>(members.size());
  const Time own = (t.ideal_links() ? Time::zero() : own_shard_time(kind, s, n, t.gpu_memory())) +
                   local_reduction_time(kind, s, n, t.reduction_memory());
  if (own > Time::zero()) {
    FlowStep copy;
    copy.runs = {{1, own}};
    plan.steps.push_back(std::move(copy));
  }
  return plan;
}

CollectiveFlowRun run_collective_flows(const CollectiveModel& model, CollectiveKind kind,
                                       Bytes bytes, Algorithm forced) {
  CollectiveFlowRun run;
  const CollectiveFlowPlan plan = flow_plan(model, kind, bytes, forced, model.members());
  run.algorithm = plan.algorithm;
  run.protocol = plan.protocol;
  const LinkGraph& links = model.links();
  engine::Kernel kernel(links.capacities());
  uint64_t hash = 0;
  const std::vector<RoutedStep> steps = route_steps(model.topology(), links, plan.steps, hash);
  // Its events are kinds 0 and 1. One collective is held to the budget by its estimate
  // (check_flow_count in flow_plan), which counts its own sharing: no stop on the way.
  CollectiveRuns<int> collective(
      kernel, 0, [](int) {}, std::numeric_limits<uint64_t>::max());
  collective.launch(steps, 0);
  kernel.run([&](const engine::Event& e) { collective.handle(e); });
  run.flows = flow_count(steps);
  run.time = kernel.now();
  return run;
}

}  // namespace orrery
