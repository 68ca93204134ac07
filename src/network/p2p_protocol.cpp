#include "network/p2p_protocol.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace orrery {
namespace {

constexpr double kLLPeerChannelBytes = 16.0 * 1024;  // NCCL_P2P_LL_THRESHOLD
constexpr double kLLStepBytes = 64.0 * 1024;         // LL's 512 KiB buffer over its 8 steps
constexpr double kNvlinkStepBytes = 512.0 * 1024;    // NCCL_P2P_NVL_CHUNKSIZE
constexpr double kNetworkStepBytes = 128.0 * 1024;   // NCCL_P2P_NET_CHUNKSIZE
constexpr int64_t kNetworkPeerChannels = 2;          // a network peer's, one NIC a GPU

int64_t power_of_two_up(int64_t n) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1))));
}

}  // namespace

P2pPath p2p_path(int64_t channels, int64_t ranks, bool across_servers) {
  P2pPath path;
  path.ranks = std::max<int64_t>(ranks, 1);
  path.pool = power_of_two_up(channels);
  path.network = across_servers;
  path.peer_most = path.pool;
  if (across_servers) {
    int64_t net = kNetworkPeerChannels;
    while (net * path.ranks > 4 * path.pool && net > 1)
      net /= 2;
    path.peer_most = std::min(path.pool, net);
  }
  path.fair = path.peer_most;
  while (path.fair * path.ranks > path.pool && path.fair > 1)
    path.fair /= 2;
  return path;
}

int64_t p2p_channels_per_peer(Protocol protocol, double peer_bytes, const P2pPath& path) {
  const double step = protocol == Protocol::LL ? kLLStepBytes
                      : path.network           ? kNetworkStepBytes
                                               : kNvlinkStepBytes;
  const double min_part = path.network ? step / 2 : step / 8;
  const double max_part = path.network ? step : step * 32;
  int64_t used = std::clamp<int64_t>(
      static_cast<int64_t>(std::min(std::ceil(peer_bytes / min_part), 1e9)), 1, path.fair);
  while (peer_bytes / static_cast<double>(used) > max_part && used * 2 <= path.peer_most)
    used *= 2;
  return used;
}

int64_t p2p_channels_used(Protocol protocol, double bytes, const P2pPath& path) {
  const double peer_bytes = bytes / static_cast<double>(path.ranks);
  return std::min(path.pool, path.ranks * p2p_channels_per_peer(protocol, peer_bytes, path));
}

Protocol p2p_protocol(double peer_bytes, const P2pPath& path) {
  return peer_bytes <= static_cast<double>(path.peer_most) * kLLPeerChannelBytes ? Protocol::LL
                                                                                 : Protocol::Simple;
}

double p2p_proxy_seconds(double peer_bytes, int64_t channels, const P2pPath& path) {
  if (!path.network || peer_bytes <= 0) return 0;
  const double chunk = peer_bytes < kNetworkStepBytes       ? kNetworkStepBytes / 4
                       : peer_bytes < 8 * kNetworkStepBytes ? kNetworkStepBytes / 2
                                                            : kNetworkStepBytes;
  const double per_channel = peer_bytes / static_cast<double>(std::max<int64_t>(channels, 1));
  return std::ceil(per_channel / chunk) * kProxyChunkSeconds;
}

double p2p_transfer_scale(Protocol protocol, double bytes) {
  if (protocol != Protocol::Simple || bytes <= 0) return transfer_scale(protocol, bytes);
  return 1 + std::pow(kP2pSimpleRampBytes / bytes, kRampExponent);
}

}  // namespace orrery
