#include "training/graph_simulator.h"

#include "training/graph_tasks.h"
#include "training/rank_classes.h"

namespace orrery {

Result simulate_task_graphs(const Workload& workload, const Cluster& cluster,
                            const SimulationOptions& options, Diagnostics& diagnostics) {
  const GraphProgram& program = *workload.graph;
  GraphPricer pricer(program, cluster, options.algorithm);
  const RankClasses classes = rank_classes(program, cluster.network);
  if (classes.collapsed)
    diagnostics.warn({workload.source, 0},
                     std::to_string(program.ranks.size()) + " ranks run alike in " +
                         std::to_string(classes.representatives.size()) +
                         " class(es) after renaming ranks; simulating " +
                         std::to_string(classes.representatives.size()) + " rank(s)");
  const GraphTasks tasks = build_graph_tasks(program, classes, pricer);
  return graph_result("event", workload, cluster, classes, tasks, engine::simulate(tasks.graph));
}

}  // namespace orrery
