#include "training/graph_simulator.h"

#include "training/graph_tasks.h"
#include "training/rank_classes.h"

namespace orrery {

Result simulate_task_graphs(const Workload& workload, const Cluster& cluster,
                            const SimulationOptions& options, Diagnostics& diagnostics) {
  const GraphProgram& program = *workload.graph;
  GraphPricer pricer(program, cluster, options.algorithm);
  const GraphTasks tasks =
      build_graph_tasks(program, rank_classes(program, cluster.network), pricer);
  if (tasks.classes.collapsed)
    diagnostics.warn({workload.source, 0},
                     std::to_string(program.ranks.size()) + " ranks run alike in " +
                         std::to_string(tasks.classes.representatives.size()) +
                         " class(es) after renaming ranks; simulating " +
                         std::to_string(tasks.classes.representatives.size()) + " rank(s)");
  return graph_result("event", workload, cluster, tasks, engine::simulate(tasks.graph));
}

}  // namespace orrery
