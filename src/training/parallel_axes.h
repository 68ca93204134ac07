// The parallel axes of a job in rank order (innermost first), and which axes each communication
// group spans. The cluster's placement names tp, ep, dp and pp; context parallelism (cp) always
// sits right outside tp, as Megatron-LM orders its ranks (tp-cp-ep-dp-pp). Sizes: tp, cp, ep, pp
// as given, dp the expert-data-parallel degree dp / ep (ep is carved out of dp).
//   tensor: tp        context: cp       expert: ep       pipeline: pp
//   data: cp, ep, dp (gradients reduce over DP x CP)    expert-data: cp, dp
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

}  // namespace orrery
