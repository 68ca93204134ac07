#include "training/graph_flow_simulator.h"

#include <span>

#include "engine/kernel.h"
#include "engine/task_graph.h"
#include "network/collective_flows.h"
#include "network/collective_runs.h"
#include "training/graph_tasks.h"

namespace orrery {
namespace {

using engine::StreamId;
using engine::TaskId;

// What an engine::Event means here: (kind, a).
enum EventKind : uint32_t {
  kTaskFinish,  // (task): the task ends
  kSendFlow,    // (task): a send's bytes are in; its route's latency follows
  kStepFlow,    // (run): one flow of a collective's step ends (CollectiveRuns)
  kStepDone,    // (run): a run of the step and its latency are over (kStepFlow + 1)
};

class FlowRun {
 public:
  FlowRun(const GraphProgram& program, const GraphTasks& tasks, GraphPricer& pricer)
      : program_(program),
        tasks_(tasks),
        pricer_(pricer),
        run_state_(tasks.graph),
        streams_(run_state_.streams()),
        kernel_(pricer.links().capacities()),
        collectives_(kernel_, kStepFlow, [this](TaskId t) { finish(t); }) {
    const size_t n = tasks.graph.task_count();
    latency_.assign(tasks.graph.stream_count(), Time::zero());
    timeline_.start.assign(n, Time::zero());
    timeline_.finish.assign(n, Time::zero());
  }

  // Throws std::logic_error naming the file and node of a task that never started (the graph's
  // checks, build_graph_tasks, refuse such graphs first: this guards the run itself).
  engine::Timeline run() {
    for (StreamId s = 0; s < tasks_.graph.stream_count(); ++s)
      try_start(s);
    kernel_.run([this](const engine::Event& e) { handle(e); });
    if (const TaskId t = run_state_.stuck(); t != engine::InOrderStreams::kNone) {
      const GraphOrigin o = tasks_.origin[t];
      const RankGraph& g = program_.ranks[static_cast<size_t>(o.rank)];
      throw std::logic_error("flow simulation deadlock: " + g.source + ": node " +
                             std::to_string(g.tasks[o.task].node) + " of rank " +
                             std::to_string(o.rank) + " never started");
    }
    timeline_.makespan = kernel_.now();
    return std::move(timeline_);
  }

  uint64_t flows() const { return kernel_.sharing().activities_started(); }

 private:
  const GraphTask& task_of(TaskId t) const {
    const GraphOrigin o = tasks_.origin[t];
    return program_.ranks[static_cast<size_t>(o.rank)].tasks[o.task];
  }

  void handle(const engine::Event& e) {
    switch (e.kind) {
      case kTaskFinish:
        finish(e.a);
        break;
      case kSendFlow:
        kernel_.after(latency_[tasks_.graph.stream_of(e.a)], {kTaskFinish, e.a, 0});
        break;
      case kStepFlow:
      case kStepDone:
        collectives_.handle(e);
        break;
    }
  }

  void try_start(StreamId s) {
    const TaskId t = streams_.ready(s);
    if (t == engine::InOrderStreams::kNone) return;
    streams_.start(s);
    timeline_.start[t] = kernel_.now();
    const GraphTask& g = task_of(t);
    if (g.kind == GraphTaskKind::Collective)
      launch(t, g);
    else if (g.kind == GraphTaskKind::Send)
      send(t, g);
    else
      kernel_.after(tasks_.graph.duration_of(t), {kTaskFinish, t, 0});
  }

  void finish(TaskId t) {
    timeline_.finish[t] = kernel_.now();
    const StreamId s = tasks_.graph.stream_of(t);
    streams_.finish(s);
    for (const TaskId next : run_state_.successors().of(t))
      if (streams_.release(next)) try_start(tasks_.graph.stream_of(next));
    try_start(s);
  }

  void send(TaskId t, const GraphTask& g) {
    path_.clear();
    const int64_t from = tasks_.origin[t].rank;
    const Time route = pricer_.links().route(from, g.peer, hash_++, path_);
    // The point-to-point path's protocol as the event mode prices it (point_to_point_cost()).
    const TransferCost cost = pricer_.transfer(from, g.peer, g.bytes);
    const Time latency = cost.latency.value_or(route);
    if (g.bytes == 0 || path_.empty()) {
      kernel_.after(latency, {kTaskFinish, t, 0});
      return;
    }
    latency_[tasks_.graph.stream_of(t)] = latency;
    kernel_.start(path_, static_cast<double>(g.bytes) * cost.rate, {kSendFlow, t, 0});
  }

  const std::vector<RoutedStep>& routed(const GraphTask& g) {
    const auto key = std::make_tuple(g.group, g.collective, g.bytes);
    if (const auto it = routed_.find(key); it != routed_.end()) return it->second;
    const std::vector<int64_t>& members = pricer_.members(g.group);
    const CollectiveFlowPlan plan =
        flow_plan(pricer_.model(g.group), g.collective, g.bytes, pricer_.algorithm(), members);
    return routed_.emplace(key, route_steps(pricer_.topology(), pricer_.links(), plan.steps, hash_))
        .first->second;
  }

  void launch(TaskId t, const GraphTask& g) {
    if (pricer_.members(g.group).size() <= 1) {
      kernel_.after(Time::zero(), {kTaskFinish, t, 0});
      return;
    }
    collectives_.launch(routed(g), t);
  }

  const GraphProgram& program_;
  const GraphTasks& tasks_;
  GraphPricer& pricer_;
  engine::GraphStreams run_state_;
  engine::InOrderStreams& streams_;
  std::vector<Time> latency_;  // per stream: of the send in flight
  engine::Timeline timeline_;
  engine::Kernel kernel_;
  CollectiveRuns<TaskId> collectives_;
  uint64_t hash_ = 0;
  std::vector<LinkId> path_;
  std::map<std::tuple<int32_t, CollectiveKind, Bytes>, std::vector<RoutedStep>> routed_;
};

}  // namespace

Result simulate_task_graph_flows(const Workload& workload, const Cluster& cluster,
                                 const SimulationOptions& options, Diagnostics&) {
  const GraphProgram& program = *workload.graph;
  GraphPricer pricer(program, cluster, options.algorithm);
  const GraphTasks tasks = build_graph_tasks(program, every_rank(program.ranks.size()), pricer);
  FlowRun run(program, tasks, pricer);
  Result result = graph_result("flow", workload, cluster, tasks, run.run());
  result.flows = static_cast<int64_t>(run.flows());
  return result;
}

}  // namespace orrery
