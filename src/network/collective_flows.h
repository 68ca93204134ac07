// Collectives as steps of point-to-point transfers: the decomposition both modes cost. The flow
// mode runs each step's transfers at once as flows sharing links max-min fairly, the next step
// after all of them (and the step's latency); the analytical model (collective_model.h) charges
// each step its busiest link's bytes over that link's capacity. Sizes follow the convention of
// collective_algorithms.h.
//
//   ring          c parallel rings (channels) each carrying 1/c of the data, c = the rails every
//                 server's members sit on when the group spans a fat-tree (1 inside a server);
//                 each ring visits a server's members rotated so it crosses to the next server
//                 between GPUs of one rail; on torus rings, each ring also runs backwards with half
//                 the data. all-reduce: 2(n-1) steps of S/(n c) per rank and channel
//   hierarchical  a ring inside every sub-group of each spanned dimension, inner to outer
//                 (reduce-scatter) and back (all-gather), all sub-groups of a level at once
//   halving-doubling  pairwise exchanges with the partner across bit i, innermost bits first
//   direct        every ordered pair at once, S/n each (all-reduce: twice)
//   broadcast, reduce: a pipelined chain along each channel's ring from (to) the first member:
//                 one step in which every chain link carries its channel's share of
//                 S + (n - 2) min(S, kPipelineChunk) (the stream and the pipeline fill); a reduce's
//                 transfers retrace the broadcast's routes the other way; sendrecv: one shift
//   nvls          every member into and out of its switch at once, S (1 + 1/n) scaled by
//                 efficiency / nvls_efficiency
// and a last step of no transfers: the collective's base latency (collective_base_latency).
// Transfers between the same two GPUs in one step travel as one flow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/diagnostics.h"
#include "network/collective_algorithms.h"
#include "network/link_graph.h"
#include "network/topology.h"

namespace orrery {

constexpr int64_t kIntoSwitch = -1;   // Transfer::dst for an NVLS leg into the switch
constexpr int64_t kOutOfSwitch = -2;  // and out of it

struct Transfer {
  int64_t src = 0;
  int64_t dst = 0;  // a GPU, or kIntoSwitch / kOutOfSwitch
  double bytes = 0;
  // Routed as the transfer from dst to src, every link crossed the other way (a reduce's data
  // retracing its broadcast's route).
  bool mirror = false;
};

// A step's transfers run `count` times in a row, each time followed by `latency` (when absent:
// the largest latency of the transfers' routes).
// `network`: the latency is a network (NIC and proxy) hop's, which protocols scale by their own
// network ratios (network/protocol.h); latency_scale: the protocol's factor, set by flow_plan().
// `fixed`: a latency after the scaled one that no protocol scales (the base step's network
// rendezvous, collective_rendezvous_latency()).
struct StepRun {
  int64_t count = 1;
  std::optional<Time> latency;
  bool network = false;
  double latency_scale = 1;
  Time fixed = Time::zero();
};

// How a step's transfer sizes follow the message size S: a transfer of u units carries
// u x share x (S + fill x min(S, kPipelineChunk)) bytes.
struct StepScale {
  double share = 1;
  int64_t fill = 0;
  double bytes(double s) const;
};

struct FlowStep {
  std::vector<Transfer> transfers;
  std::vector<StepRun> runs = {StepRun{}};
  StepScale scale;    // patterns only: what a unit is (collective_steps() gives bytes)
  bool base = false;  // the call's base latency (no transfers), scaled as protocols scale it

