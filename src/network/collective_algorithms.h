// Collective algorithms and their alpha-beta cost on a hierarchical Topology.
//
// Notation (docs/network.md has the derivations): a group of n ranks with span s_d over dimension
// d; R_d the bandwidth one GPU has for a step across d (Topology::step_bandwidth); a_d the step
// latency of d; S the message size (nccl-tests convention: all-reduce / reduce-scatter input,
// all-gather output, all-to-all per-rank send buffer).
//
//   ring          one ring over all n ranks (broadcast, reduce: a pipelined chain of C chunks of
//                 at most 1 MiB, C <= 64: (C + n - 2) (S/C / B + a)). B = min over spanned d of R_d
//                 * (ranks below d, i.e. parallel rings through their own NICs); a = the largest
//                 a_d. all-reduce 2(n-1)/n S/B + 2(n-1) a; all-gather, reduce-scatter (n-1)/n S/B +
//                 (n-1) a
//   hierarchical  the ring algorithm dimension by dimension (reduce-scatter inner to outer, then
//                 all-gather outer to inner), each level on 1/(ranks below) of the data
//   tree          NCCL's double binary tree across servers (chains inside): all-reduce only;
//                 ring's bandwidth term at tree_efficiency, network term halved on 2 servers;
//                 latency 2 (ceil(log2 k) a_out + (g - 1) a_in)
//   nvls          in-switch reduction on an NVLS switch domain: all-reduce only,
//                 S / (port * nvls_efficiency) + 2 a
//   halving-doubling  recursive halving / doubling, power-of-two groups: log2 n steps, step i
//                 moves S/2^(i+1) with the partner across the dimension of bit i (innermost first)
//   direct        sendrecv: every rank sends S to the next, S / (slowest dimension) + a;
//                 otherwise every pair at once: all-to-all sends S/n to each peer, the bytes
//                 leaving through each dimension at its R_d (rings: the k^2/8 link load of shortest
//                 paths; meshes: all k-1 links at once); all-reduce = reduce-scatter + all-gather
//                 of that kind.
// auto picks the fastest of the algorithms a GPU library would use, as NCCL's tuner does with its
// own model: ring, tree and nvls (direct for all-to-all) on switch and fat-tree networks, plus
// hierarchical and direct on networks with ring (torus) or mesh dimensions. halving-doubling and
// hierarchical elsewhere run only when forced.
#pragma once

#include <optional>
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

// Chunks a pipelined chain splits a message into: one per MiB, at most 64.
constexpr Bytes kPipelineChunk = kMiB;
constexpr Bytes kMaxPipelineChunks = 64;
int64_t pipeline_chunks(Bytes bytes);

}  // namespace orrery
