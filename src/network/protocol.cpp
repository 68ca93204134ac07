#include "network/protocol.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace orrery {
namespace {

constexpr std::array<Protocol, 3> kProtocols = {Protocol::LL, Protocol::LL128, Protocol::Simple};

// NCCL's tuning constants (base / NVLink hop / network hop / tree network hop latency in us): LL
// 6.6 / 0.6 / 2.7 / 5, LL128 14 / 1.9 / 4 / 8.5, Simple 8.4 / 3.4 / 14 / 14; threads per channel x
// bytes per thread before another channel: LL 512 x 8, LL128 640 x 8, Simple 512 x 64.
constexpr ProtocolTerms kLL{6.6 / 8.4, 0.6 / 3.4, 2.7 / 14, 5.0 / 14, 0.38, 0, 512.0 * 8};
constexpr ProtocolTerms kLL128{14.0 / 8.4, 1.9 / 3.4, 4.0 / 14, 8.5 / 14, 0.92, 4.16e5, 640.0 * 8};
constexpr ProtocolTerms kSimple{1, 1, 1, 1, 1, 4.48e6, 512.0 * 64};

// NCCL's tree correction factors for S = 64 B x 2^i, i = 0 .. 21 (the last for 128 MiB and up).
constexpr std::array<double, 22> kTreeLL = {1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6,
                                            0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0};
constexpr std::array<double, 22> kTreeLL128 = {1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8,
                                               0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6,
                                               0.8, 0.9, 0.9, 0.9, 0.9, 1.0};
constexpr std::array<double, 22> kTreeSimple = {0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8,
                                                0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6,
                                                0.7, 0.8, 0.7, 0.7, 0.8, 0.9};

}  // namespace

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      return "Simple";
  }
  return "?";
}

const ProtocolTerms& terms(Protocol protocol) {
  switch (protocol) {
    case Protocol::LL:
      return kLL;
    case Protocol::LL128:
      return kLL128;
    case Protocol::Simple:
      break;
  }
  return kSimple;
}

std::span<const Protocol> all_protocols() {
  return kProtocols;
}

double transfer_scale(Protocol protocol, double bytes) {
  const ProtocolTerms& p = terms(protocol);
  const double ramp =
      p.ramp_bytes > 0 && bytes > 0 ? std::pow(p.ramp_bytes / bytes, kRampExponent) : 0.0;
  return (1 + ramp) / p.fraction;
}

double tree_size_efficiency(Protocol protocol, double bytes) {
  const auto& table = protocol == Protocol::LL      ? kTreeLL
                      : protocol == Protocol::LL128 ? kTreeLL128
                                                    : kTreeSimple;
  const double units = std::max(bytes / 64.0, 1.0);
  const auto i = std::min<size_t>(static_cast<size_t>(std::floor(std::log2(units))), 21);
  return table[i] / table.back();
}

Time own_shard_time(CollectiveKind kind, double bytes, int64_t ranks,
                    std::optional<Bandwidth> memory) {
  const bool sharded = kind == CollectiveKind::AllReduce || kind == CollectiveKind::AllGather ||
                       kind == CollectiveKind::ReduceScatter || kind == CollectiveKind::AllToAll;
  if (!memory || !sharded || ranks < 2) return Time::zero();
  return memory->time_for(kOwnShardCopies * bytes / static_cast<double>(ranks));
}

int64_t channels_used(Protocol protocol, double bytes, int64_t max_channels) {
  const double wanted = std::ceil(bytes / terms(protocol).channel_bytes);
  return std::clamp<int64_t>(static_cast<int64_t>(std::min(wanted, 1e9)), 1,
                             std::max<int64_t>(max_channels, 1));
}

}  // namespace orrery
