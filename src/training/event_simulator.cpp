#include "training/event_simulator.h"

#include <limits>
#include <map>

#include "engine/task_graph.h"
#include "training/compute_waits.h"
#include "training/graph_simulator.h"
#include "training/iteration_plan.h"
#include "training/parallel_axes.h"
#include "training/stage_program.h"
#include "training/stage_timeline.h"

namespace orrery {
namespace {

using engine::StreamId;
using engine::TaskGraph;
using engine::TaskId;

constexpr TaskId kNone = std::numeric_limits<TaskId>::max();

// The stage programs as one task graph: one representative rank per stage.
struct IterationGraph {
  explicit IterationGraph(const IterationPrograms& programs) {
    std::vector<TaskId> sender(static_cast<size_t>(programs.transfer_keys), kNone);
    std::vector<std::pair<int64_t, TaskId>> receivers;
    size_t tasks = 0, deps = 0;
    for (const StageProgram& program : programs.stages) {
      tasks += program.tasks.size();
      deps += program.deps.size();
    }
    deps += static_cast<size_t>(programs.transfer_keys);
    graph.reserve(tasks, deps);
    task.reserve(tasks);
    // A collective joining stages (parallel_axes.h, joins_stages) starts on every stage once
    // each stage has reached it: the n-th of its group on each stage waits for what the others'
    // wait for (their dependencies and the task before them on their stream).
    std::map<std::pair<CommGroup, uint32_t>, std::vector<std::pair<TaskId, std::vector<TaskId>>>>
        joint;
    for (const StageProgram& program : programs.stages) {
      std::array<StreamId, kStageStreams> streams{};
      for (StreamId& s : streams)
        s = graph.add_stream();
      std::array<TaskId, kStageStreams> previous;
      previous.fill(kNone);
      std::array<uint32_t, kCommGroups> nth{};
      const auto first = static_cast<TaskId>(graph.task_count());
      first_task.push_back(first);
      for (const StageTask& t : program.tasks) {
        const auto stream = static_cast<size_t>(t.stream);
        const TaskId id = graph.add_task(streams[stream], t.duration);
        for (uint32_t k = t.deps_begin; k < t.deps_end; ++k)
          depend(first + program.deps[k], id);
        if (t.receives >= 0) receivers.emplace_back(t.receives, id);
        if (t.sends >= 0) sender[static_cast<size_t>(t.sends)] = id;
        if (t.kind == StageTaskKind::Collective && joins_stages(t.comm.group) &&
            programs.stages.size() > 1) {
          std::vector<TaskId> ready;
          for (uint32_t k = t.deps_begin; k < t.deps_end; ++k)
            ready.push_back(first + program.deps[k]);
          if (previous[stream] != kNone) ready.push_back(previous[stream]);
          const auto n = nth[static_cast<size_t>(t.comm.group)]++;
          joint[{t.comm.group, n}].emplace_back(id, std::move(ready));
        }
        previous[stream] = id;
        task.push_back(&t);
      }
    }
    for (const auto& [key, receiver] : receivers)
      depend(sender[static_cast<size_t>(key)], receiver);
    for (const auto& [key, members] : joint)
      for (const auto& [id, ready] : members)
        for (const auto& [other, waits] : members)
          if (other != id)
            for (const TaskId before : waits)
              depend(before, id);
  }

  void depend(TaskId before, TaskId after) { graph.add_dependency(before, after); }

  TaskGraph graph;
  std::vector<const StageTask*> task;  // by TaskId
  std::vector<TaskId> first_task;      // by stage
};

// Partitions [0, finish) of a stage's compute stream into compute, exposed communication per
// group, transfers in flight and bubble. A gap before a compute task is charged to what it
// waited for: the dependency that finished last.
StageTiming account(int64_t stage, const StageProgram& program, const IterationGraph& g,
                    const engine::Timeline& timeline, const std::vector<TaskId>& binding) {
  StageTiming result;
  result.stage = stage;
  Breakdown& b = result.breakdown;
  Time previous = Time::zero();
  const TaskId first = g.first_task[static_cast<size_t>(stage)];
  for (size_t i = 0; i < program.tasks.size(); ++i) {
    if (program.tasks[i].kind != StageTaskKind::Compute) continue;
    const TaskId t = first + static_cast<TaskId>(i);
    const Time gap = timeline.start[t] - previous;
    if (gap > Time::zero()) {
      const TaskId c = binding[t];
      charge_wait(b, gap, previous, {g.task[c], timeline.start[c], timeline.finish[c]});
    }
    b.compute += program.tasks[i].duration - program.tasks[i].exposed_overlap;
    if (program.tasks[i].exposed_overlap > Time::zero())
      b.exposed_comm[CommGroup::Tensor] += program.tasks[i].exposed_overlap;
    previous = timeline.finish[t];
  }
  result.finish = previous;
  return result;
}

}  // namespace

Result EventSimulator::simulate(const Workload& workload, const Cluster& cluster,
                                const SimulationOptions& options, Diagnostics& diagnostics) const {
  if (workload.graph) return simulate_task_graphs(workload, cluster, options, diagnostics);
  const IterationPlan plan = plan_iteration(workload, cluster, options, diagnostics);
  const IterationPrograms programs = build_stage_programs(plan, options.record_timeline);
  const IterationGraph graph(programs);
  const engine::Timeline timeline = engine::simulate(graph.graph);

  // For each task, the dependency that finished last.
  std::vector<TaskId> binding(graph.graph.task_count(), kNone);
  for (const auto& [before, after] : graph.graph.dependencies())
    if (binding[after] == kNone || timeline.finish[before] > timeline.finish[binding[after]])
      binding[after] = before;

  std::vector<StageTiming> stages;
  for (const StageProgram& program : programs.stages)
    stages.push_back(account(program.stage, program, graph, timeline, binding));
  Result result =
      plan_result("event", workload, cluster, plan, std::move(stages), options.layer_rows);
  result.simulated_tasks = static_cast<int64_t>(graph.graph.task_count());
  if (options.record_timeline) {
    result.timeline.emplace();
    for (const StageProgram& program : programs.stages) {
      const TaskId first = graph.first_task[static_cast<size_t>(program.stage)];
      for (TimelineTrack& track :
           stage_tracks(workload.program, plan, program, -1, [&](uint32_t t) {
             return std::pair(timeline.start[first + t], timeline.finish[first + t]);
           }))
        result.timeline->tracks.push_back(std::move(track));
    }
  }
  return result;
}

}  // namespace orrery
