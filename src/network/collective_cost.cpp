#include "network/collective_cost.h"

#include <algorithm>

namespace orrery {

Bandwidth ring_bus_bandwidth(const ServerNetwork& network, const GroupShape& shape) {
  const Bandwidth up = network.scale_up.effective();
  if (shape.servers <= 1) return up;
  const Bandwidth out = network.scale_out.effective() * static_cast<double>(shape.ranks_per_server);
  return shape.ranks_per_server > 1 ? std::min(up, out) : out;
}

Time collective_time(const ServerNetwork& network, CollectiveKind kind, Bytes bytes,
                     const GroupShape& shape) {
  const int64_t n = shape.ranks;
  if (n <= 1) return Time::zero();
  const Time alpha = shape.servers > 1
                         ? std::max(network.scale_up.latency, network.scale_out.latency)
                         : network.scale_up.latency;
  const double size = static_cast<double>(bytes);
  const double share = static_cast<double>(n - 1) / static_cast<double>(n);
  switch (kind) {
    case CollectiveKind::AllReduce:
      return ring_bus_bandwidth(network, shape).time_for(2 * share * size) + alpha * (2 * (n - 1));
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
      return ring_bus_bandwidth(network, shape).time_for(share * size) + alpha * (n - 1);
    case CollectiveKind::AllToAll: {
      const int64_t g = shape.servers > 1 ? shape.ranks_per_server : n;
      const double per_peer = size / static_cast<double>(n);
      Time t = network.scale_up.effective().time_for(per_peer * static_cast<double>(g - 1));
      if (n > g)
        t = std::max(t,
                     network.scale_out.effective().time_for(per_peer * static_cast<double>(n - g)));
      return t + alpha;
    }
  }
  return Time::zero();
}

Time point_to_point_time(const ServerNetwork& network, Bytes bytes, bool across_servers) {
  const Tier& tier = across_servers ? network.scale_out : network.scale_up;
  return tier.effective().time_for(static_cast<double>(bytes)) + tier.latency;
}

}  // namespace orrery
