// NCCL's three wire protocols and what each does to a collective's time (docs/network.md,
// "Protocols and the mid-size ramp"). Times in Time (picoseconds), sizes in bytes.
//
// A collective runs with one protocol p, the one that gives it the shortest time (NCCL's tuner
// picks the fastest by its own model; Orrery picks by its own). With the step decomposition's
// latencies and busiest-link times unchanged, p changes them to
//
//   T_p = base_scale_p x B + hop_scale_p x sum(step latencies)
//       + sum(step transfer times) x (1 + (R_p / S)^kRampExponent) / fraction_p
//       + kOwnShardCopies x (S / n) / M                       (when the GPU's memory is known)
//
//   B          the base latency of the call (the dimension's base_latency: Simple's)
//   latencies  per step (the dimension's latency: a Simple hop)
//   fraction_p the share of the link rate the protocol's payload gets (LL sends 8 data bytes in
//              a 16-byte line and NCCL caps it lower still; LL128 120 of 128)
//   R_p        the protocol's ramp size: below it, per-chunk synchronisation dominates and the
//              rate falls short of the large-message rate (0 for LL, which has none)
//   S, n, M    message size, ranks, the GPU's memory bandwidth: every rank's own shard moves
//              through its memory without crossing a link, serialised with the transfers
//              (all-reduce, all-gather, reduce-scatter and all-to-all only)
//
// Constants: base and hop scales are NCCL's own ratios (its tuning.cc, docs/references/
// nccl-tuning.md: LL 6.6/8.4 and 0.6/3.4 of Simple on NVLink, 2.7/14 on the network,
// 5/14 for a tree's network hop; LL128 14/8.4, 1.9/3.4, 4/14 and 8.5/14). The LL fraction 0.38 is
// NCCL's LL cap over its ring bandwidth on A100 and H100 (87.7 / 240 and 141 / 360 GB/s), LL128's
// 0.92 NCCL's factor. R_p, kRampExponent and kOwnShardCopies were fitted on collective measurements
// only (nccl-tests sweeps of 8x A100 and the H100 all-reduce, checked on the H100 all-gather,
// reduce-scatter and all-to-all): docs/network.md, "Validation".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"

namespace orrery {

enum class Protocol { LL, LL128, Simple };

std::string_view to_string(Protocol protocol);  // "LL", "LL128", "Simple"

struct ProtocolTerms {
  double base_scale = 1;              // of the call's base latency
  double hop_scale = 1;               // of every step's latency across NVLink-class links
  double network_hop_scale = 1;       // of a network step's (fat-tree: NIC and proxy)
  double tree_network_hop_scale = 1;  // of a tree's network hop (NCCL's tree row)
  double fraction = 1;                // of the link rate its payload gets
  double ramp_bytes = 0;              // R_p
  // Bytes per channel before NCCL adds another channel (threads per channel x bytes per thread).
  double channel_bytes = 0;
};

const ProtocolTerms& terms(Protocol protocol);

constexpr double kRampExponent = 0.613;
constexpr double kOwnShardCopies = 3.49;

// NCCL's mid-size dip of its tree (its tree correction factor by log2(S / 64 B),
// docs/references/nccl-tuning.md) relative to the large-message value, which the tree's
// measured large-message efficiency (kTreeEfficiency) already holds: 1 from 128 MiB up, down to
// 0.4 / 0.4 (LL), 0.6 / 1.0 (LL128) and 0.5 / 0.9 (Simple) around 64 KiB - 2 MiB.
double tree_size_efficiency(Protocol protocol, double bytes);

// Across k servers every network step moves 1/k of what a step inside one server moves, in chunks
// each of which waits on the NIC and its proxy thread, so the ramp is longer: R_p becomes
// kNetworkRampPerServer x k x R_p. Fitted on collective measurements only (the 8-server H100
// all-reduce sweep S2c of tests/data/nccl_tests_multi_node.csv, to a signed bias of about 0 over
// its points; refitted from 4 to 2 when the network's rendezvous latency entered the model; the
// other sweeps there check it, docs/network.md "Across servers").
constexpr double kNetworkRampPerServer = 2.0;

// Ring all-reduces across servers with Simple pay NCCL's "plateau" factor on their latency (x1.4
// on SM80 and later, docs/references/nccl-tuning.md) once each hop carries more than a few bytes.
constexpr double kMultiServerRingSimpleLatency = 1.4;

// Every protocol, in a fixed order (LL, LL128, Simple).
std::span<const Protocol> all_protocols();

// The factor on a step's transfer time for a message of `bytes` with `protocol`.
double transfer_scale(Protocol protocol, double bytes);

// The time every rank spends copying its own shard through its memory (0 when `memory` is
// unknown, or for broadcast, reduce and sendrecv).
Time own_shard_time(CollectiveKind kind, double bytes, int64_t ranks,
                    std::optional<Bandwidth> memory);

// The channels (one thread block, so one SM, each) a call of `bytes` runs on: NCCL adds a
// channel per channel_bytes of message, up to `max_channels`.
int64_t channels_used(Protocol protocol, double bytes, int64_t max_channels);

}  // namespace orrery
