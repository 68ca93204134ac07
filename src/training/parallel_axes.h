// The parallel axes of a job in rank order (innermost first), and which axes each communication
// group spans. The cluster's placement names tp, ep, dp and pp; context parallelism (cp) always
// sits right outside tp, as Megatron-LM orders its ranks (tp-cp-ep-dp-pp). Sizes: tp, cp, ep, pp
// as given, dp the expert-data-parallel degree dp / ep (ep is carved out of dp).
//   tensor: tp        context: cp       expert: ep       pipeline: pp
//   data: cp, ep, dp (gradients reduce over DP x CP)    expert-data: cp, dp
//   embedding: pp, its first and last coordinate only    model-parallel: tp, pp    world: all
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "network/rank_placement.h"
#include "workload/communication.h"
#include "workload/parallelism.h"

namespace orrery {

enum class TrainingAxis { Tp, Cp, Ep, Dp, Pp };

std::string_view to_string(TrainingAxis axis);  // "tp", "cp", "ep", "dp", "pp"

// The placement's axes with cp inserted after tp. Throws InputError for a name other than tp, ep,
// dp and pp (placements are checked when read, so this guards the callers that skip that).
std::vector<TrainingAxis> rank_order(const std::vector<std::string>& placement);

// The axes of `order` (from rank_order) with their names and sizes for `par`.
std::vector<ParallelAxis> parallel_axes(const Parallelism& par,
                                        const std::vector<TrainingAxis>& order);

// Indices into `order` of the axes `group` spans.
std::vector<size_t> group_axes(CommGroup group, const std::vector<TrainingAxis>& order);

// Whether `group` takes only the first and last coordinate of its one axis (the embedding group:
// RankPlacement::ends_of gives the placement whose groups along that axis are those pairs).
constexpr bool at_axis_ends(CommGroup group) {
  return group == CommGroup::Embedding;
}

// Whether a collective of `group` joins ranks of different pipeline stages, whose programs differ:
// the simulators match its members by their order on the group's stream (as NCCL matches the
// calls on a communicator) and start it when the last member reaches it.
constexpr bool joins_stages(CommGroup group) {
  return group == CommGroup::Embedding || group == CommGroup::ModelParallel ||
         group == CommGroup::World;
}

}  // namespace orrery
