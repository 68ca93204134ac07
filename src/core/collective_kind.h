// The collective operations Orrery models, shared by the workload IR and the network models.
#pragma once

#include <cstdint>
#include <string_view>

namespace orrery {

enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter, AllToAll };

// "all-reduce", "all-gather", "reduce-scatter", "all-to-all".
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
  }
  return "?";
}

}  // namespace orrery
