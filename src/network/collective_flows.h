// Collectives as steps of point-to-point transfers, for the flow-level simulation: each step's
// transfers run at once and the next step starts when all of them (and the step's latency) are
// done. Sizes follow the same convention as collective_algorithms.h, and on an uncontended network
// a decomposition takes the time the analytical formula gives.
//
//   ring          c parallel rings (channels) each carrying 1/c of the data, c = the NICs a
//                 server's members can use when the group spans servers (1 inside a server); each
//                 ring visits a server's members rotated so it crosses to the next server between
//                 GPUs of one rail. all-reduce: 2(n-1) steps of S/(n c) per rank and channel
//   hierarchical  a ring inside every sub-group of each spanned dimension, inner to outer
//                 (reduce-scatter) and back (all-gather), all sub-groups of a level at once
//   halving-doubling  pairwise exchanges with the partner across bit i, innermost bits first
//   direct        every ordered pair at once, S/n each (all-reduce: twice)
//   broadcast, reduce: a pipelined chain along each channel's ring from (or to) the first member,
//                 C chunks (pipeline_chunks) in C + n - 2 steps; sendrecv: one shift to the next
//                 rank
//   nvls          two steps (reduce, then multicast) of every member into and out of its switch,
//                 each carrying S/2 scaled by efficiency / nvls_efficiency
// Transfers between the same two GPUs in one step travel as one flow.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
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
};

// A step's transfers, run `repeat` times in a row (the steps of a ring are all alike), each time
// followed by `latency` (when absent: the largest latency of the transfers' routes).
struct FlowStep {
  std::vector<Transfer> transfers;
  int64_t repeat = 1;
  std::optional<Time> latency;
};

// The most flows one collective may run in flow mode (about ten seconds of simulation); more is
// an InputError naming the count.
constexpr uint64_t kMaxCollectiveFlows = 100'000'000;
// Throws that InputError when `steps` would run more flows than kMaxCollectiveFlows.
void check_flow_count(std::span<const FlowStep> steps);

// Whether `algorithm` has a flow decomposition (tree has none).
bool decomposes(Algorithm algorithm);

// The steps of `algorithm` (one that decomposes and can run this collective) for `kind` of
// `bytes` among `members` (GPU ids, in the communicator's rank order).
std::vector<FlowStep> collective_steps(const Topology& topology, Algorithm algorithm,
                                       CollectiveKind kind, Bytes bytes,
                                       std::span<const int64_t> members);

// Appends the links of `transfer` to `path` and returns its latency.
Time transfer_route(const Topology& topology, const LinkGraph& links, const Transfer& transfer,
                    uint64_t hash, std::vector<LinkId>& path);

struct CollectiveFlowRun {
  Time time;
  Algorithm algorithm = Algorithm::Ring;
  uint64_t flows = 0;
};

// One collective alone on the network, every rank explicit: the flow-level counterpart of
// collective_cost().
CollectiveFlowRun run_collective_flows(const Topology& topology, CollectiveKind kind, Bytes bytes,
                                       std::span<const int64_t> members, const GroupShape& shape,
                                       Algorithm forced);

// The fastest algorithm that decomposes into flows for this collective on `shape`, or `forced`
// when it decomposes and can run.
Algorithm flow_algorithm(const Topology& topology, CollectiveKind kind, Bytes bytes,
                         const GroupShape& shape, Algorithm forced);

}  // namespace orrery
