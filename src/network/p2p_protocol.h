// How NCCL runs an all-to-all: as one grouped send and receive per peer (its own rank included)
// on its point-to-point path, not as a collective algorithm (docs/network.md, "All-to-all on
// NCCL's point-to-point path"). Sizes in bytes.
//
// The path has rules of its own; these are NCCL 2.27's, the A100 data's version (src/enqueue.cc
// addP2pToPlan and scheduleP2pTasksToPlan as of NVIDIA/nccl 01e6dd9, src/graph/paths.cc
// ncclTopoComputeP2pChannels; docs/references/nccl-tuning.md):
// - channels: a pool of the ring channel count rounded up to a power of two (32 for 24), which is
//   also a peer's most (2 a NVLink, rounded up, capped by the pool); a peer first gets the pool
//   halved until all peers fit it (32 / n, at least 1), fewer for a small transfer (one per
//   eighth of the protocol's step), and twice as many while a channel would carry more than 32
//   steps, up to the pool. A step is 512 KiB for Simple (the NVLink chunk), 64 KiB for LL;
// - protocol: LL when a peer's bytes fit 16 KiB (NCCL's P2P LL threshold) times the per-peer
//   most, 512 KiB on 32 channels; Simple above; never LL128;
// - a Simple transfer pays one handshake with no ring behind it, so its latency is
//   kP2pSimpleLatency x the step's (the base latency and one hop), and its ramp
//   (protocol.h) runs to kP2pSimpleRampBytes instead of the ring's R_Simple.
// The two constants were fitted on the A100 all-to-all of Table 1a-1 only (least squares in log
// time); the H100 all-to-all checks them (docs/network.md, "Validation").
#pragma once

#include <cstdint>

#include "network/protocol.h"

namespace orrery {

constexpr double kP2pSimpleLatency = 0.6;
constexpr double kP2pSimpleRampBytes = 7.0e6;

// The channels one peer's `peer_bytes` run on with `protocol` among `ranks`, with `channels` ring
// channels.
int64_t p2p_channels_per_peer(Protocol protocol, double peer_bytes, int64_t ranks,
                              int64_t channels);

// The channels an all-to-all of `bytes` per rank occupies with `protocol` (p2p_protocol()):
// every peer's, up to the pool.
int64_t p2p_channels_used(Protocol protocol, double bytes, int64_t ranks, int64_t channels);

// The one protocol an all-to-all of `bytes` per rank runs with.
Protocol p2p_protocol(double bytes, int64_t ranks, int64_t channels);

// The factor on a point-to-point transfer's time for `bytes` with `protocol` (transfer_scale()
// with Simple's ramp at kP2pSimpleRampBytes).
double p2p_transfer_scale(Protocol protocol, double bytes);

}  // namespace orrery
