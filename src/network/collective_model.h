// The analytical cost of collectives: each algorithm's decomposition into steps
// (collective_pattern(), the one the flow mode runs) on the group's actual GPUs, every step
// taking the time its busiest link needs for the step's bytes (load / capacity, a leaf's traffic
// to the spines shared evenly by all spines), plus the step's latency, plus the collective's base
// latency. So the cost follows how a group lies on the network: a ring on part of a torus ring
// routes its wrap-around back over the segment, members several hops apart share links, partly
// filled torus or mesh positions and uneven rails load some links more than others.
//
// Groups given together run at once, step for step (a job's data-parallel groups, all of its
// tensor-parallel groups): their transfers add up on the links they share. A compact kind of
// groups (group_kind.h) is priced on a link graph of its representative cluster's servers alone,
// whose links inside servers and NICs carry what every cluster's carry, with the leaf-spine load
// of all clusters added up in closed form per pod (leaf_loads.h): the same times as listing every
// group, at the cost of one cluster. On a network where
// nothing else contends, the flow mode takes these times (to a picosecond per step), except where
// ECMP hashes flows of one step onto the same spine (docs/network.md).
//
// Every time is priced with each protocol the algorithm can run (network/protocol.h: NVLS runs
// Simple only) and the fastest is taken, as NCCL's tuner takes the fastest (algorithm, protocol).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"
#include "network/collective_algorithms.h"
#include "network/collective_flows.h"
#include "network/group_kind.h"
#include "network/link_graph.h"
#include "network/p2p_protocol.h"
#include "network/rank_placement.h"

namespace orrery {

class CollectiveModel {
 public:
  // `groups`: communicators of one kind (GPU ids in rank order each) that run at once; the first
  // one's shape decides which algorithms can run, and its steps' latencies are charged.
  CollectiveModel(const LinkGraph& links, std::vector<std::vector<int64_t>> groups);
  // The groups of one kind, compact or listed; `links` is the job's whole network.
  CollectiveModel(const LinkGraph& links, GroupKind kind);

  const Topology& topology() const { return links_.topology(); }
  const LinkGraph& links() const { return links_; }
  const GroupShape& shape() const { return shape_; }
  const std::vector<int64_t>& members() const { return kind_.groups.front(); }

  // Transfers routed into link loads so far (each all-pairs exchange counts its members): the
  // work of pricing, which follows one cluster of a compact kind, not the number of its groups.
  int64_t routed() const { return routed_; }

  // Time of `algorithm` (not Auto), or nullopt where it cannot run this collective on the group.
  std::optional<Time> time(Algorithm algorithm, CollectiveKind kind, Bytes bytes) const;
  // The same with the protocol that gives it and the channels that protocol runs on.
  std::optional<CollectiveCost> price(Algorithm algorithm, CollectiveKind kind, Bytes bytes) const;
  // With `algorithm`, or the fastest of auto_candidates() for Auto. A forced algorithm that cannot
  // run falls back to the fastest one (the returned algorithm says which).
  CollectiveCost cost(CollectiveKind kind, Bytes bytes,
                      Algorithm algorithm = Algorithm::Auto) const;
  // What the flow mode runs: cost()'s choice where it decomposes, else (tree) the algorithm with
  // the fastest time that decomposes, whether or not auto would use it.
  Algorithm flow_algorithm(CollectiveKind kind, Bytes bytes, Algorithm forced) const;

  // The parts of a time (time() = own-shard copy + local reduction (local_reduction.h) +
  // transfer_seconds x protocol_rate + latency):
  // the transfers at the links' full rate, with no protocol and no latency;
  double transfer_seconds(Algorithm algorithm, CollectiveKind kind, double bytes) const;
  // the factor the protocol puts on them: its ramp and payload fraction (protocol.h), NCCL's
  // mid-size dip of a tree, and across servers the LL bus bandwidth cap of the network
  // (Dimension::ll_busbw_*), given the transfer seconds;
  double protocol_rate(Algorithm algorithm, CollectiveKind kind, double bytes, Protocol protocol,
                       double link_seconds) const;
  // the factor on every latency of the steps (NCCL's multi-server ring plateau, protocol.h; a
  // Simple point-to-point transfer's single handshake, p2p_protocol.h).
  double latency_factor(Algorithm algorithm, CollectiveKind kind, Protocol protocol) const;

