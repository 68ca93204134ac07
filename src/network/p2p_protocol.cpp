#include "network/p2p_protocol.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace orrery {
namespace {

constexpr double kMinChannelBytes = 64.0 * 1024;         // an eighth of the 512 KiB chunk
constexpr double kMaxChannelBytes = 16.0 * 1024 * 1024;  // 32 chunks
constexpr double kLLChannelBytes = 16.0 * 1024;          // NCCL's P2P LL threshold

int64_t pool(int64_t channels) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(channels, 1))));
}

}  // namespace

int64_t p2p_channels_per_peer(double peer_bytes, int64_t ranks, int64_t channels) {
  const int64_t all = pool(channels);
  int64_t fair = all;
  while (fair * ranks > all && fair > 1)
    fair /= 2;
  int64_t used = std::clamp<int64_t>(
      static_cast<int64_t>(std::min(std::ceil(peer_bytes / kMinChannelBytes), 1e9)), 1, fair);
  while (peer_bytes / static_cast<double>(used) > kMaxChannelBytes && used * 2 <= all)
    used *= 2;
  return used;
}

int64_t p2p_channels_used(double bytes, int64_t ranks, int64_t channels) {
  const double peer = bytes / static_cast<double>(std::max<int64_t>(ranks, 1));
  return std::min(pool(channels), ranks * p2p_channels_per_peer(peer, ranks, channels));
}

Protocol p2p_protocol(double bytes, int64_t ranks, int64_t channels) {
  const double peer = bytes / static_cast<double>(std::max<int64_t>(ranks, 1));
  const auto per_peer = static_cast<double>(p2p_channels_per_peer(peer, ranks, channels));
  return peer <= per_peer * kLLChannelBytes ? Protocol::LL : Protocol::Simple;
}

double p2p_transfer_scale(Protocol protocol, double bytes) {
  if (protocol != Protocol::Simple || bytes <= 0) return transfer_scale(protocol, bytes);
  return 1 + std::pow(kP2pSimpleRampBytes / bytes, kRampExponent);
}

}  // namespace orrery
