#include "dataflow/sharding_plan.h"

namespace orrery {

ShardingPlan sharding_from_file(const DataflowProblem& problem) {
  ShardingPlan plan;
  for (const DataflowKernel& k : problem.kernels) {
    plan.axis.push_back(k.sharding.value_or(TensorAxis::None));
    plan.collective.push_back(k.collective);
    if (k.collective == DataflowCollective::AllReduce) plan.communicated_bytes += k.output_bytes;
  }
  for (const DataflowEdge& e : problem.edges) {
    plan.edge_collective.push_back(e.collective);
    if (e.collective != DataflowCollective::None) plan.communicated_bytes += e.tensor_bytes;
  }
  return plan;
}

}  // namespace orrery
