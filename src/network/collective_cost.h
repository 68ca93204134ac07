// Alpha-beta cost of collectives and point-to-point transfers on a ServerNetwork.
//
// A group of n ranks spread over `servers` servers with `ranks_per_server` in each:
//   ring all-reduce:          2(n-1)/n * S / B_bus + 2(n-1) * alpha
//   ring all-gather / reduce-scatter: (n-1)/n * S / B_bus + (n-1) * alpha
//   direct all-to-all:        max(S(g-1)/n / B_up, S(n-g)/n / B_out) + alpha   (g = ranks/server)
//   point-to-point:           S / B_link + alpha_link
// B_bus is the bottleneck of the tiers the ring crosses: the scale-up rate inside a server, and
// across servers the scale-out rate of all the group's GPUs on a server (their NICs carry the
// ring's crossing in parallel channels): B_bus = min(B_up, g * B_out). alpha is the latency of
// the slowest tier crossed. S follows the nccl-tests size convention (see
// workload/communication.h).
#pragma once

#include <cstdint>

#include "core/bandwidth.h"
#include "core/collective_kind.h"
#include "core/time.h"
#include "network/server_network.h"

namespace orrery {

// How a communicator's ranks lie on the servers.
struct GroupShape {
  int64_t ranks = 1;
  int64_t servers = 1;
  int64_t ranks_per_server = 1;  // the most on any one server
};

Time collective_time(const ServerNetwork& network, CollectiveKind kind, Bytes bytes,
                     const GroupShape& shape);

Time point_to_point_time(const ServerNetwork& network, Bytes bytes, bool across_servers);

// Bus bandwidth of a ring over `shape` (what nccl-tests reports as busbw for large messages).
Bandwidth ring_bus_bandwidth(const ServerNetwork& network, const GroupShape& shape);

}  // namespace orrery
