// NCCL's point-to-point path: how it runs an all-to-all (one grouped send and receive per peer,
// its own rank included) and a sendrecv (one send to one peer, one receive from another), not as
// a collective algorithm (docs/network.md, "NCCL's point-to-point path"). Sizes in bytes.
//
// The path has rules of its own; these are NCCL 2.27's, the A100 data's version (src/enqueue.cc
// addP2pToPlan and scheduleP2pTasksToPlan as of NVIDIA/nccl 01e6dd9, src/graph/paths.cc
// ncclTopoGetNchannels and ncclTopoComputeP2pChannels, src/init.cc's P2P chunk size;
// docs/references/nccl-tuning.md):
// - channels: a pool of the ring channel count rounded up to a power of two (32 for 24). A peer's
//   most is the fewest any peer of the communicator gets: inside one NVSwitch domain 2 a NVLink,
//   rounded up and capped by the pool (so the pool); across servers 2 a network peer
//   (NCCL_NCHANNELS_PER_NET_PEER's automatic value with one NIC a GPU, halved while 2 x ranks
//   exceeds 4 x the pool). A peer first gets the pool halved until all peers fit it (32 / n, at
//   least 1, at most the per-peer most), fewer for a small transfer (one per smallest part), and
//   twice as many while a part would exceed the largest, up to the per-peer most. Inside one
//   server the parts run from an eighth of the protocol's step to 32 steps; across servers from
//   half a step to one. A step is the P2P chunk for Simple (512 KiB over NVLink, 128 KiB when the
//   communicator spans servers), 64 KiB for LL;
// - protocol: LL when a peer's bytes fit 16 KiB (NCCL's P2P LL threshold) times the per-peer
//   most (512 KiB inside a server, 32 KiB across); Simple above; never LL128;
// - a Simple transfer pays one handshake with no ring behind it, so its latency is
//   kP2pSimpleLatency x the step's (the base latency and one hop), and inside a server its ramp
//   (protocol.h) runs to kP2pSimpleRampBytes instead of the ring's R_Simple;
// - across servers a Simple transfer moves in network chunks (128 KiB, a quarter of it below one
//   chunk, half below 8), each posted by the GPU's proxy thread: a channel takes at least
//   kProxyChunkSeconds a chunk (NCCL's network overhead for Simple, src/graph/tuning.cc: 1 us x
//   3 on Intel x86 and Arm hosts; AMD's 2 us x 3 is not told apart), instead of the ramp.
// The two constants were fitted on the A100 all-to-all of Table 1a-1 only (least squares in log
// time); the H100 all-to-all and the sendrecv sweeps check them (docs/network.md, "Validation").
#pragma once

#include <cstdint>

#include "network/protocol.h"

namespace orrery {

constexpr double kP2pSimpleLatency = 0.6;
constexpr double kP2pSimpleRampBytes = 7.0e6;
constexpr double kProxyChunkSeconds = 3e-6;

// The channel budget of a communicator of `ranks` with `channels` ring channels, inside one
// NVSwitch domain or (`across_servers`) spanning servers.
struct P2pPath {
  int64_t ranks = 1;
  int64_t pool = 1;       // channels point-to-point work may use
  int64_t peer_most = 1;  // the most one peer's transfer may use
  int64_t fair = 1;       // a peer's first share: the pool halved until every peer fits
  bool network = false;   // across servers: the network's chunk and part sizes
};
P2pPath p2p_path(int64_t channels, int64_t ranks, bool across_servers);

// The channels one peer's `peer_bytes` run on with `protocol`.
int64_t p2p_channels_per_peer(Protocol protocol, double peer_bytes, const P2pPath& path);

// The channels an all-to-all of `bytes` per rank occupies with `protocol` (p2p_protocol() of its
// per-peer bytes): every peer's, up to the pool.
int64_t p2p_channels_used(Protocol protocol, double bytes, const P2pPath& path);

// The one protocol a transfer of `peer_bytes` to one peer runs with.
Protocol p2p_protocol(double peer_bytes, const P2pPath& path);

// The least time, in seconds, a Simple transfer of `peer_bytes` across servers takes on
// `channels`: its chunks per channel, each posted by the proxy (0 inside one server).
double p2p_proxy_seconds(double peer_bytes, int64_t channels, const P2pPath& path);

// The factor on a point-to-point transfer's time for `bytes` with `protocol` (transfer_scale()
// with Simple's ramp at kP2pSimpleRampBytes).
double p2p_transfer_scale(Protocol protocol, double bytes);

}  // namespace orrery