  int64_t repeats() const;  // the runs' counts together
};

// The steps of `algorithm` (one that decomposes and can run this collective) for `kind` among
// `members` (GPU ids, in the communicator's rank order), transfers in units of the step's scale.
// Direct exchanges of all pairs list n (n - 1) transfers: an InputError above the flow limit.
std::vector<FlowStep> collective_pattern(const Topology& topology, Algorithm algorithm,
                                         CollectiveKind kind, std::span<const int64_t> members);

// The direct exchange's step (all-to-all; all-reduce runs it twice) without its n (n - 1)
// transfers: runs, latency and scale, for the analytical model, which counts the pairs' loads
// without listing them (LinkGraph::add_all_pairs_load).
FlowStep direct_exchange_frame(const Topology& topology, CollectiveKind kind,
                               std::span<const int64_t> members);
// Appends the base latency of a collective among members of `shape` as a last step of no
// transfers (none when it is 0).
void append_base_latency(const Topology& topology, const GroupShape& shape,
                         std::vector<FlowStep>& steps);

// The same for a message of `bytes`, transfers in bytes, those between the same two GPUs merged.
std::vector<FlowStep> collective_steps(const Topology& topology, Algorithm algorithm,
                                       CollectiveKind kind, Bytes bytes,
                                       std::span<const int64_t> members);

// Flow-mode cost in computer time: a step of F flows at once costs each flow about
// kFlowBaseSeconds + kFlowSharingSeconds x sqrt(F) (starting and routing it, and re-solving the
// rates of its link component, which grows with F), fitted on 1,024-rank ring steps (8,192 flows:
// 0.13 us per flow) and all-to-alls of 1,024 and 2,048 ranks (1M and 4.2M flows: 1.4 and 2.3 us;
// docs/network.md). One collective, and one simulated iteration, may take at most
// kFlowBudgetSeconds by this estimate; more is an InputError naming the flows and the estimated
// time.
constexpr double kFlowBaseSeconds = 1e-7;
constexpr double kFlowSharingSeconds = 1.2e-9;
constexpr double kFlowBudgetSeconds = 30;
// What the estimate cannot see: flows of other collectives on the same links at the same time,
// whose components the solver re-solves each time one of their flows starts or ends. Each
// activity re-solved costs about kResolveSeconds of computer time, all else included (seed 003
// in flow mode on 4,096 / 8,192 / 16,384 H100s: 0.16 / 0.22 / 0.31 us over 18 M / 66 M / 248 M
// re-solved; docs/network.md). A run stops once its re-solving alone passes kFlowBudgetSeconds.
constexpr double kResolveSeconds = 2.5e-7;
constexpr uint64_t kMaxResolvedActivities =
    static_cast<uint64_t>(kFlowBudgetSeconds / kResolveSeconds);
// Both limits throw this: the flow simulators name the workloads they ran in its message.
class FlowBudgetError : public InputError {
 public:
  using InputError::InputError;
};
[[noreturn]] void throw_flows_contend(uint64_t resolved);
// The estimate for `repeats` steps of `flows` flows each.
double flow_seconds(double flows, double repeats);
void check_flow_count(std::span<const FlowStep> steps);
// `what`: what would run them ("this collective").
[[noreturn]] void throw_too_many_flows(double flows, double seconds,
                                       std::string_view what = "this collective");

// Whether dimension d's steps are network hops (fat-tree: through NICs and proxies).
bool is_network(const Topology& topology, size_t d);

// Whether `algorithm` has a flow decomposition (tree has none).
bool decomposes(Algorithm algorithm);

// Appends the links of `transfer` to `path` and returns its latency.
Time transfer_route(const Topology& topology, const LinkGraph& links, const Transfer& transfer,
                    uint64_t hash, std::vector<LinkId>& path);

// One run of a step, routed and ready to start as flows: transfer i's links are
// links[path_begin[i]] up to links[path_begin[i + 1]], carrying bytes[i]; the transfers run
// `repeat` times in a row, each time followed by `latency` (the run's, or else the slowest
// route's, times its latency_scale).
struct RoutedStep {
  std::vector<LinkId> links;
  std::vector<uint32_t> path_begin;  // one per transfer, then one past the last
  std::vector<double> bytes;
  Time latency;
  int64_t repeat = 1;
};

// `steps` (transfers in bytes) routed on `links`: one RoutedStep per run of a step, runs of no
// count left out. Each transfer is routed once, with the next ECMP hash from `hash`, in order.
std::vector<RoutedStep> route_steps(const Topology& topology, const LinkGraph& links,
                                    std::span<const FlowStep> steps, uint64_t& hash);

}  // namespace orrery
