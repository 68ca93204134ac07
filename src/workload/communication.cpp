#include "workload/communication.h"

namespace orrery {

std::string_view to_string(CommGroup group) {
  switch (group) {
    case CommGroup::Tensor:
      return "tp";
    case CommGroup::Expert:
      return "ep";
    case CommGroup::Data:
      return "dp";
    case CommGroup::ExpertData:
      return "dp_ep";
    case CommGroup::Pipeline:
      return "pp";
    case CommGroup::Context:
      return "cp";
    case CommGroup::Embedding:
      return "emb";
    case CommGroup::ModelParallel:
      return "mp";
    case CommGroup::World:
      return "world";
  }
  return "?";
}

}  // namespace orrery