 private:
  struct Step {
    double seconds_per_unit = 0;        // the busiest link's load / capacity
    std::vector<double> per_dimension;  // the same among each dimension's links
    StepScale scale;
    std::vector<StepRun> runs;  // latencies resolved
    bool base = false;          // the call's base latency
  };
  // A profile added up, so that pricing a size does not walk its steps: transfer seconds =
  // per_byte S + per_chunk_byte min(S, kPipelineChunk) (StepScale), and the steps' latencies with
  // each protocol's scales (indexed by Protocol), summed step by step as the flow mode charges
  // them.
  struct Totals {
    double per_byte = 0, per_chunk_byte = 0;
    std::array<Time, 3> latency;
  };
  const Totals& totals(Algorithm algorithm, CollectiveKind kind) const;
  Time time_with(Algorithm algorithm, CollectiveKind kind, double bytes, Protocol protocol) const;
  Time latency_with(Algorithm algorithm, CollectiveKind kind, Protocol protocol) const;
  double nvls_tree_seconds_per_byte() const;
  std::optional<Bandwidth> ll_cap() const;  // of the LL protocol across servers, if any
  bool across_servers() const;              // the group spans a fat-tree
  // On NCCL's point-to-point path (p2p_protocol.h): an all-to-all inside one NVSwitch domain
  // (only switch dimensions spanned), a sendrecv there or across servers (switches and fat-trees).
  bool point_to_point(Algorithm algorithm, CollectiveKind kind) const;
  P2pPath p2p_path_of(Algorithm algorithm) const;  // the group's channel budget on that path
  // protocol_rate() on that path.
  double p2p_rate(CollectiveKind kind, double bytes, Protocol protocol, double link_seconds) const;
  double ramp_scale() const;  // kNetworkRampPerServer x servers across a fat-tree, else 1
  int64_t max_channels(Algorithm algorithm) const;
  const std::vector<Step>& profile(Algorithm algorithm, CollectiveKind kind) const;
  std::vector<Step> build(Algorithm algorithm, CollectiveKind kind) const;
  // The decompositions (collective_pattern) of `groups`. A ring's transfers depend only on where
  // the members sit in their servers and in which order the servers come (channel_rings), so on a
  // compact kind's servers a group that is an earlier one moved by whole servers takes that
  // group's pattern, its GPU ids moved alike: each arrangement is decomposed once.
  struct GroupPatterns {
    std::vector<std::vector<FlowStep>> patterns;
    std::vector<size_t> source;  // per group: its pattern
    std::vector<int64_t> moved;  // per group: added to its pattern's GPU ids
    const std::vector<FlowStep>& of(size_t group) const { return patterns[source[group]]; }
  };
  GroupPatterns group_patterns(Algorithm algorithm, CollectiveKind kind,
                               const std::vector<std::vector<int64_t>>& groups) const;
  Step evaluate(const LinkGraph& graph, const std::vector<double>& load, double leaf_load,
                const FlowStep& step, Time route_latency) const;

  const LinkGraph& links_;
  GroupKind kind_;
  // Compact kinds: the representative cluster's servers as a network of their own (server i of
  // kind_.servers as server i), and its groups there.
  std::optional<LinkGraph> local_;
  std::vector<std::vector<int64_t>> local_groups_;
  GroupShape shape_;
  Time rendezvous_;  // the network's, once per call (collective_rendezvous_latency)
  mutable int64_t routed_ = 0;
  mutable std::map<std::pair<Algorithm, CollectiveKind>, std::vector<Step>> profiles_;
  mutable std::map<std::pair<Algorithm, CollectiveKind>, Totals> totals_;
  mutable std::array<std::pair<double, double>, 3> transfer_scales_{
      {{-1, 0}, {-1, 0}, {-1, 0}}};  // per protocol: (bytes, transfer_scale)
};

// One transfer between two GPUs: its time, and how the flow mode runs it alike (its bytes times
// `rate` on its route's links, then `latency`; none: its route's own).
struct TransferCost {
  Time time;
  double rate = 1;
  std::optional<Time> latency;
};

// A transfer of `bytes` between the two GPUs of `pair` (the model of one group of two): a sendrecv
// on NCCL's point-to-point path (p2p_protocol.h). On ideal links, the pair's link at its effective
// rate plus one step's latency (point_to_point_time), the route's own latency in flow mode.
TransferCost point_to_point_cost(const CollectiveModel& pair, Bytes bytes);

// What the flow mode runs for one collective among `members` (GPU ids; the model's group or one
// placed alike): flow_algorithm()'s choice, the protocol the closed form picks for it, and its
// steps with that protocol applied (every transfer's bytes times its rate factor, each step's
// latency_scale set), then the own-shard copy and any local reduction (local_reduction.h) as a
// last step of no transfers.
struct CollectiveFlowPlan {
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  std::vector<FlowStep> steps;
};
CollectiveFlowPlan flow_plan(const CollectiveModel& model, CollectiveKind kind, Bytes bytes,
                             Algorithm forced, std::span<const int64_t> members);

struct CollectiveFlowRun {
  Time time;
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  uint64_t flows = 0;
};

// The model's first group running one collective alone on the network, every rank explicit, its
// steps as flows sharing links max-min fairly, with the protocol the closed form picks for the
// algorithm (its rate factor on every transfer's bytes, its scales on the latencies).
CollectiveFlowRun run_collective_flows(const CollectiveModel& model, CollectiveKind kind,
                                       Bytes bytes, Algorithm forced);

}  // namespace orrery
