// The collective operations Orrery models, shared by the workload IR and the network models.
#pragma once

#include <cstdint>
#include <string_view>

namespace orrery {

enum class CollectiveKind : uint8_t {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,  // from the group's first rank to all
  Reduce,     // from all to the group's first rank
  SendRecv,   // every rank sends to the next one (a shift, as nccl-tests' sendrecv)
};

// "all-reduce", "all-gather", "reduce-scatter", "all-to-all", "broadcast", "reduce", "sendrecv".
constexpr std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "all-reduce";
    case CollectiveKind::AllGather:
      return "all-gather";
    case CollectiveKind::ReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::AllToAll:
      return "all-to-all";
    case CollectiveKind::Broadcast:
      return "broadcast";
    case CollectiveKind::Reduce:
      return "reduce";
    case CollectiveKind::SendRecv:
      return "sendrecv";
  }
  return "?";
}

}  // namespace orrery
