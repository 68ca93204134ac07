#include "training/parallel_axes.h"

#include <algorithm>

namespace orrery {

std::vector<std::string> rank_order(const std::vector<std::string>& placement) {
  std::vector<std::string> order;
  for (const std::string& name : placement) {
    order.push_back(name);
    if (name == "tp") order.emplace_back("cp");
  }
  return order;
}

std::vector<ParallelAxis> parallel_axes(const Parallelism& par,
                                        const std::vector<std::string>& order) {
  std::vector<ParallelAxis> axes;
  for (const std::string& name : order)
    axes.push_back({name, name == "tp"   ? par.tp
                          : name == "cp" ? par.cp
                          : name == "ep" ? par.ep
                          : name == "pp" ? par.pp
                                         : par.expert_dp()});
  return axes;
}

std::vector<size_t> group_axes(CommGroup group, const std::vector<std::string>& order) {
  const auto axis = [&](const char* name) {
    return static_cast<size_t>(std::find(order.begin(), order.end(), name) - order.begin());
  };
  switch (group) {
    case CommGroup::Tensor:
      return {axis("tp")};
    case CommGroup::Context:
      return {axis("cp")};
    case CommGroup::Expert:
      return {axis("ep")};
    case CommGroup::Data:
      return {axis("cp"), axis("ep"), axis("dp")};
    case CommGroup::ExpertData:
      return {axis("cp"), axis("dp")};
    case CommGroup::Pipeline:
      return {axis("pp")};
  }
  return {};
}

}  // namespace orrery
