// Collective algorithms and their alpha-beta cost on a hierarchical Topology.
//
// Notation (docs/network.md has the derivations): a group of n ranks with span s_d over dimension
// d; R_d the bandwidth one GPU has for a step across d (Topology::step_bandwidth); a_d the step
// latency of d; S the message size (nccl-tests convention: all-reduce / reduce-scatter input,
// all-gather output, all-to-all per-rank send buffer).
//
//   ring          NCCL-like parallel rings (channels). B = min over spanned d of a rank's ring
//                 bandwidth across d: a switch port, a ring's two link directions, and across a
//                 fat-tree the NICs of the least connected server (GroupShape::nics: one per rail
//                 its members sit on, shared with the job's other GPUs of that rail), each times
//                 the fewest members a block of d holds. all-reduce 2(n-1)/n S/B, all-gather and
//                 reduce-scatter (n-1)/n S/B, plus per step the latency of the dimension its hop
//                 crosses (ring_pass_latency per pass of n - 1 steps). broadcast, reduce: a
//                 pipelined chain, S (1 + (n-2)/C) / B + one pass, C = pipeline_chunks(S)
//   hierarchical  the ring algorithm dimension by dimension (reduce-scatter inner to outer, then
//                 all-gather outer to inner), each level on 1/(ranks below) of the data; groups
//                 spread evenly only
//   tree          NCCL's double binary tree across servers (chains inside): all-reduce only;
//                 ring's bandwidth term at tree_efficiency, network term halved on 2 servers;
//                 latency 2 (ceil(log2 k) a_out + (g - 1) a_in)
//   nvls          in-switch reduction on an NVLS switch domain: all-reduce only; every GPU moves
//                 S (1 + 1/n) each way at port * nvls_efficiency, plus nvls_latency
//   halving-doubling  recursive halving / doubling, power-of-two groups spread evenly: log2 n
//                 steps, step i moves S/2^(i+1) with the partner across the dimension of bit i
//                 (innermost first)
//   direct        sendrecv: every rank sends S to the next, S / (slowest dimension) + a;
//                 otherwise every pair at once: all-to-all sends S/n to each peer, routed
//                 innermost dimension first, so each dimension's busiest link carries all pairs
//                 differing in it (direct_exchange), plus peer_latency; all-reduce = reduce-scatter
//                 + all-gather of that kind.
// auto picks the fastest of the algorithms a GPU library would use, as NCCL's tuner does with its
// own model: ring, tree and nvls (direct for all-to-all) on switch and fat-tree networks, plus
// hierarchical and direct on networks with ring (torus) or mesh dimensions. halving-doubling and
// hierarchical elsewhere run only when forced.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"
#include "network/rank_placement.h"
#include "network/topology.h"

namespace orrery {

enum class Algorithm { Auto, Ring, Hierarchical, Tree, Nvls, HalvingDoubling, Direct };

// NCCL's tree is not bandwidth optimal: it reaches about 80 % of ring's bus bandwidth on
// multi-node all-reduce (nccl issue #1368: 150 vs 190 GB/s on 5 x 8 H100 with 4 x 400G RoCE).
constexpr double kTreeEfficiency = 0.8;

std::string_view to_string(Algorithm algorithm);  // "auto", "ring", "hierarchical", ...
std::optional<Algorithm> parse_algorithm(std::string_view name);
std::vector<Algorithm> all_algorithms();  // every concrete algorithm, in a fixed order

struct CollectiveCost {
  Time time;
  Algorithm algorithm = Algorithm::Ring;
};

// Time of `algorithm` (not Auto), or nullopt where it cannot run this collective on this group.
std::optional<Time> algorithm_time(const Topology& topology, Algorithm algorithm,
                                   CollectiveKind kind, Bytes bytes, const GroupShape& shape);

// The algorithms auto chooses from for `kind` on `topology`.
std::vector<Algorithm> auto_candidates(const Topology& topology, CollectiveKind kind);

// Time with `algorithm`, or with the fastest applicable one for Auto. A forced algorithm that
// cannot run falls back to the fastest one (the returned algorithm says which ran).
CollectiveCost collective_cost(const Topology& topology, CollectiveKind kind, Bytes bytes,
                               const GroupShape& shape, Algorithm algorithm = Algorithm::Auto);

// A point-to-point transfer between the two ranks of `pair` (see RankPlacement::neighbour_shape).
Time point_to_point_time(const Topology& topology, Bytes bytes, const GroupShape& pair);

// nccl-tests' busbw / algbw factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
// reduce-scatter and all-to-all, 1 for broadcast, reduce and sendrecv.
double bus_factor(CollectiveKind kind, int64_t ranks);

// Broadcast and reduce: from or to one rank.
bool is_rooted(CollectiveKind kind);

// Chunks a pipelined chain (broadcast, reduce) streams a message in: one per MiB, as many as the
// size needs. The chain costs the stream at the ring's bandwidth, plus the n - 2 chunk times the
// first chunk takes to reach the end behind the first link (the pipeline fill), plus one latency
// per hop.
constexpr Bytes kPipelineChunk = kMiB;
int64_t pipeline_chunks(Bytes bytes);

// Latency terms shared with the flow decompositions (collective_flows.h):
// one pass of a ring over the group in rank order (n - 1 hops): per dimension, the hops whose
// outermost crossed dimension is d (blocks_at(d) - blocks_at(d + 1));
std::vector<int64_t> ring_hops(const GroupShape& shape);
// ... and their latencies, a_d per hop (a ring step's latency is its hop's dimension's);
Time ring_pass_latency(const Topology& topology, const GroupShape& shape);
// all-to-all: a rank exchanges with each peer in turn, each exchange paying the latency of the
// outermost dimension separating the two (for the rank in the least populated blocks);
Time peer_latency(const Topology& topology, const GroupShape& shape);
// NVLS: two passes through the switch, each synchronising every GPU with every other
// (2 (n - 1) steps of the switch's latency; NVLS latency grows with the GPU count, nccl #1259).
Time nvls_latency(const Topology& topology, const GroupShape& shape);

// The busiest link direction of a ring of k positions when every position sends one unit to
// every other along shortest paths (ties: even positions forward, odd back, as LinkGraph
// routes): (k^2 - 1)/8 for odd k, (k/2 - 1)(k/2)/2 + ceil(k/4) for even k (k^2/8 when 4 divides
// k; 1 on a ring of 2).
double ring_link_load(int64_t k);

// Why `algorithm` cannot run `kind` on `shape` (for warnings when a forced one falls back).
std::string unavailable_reason(const Topology& topology, Algorithm algorithm, CollectiveKind kind,
                               const GroupShape& shape);

}  // namespace orrery
