// How NCCL runs an all-to-all: as one grouped send and receive per peer (its own rank included)
// on its point-to-point path, not as a collective algorithm (docs/network.md, "All-to-all on
// NCCL's point-to-point path"). Sizes in bytes.
//
// The path has rules of its own (NCCL's enqueue.cc and graph/paths.cc, docs/references/
// nccl-tuning.md):
// - channels: a pool of the ring channel count rounded up to a power of two (32 for 24); each
//   peer's transfer takes one channel per 64 KiB (an eighth of the 512 KiB NVLink chunk), up to
//   pool / n (a power of two, at least 1), and twice as many while a channel would carry more
//   than 16 MiB (32 chunks), up to the pool;
// - protocol: LL when a peer's bytes fit 16 KiB per channel (NCCL's P2P LL threshold), Simple
//   otherwise; never LL128;
// - a Simple transfer pays one handshake with no ring behind it, so its latency is
//   kP2pSimpleLatency x the step's (the base latency and one hop), and its ramp
//   (protocol.h) runs to kP2pSimpleRampBytes instead of the ring's R_Simple.
// The two constants were fitted on the A100 all-to-all of Tables 1a-1 and 1a-2 only (least
// squares in log time); the H100 all-to-all checks them (docs/network.md, "Validation").
#pragma once

#include <cstdint>

#include "network/protocol.h"

namespace orrery {

constexpr double kP2pSimpleLatency = 0.5;
constexpr double kP2pSimpleRampBytes = 8.5e6;

// The channels one peer's `peer_bytes` run on among `ranks`, with `channels` ring channels.
int64_t p2p_channels_per_peer(double peer_bytes, int64_t ranks, int64_t channels);

// The channels an all-to-all of `bytes` per rank occupies: every peer's, up to the pool.
int64_t p2p_channels_used(double bytes, int64_t ranks, int64_t channels);

// The one protocol an all-to-all of `bytes` per rank runs with.
Protocol p2p_protocol(double bytes, int64_t ranks, int64_t channels);

// The factor on a point-to-point transfer's time for `bytes` with `protocol` (transfer_scale()
// with Simple's ramp at kP2pSimpleRampBytes).
double p2p_transfer_scale(Protocol protocol, double bytes);

}  // namespace orrery
