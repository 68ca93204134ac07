#include "network/p2p_protocol.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace orrery {
namespace {

constexpr double kLLPeerChannelBytes = 16.0 * 1024;  // NCCL_P2P_LL_THRESHOLD
constexpr double kLLStepBytes = 64.0 * 1024;         // LL's 512 KiB buffer over its 8 steps
constexpr double kSimpleStepBytes = 512.0 * 1024;    // NCCL_P2P_NVL_CHUNKSIZE

int64_t pool(int64_t channels) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(channels, 1))));
}

double peer_bytes_of(double bytes, int64_t ranks) {
  return bytes / static_cast<double>(std::max<int64_t>(ranks, 1));
}

}  // namespace

int64_t p2p_channels_per_peer(Protocol protocol, double peer_bytes, int64_t ranks,
                              int64_t channels) {
  const int64_t most = pool(channels);
  int64_t fair = most;
  while (fair * ranks > most && fair > 1)
    fair /= 2;
  const double step = protocol == Protocol::LL ? kLLStepBytes : kSimpleStepBytes;
  const double min_part = step / 8, max_part = step * 32;
  int64_t used = std::clamp<int64_t>(
      static_cast<int64_t>(std::min(std::ceil(peer_bytes / min_part), 1e9)), 1, fair);
  while (peer_bytes / static_cast<double>(used) > max_part && used * 2 <= most)
    used *= 2;
  return used;
}

int64_t p2p_channels_used(Protocol protocol, double bytes, int64_t ranks, int64_t channels) {
  return std::min(
      pool(channels),
      ranks * p2p_channels_per_peer(protocol, peer_bytes_of(bytes, ranks), ranks, channels));
}

Protocol p2p_protocol(double bytes, int64_t ranks, int64_t channels) {
  const auto most = static_cast<double>(pool(channels));
  return peer_bytes_of(bytes, ranks) <= most * kLLPeerChannelBytes ? Protocol::LL
                                                                   : Protocol::Simple;
}

double p2p_transfer_scale(Protocol protocol, double bytes) {
  if (protocol != Protocol::Simple || bytes <= 0) return transfer_scale(protocol, bytes);
  return 1 + std::pow(kP2pSimpleRampBytes / bytes, kRampExponent);
}

}  // namespace orrery
