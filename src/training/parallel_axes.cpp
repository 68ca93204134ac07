#include "training/parallel_axes.h"

#include <algorithm>

#include "core/diagnostics.h"

namespace orrery {

std::string_view to_string(TrainingAxis axis) {
  switch (axis) {
    case TrainingAxis::Tp:
      return "tp";
    case TrainingAxis::Cp:
      return "cp";
    case TrainingAxis::Ep:
      return "ep";
    case TrainingAxis::Dp:
      return "dp";
    case TrainingAxis::Pp:
      return "pp";
  }
  return "?";
}

std::vector<TrainingAxis> rank_order(const std::vector<std::string>& placement) {
  std::vector<TrainingAxis> order;
  for (const std::string& name : placement) {
    if (name == "tp") {
      order.push_back(TrainingAxis::Tp);
      order.push_back(TrainingAxis::Cp);
    } else if (name == "ep") {
      order.push_back(TrainingAxis::Ep);
    } else if (name == "dp") {
      order.push_back(TrainingAxis::Dp);
    } else if (name == "pp") {
      order.push_back(TrainingAxis::Pp);
    } else {
      throw InputError("placement: expected the axes tp, ep, dp and pp, found '" + name + "'");
    }
  }
  return order;
}

std::vector<ParallelAxis> parallel_axes(const Parallelism& par,
                                        const std::vector<TrainingAxis>& order) {
  const auto size = [&](TrainingAxis axis) {
    switch (axis) {
      case TrainingAxis::Tp:
        return par.tp;
      case TrainingAxis::Cp:
        return par.cp;
      case TrainingAxis::Ep:
        return par.ep;
      case TrainingAxis::Dp:
        return par.expert_dp();
      case TrainingAxis::Pp:
        return par.pp;
    }
    return int64_t{1};
  };
  std::vector<ParallelAxis> axes;
  for (const TrainingAxis axis : order)
    axes.push_back({std::string(to_string(axis)), size(axis)});
  return axes;
}

std::vector<size_t> group_axes(CommGroup group, const std::vector<TrainingAxis>& order) {
  const auto at = [&](TrainingAxis axis) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), axis) - order.begin());
  };
  switch (group) {
    case CommGroup::Tensor:
      return {at(TrainingAxis::Tp)};
    case CommGroup::Context:
      return {at(TrainingAxis::Cp)};
    case CommGroup::Expert:
      return {at(TrainingAxis::Ep)};
    case CommGroup::Data:
      return {at(TrainingAxis::Cp), at(TrainingAxis::Ep), at(TrainingAxis::Dp)};
    case CommGroup::ExpertData:
      return {at(TrainingAxis::Cp), at(TrainingAxis::Dp)};
    case CommGroup::Pipeline:
    case CommGroup::Embedding:
      return {at(TrainingAxis::Pp)};
    case CommGroup::ModelParallel:
      return {at(TrainingAxis::Tp), at(TrainingAxis::Pp)};
    case CommGroup::World: {
      std::vector<size_t> all(order.size());
      for (size_t i = 0; i < all.size(); ++i)
        all[i] = i;
      return all;
    }
  }
  return {};
}

}  // namespace orrery
