// Collective algorithms: their names, where each can run, and the latency terms both modes share.
// Their costs come from their decompositions into steps (collective_flows.h), priced by the
// analytical model (collective_model.h) or run as flows.
//
// Notation (docs/network.md has the derivations): a group of n ranks with span s_d over dimension
// d; a_d the step latency of d; S the message size (nccl-tests convention: all-reduce /
// reduce-scatter input, all-gather output, all-to-all per-rank send buffer).
//
//   ring          NCCL-like parallel rings (channels); all-reduce, all-gather, reduce-scatter;
//                 broadcast and reduce as a pipelined chain
//   hierarchical  the ring algorithm dimension by dimension (reduce-scatter inner to outer, then
//                 all-gather outer to inner), each level on 1/(ranks below) of the data; groups
//                 spread evenly only
//   tree          NCCL's double binary tree across servers (chains inside): all-reduce only;
//                 no decomposition: the ring's bandwidth term at kTreeEfficiency, network term
//                 halved on 2 servers; latency 2 (ceil(log2 k) a_out + (g - 1) a_in)
//   nvls          in-switch reduction on an NVLS switch domain: all-reduce only
//   nvls-tree     NCCL's NVLS-Tree: all-reduce across servers whose switch has NVLS, whole
//                 servers; NVLS inside each server while each GPU's 1/g of the message crosses a
//                 tree of servers on its own NIC, the two pipelined: the slower of the switch's
//                 S (1 + 1/g) at nvls_efficiency and the NIC's k S / g (k = 1 on two servers, 2
//                 on more, as a double binary tree's inner nodes carry twice); no decomposition;
//                 latency: NVLS's, plus 2 ceil(log2 k) network hops
//   halving-doubling  recursive halving / doubling, power-of-two groups spread evenly, a power of
//                 two per dimension: log2 n steps, step i with the partner across bit i
//   direct        sendrecv: every rank sends S to the next; otherwise every pair at once
//                 (all-to-all; all-reduce as two such exchanges)
// Every collective also pays a base latency per call (collective_base_latency), as NCCL's model
// has a base latency per algorithm besides its per-hop latencies.
// auto picks the fastest of the algorithms a GPU library would use, as NCCL's tuner does with its
// own model: ring, tree, nvls and nvls-tree (direct for all-to-all) on switch and fat-tree
// networks, plus hierarchical and direct on networks with ring (torus) or mesh dimensions.
// halving-doubling and hierarchical elsewhere run only when forced.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"
#include "network/protocol.h"
#include "network/rank_placement.h"
#include "network/topology.h"

namespace orrery {

enum class Algorithm { Auto, Ring, Hierarchical, Tree, Nvls, NvlsTree, HalvingDoubling, Direct };

// NCCL's tree is not bandwidth optimal: it reaches about 80 % of ring's bus bandwidth on
// multi-node all-reduce (nccl issue #1368: 150 vs 190 GB/s on 5 x 8 H100 with 4 x 400G RoCE).
constexpr double kTreeEfficiency = 0.8;

std::string_view to_string(Algorithm algorithm);  // "auto", "ring", "hierarchical", ...
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::vector<Algorithm> all_algorithms();  // every concrete algorithm, in a fixed order

struct CollectiveCost {
  Time time;
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  int64_t channels = 1;  // thread blocks (SMs) per GPU the collective occupies while it runs
};

// Whether `algorithm` (not Auto) can run `kind` on a group of this shape.
bool can_run(const Topology& topology, Algorithm algorithm, CollectiveKind kind,
             const GroupShape& shape);

// The algorithms auto chooses from for `kind` on `topology`.
std::span<const Algorithm> auto_candidates(const Topology& topology, CollectiveKind kind);

// A point-to-point transfer between the two ranks of `pair` (see RankPlacement::boundary_pair).
Time point_to_point_time(const Topology& topology, Bytes bytes, const GroupShape& pair);

// nccl-tests' busbw / algbw factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast, reduce and sendrecv.
double bus_factor(CollectiveKind kind, int64_t ranks);

// Broadcast and reduce: from or to one rank.
bool is_rooted(CollectiveKind kind);

// A pipelined chain (broadcast, reduce) streams a message in chunks of kPipelineChunk (the last
// one smaller): the last rank receives the first chunk after n - 1 links and the rest streams in
// behind it, so the chain takes (S + (n - 2) min(S, chunk)) / B: never less for a larger S.
constexpr Bytes kPipelineChunk = kMiB;

// Latency terms shared with the flow decompositions (collective_flows.h):
// one pass of a ring over the group in rank order (n - 1 hops): per dimension, the hops whose
// outermost crossed dimension is d (blocks_at(d) - blocks_at(d + 1));
std::vector<int64_t> ring_hops(const GroupShape& shape);
// ... and their latencies, a_d per hop (a ring step's latency is its hop's dimension's);
Time ring_pass_latency(const Topology& topology, const GroupShape& shape);
// all-to-all: a rank posts its exchanges with every peer at once (NCCL groups them), so one
// exchange pays the latency of the outermost dimension the group spans;
Time peer_latency(const Topology& topology, const GroupShape& shape);
// NVLS: NCCL charges an NVLS call 25 us in all against a ring's 8.4 us base and 3.4 us per Simple
// hop on NVLink; besides the base latency every call pays, NVLS adds kNvlsHops of the switch's
// latency, whatever the GPU count.
constexpr double kNvlsHops = (25.0 - 8.4) / 3.4;
Time nvls_latency(const Topology& topology, const GroupShape& shape);
// NVLS-Tree: NVLS's inside the servers and 2 ceil(log2 k) hops of the network between them;
Time nvls_tree_latency(const Topology& topology, const GroupShape& shape);
// tree: 2 (ceil(log2 k) a_out + the (g - 1) hops of its chains inside, at their latencies);
Time tree_latency(const Topology& topology, const GroupShape& shape);
// ... of which the hops across the outermost dimension: 2 ceil(log2 k) a_out;
Time tree_outer_latency(const Topology& topology, const GroupShape& shape);
// every collective: the largest base latency of the dimensions it spans, once per call, and the
// largest rendezvous latency (fat-trees), once per call too.
Time collective_base_latency(const Topology& topology, const GroupShape& shape);
Time collective_rendezvous_latency(const Topology& topology, const GroupShape& shape);

// Why `algorithm` cannot run `kind` on `shape` (for warnings when a forced one falls back).
std::string unavailable_reason(const Topology& topology, Algorithm algorithm, CollectiveKind kind,
                               const GroupShape& shape);

}  // namespace orrery
