#include "training/graph_flow_simulator.h"

#include <span>

#include "engine/in_order_streams.h"
#include "engine/kernel.h"
#include "network/collective_flows.h"
#include "training/graph_tasks.h"

namespace orrery {
namespace {

using engine::StreamId;
using engine::TaskId;

struct Run {  // a collective in flight
  TaskId task = 0;
  const std::vector<RoutedStep>* steps = nullptr;
  size_t step = 0;
  int64_t repeat = 0;
  size_t outstanding = 0;
};

// What an engine::Event means here: (kind, a).
enum EventKind : uint32_t {
  kTaskFinish,  // (task): the task ends
  kSendFlow,    // (task): a send's bytes are in; its route's latency follows
  kStepFlow,    // (run): one flow of a collective's step ends
  kStepDone,    // (run): the step's flows and latency are over
};

class FlowRun {
 public:
  FlowRun(const GraphProgram& program, const GraphTasks& tasks, GraphPricer& pricer)
      : program_(program), tasks_(tasks), pricer_(pricer), kernel_(pricer.links().capacities()) {
    const engine::TaskGraph& g = tasks.graph;
    const size_t n = g.task_count();
    successor_begin_.assign(n + 1, 0);
    std::vector<uint32_t> waiting(n, 0);
    for (const auto& [before, after] : g.dependencies()) {
      ++successor_begin_[before + 1];
      ++waiting[after];
    }
    for (size_t i = 0; i < n; ++i)
      successor_begin_[i + 1] += successor_begin_[i];
    successors_.resize(g.dependency_count());
    std::vector<uint32_t> fill(successor_begin_.begin(), successor_begin_.end() - 1);
    for (const auto& [before, after] : g.dependencies())
      successors_[fill[before]++] = after;
    stream_tasks_.resize(g.stream_count());
    for (TaskId t = 0; t < n; ++t)
      stream_tasks_[g.stream_of(t)].push_back(t);
    streams_ = engine::InOrderStreams(std::move(waiting));
    for (const std::vector<TaskId>& order : stream_tasks_)
      streams_.add_stream(order);
    latency_.assign(g.stream_count(), Time::zero());
    timeline_.start.assign(n, Time::zero());
    timeline_.finish.assign(n, Time::zero());
  }

  engine::Timeline run() {
    for (StreamId s = 0; s < stream_tasks_.size(); ++s)
      try_start(s);
    kernel_.run([this](const engine::Event& e) { handle(e); });
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
        step_flow_done(e.a);
        break;
      case kStepDone:
        step_done(e.a);
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
    for (uint32_t k = successor_begin_[t]; k < successor_begin_[t + 1]; ++k)
      if (streams_.release(successors_[k])) try_start(tasks_.graph.stream_of(successors_[k]));
    try_start(s);
  }

  void send(TaskId t, const GraphTask& g) {
    path_.clear();
    const int64_t from = tasks_.origin[t].rank;
    const Time latency = pricer_.links().route(from, g.peer, hash_++, path_);
    if (g.bytes == 0 || path_.empty()) {
      kernel_.after(latency, {kTaskFinish, t, 0});
      return;
    }
    latency_[tasks_.graph.stream_of(t)] = latency;
    kernel_.start(path_, static_cast<double>(g.bytes), {kSendFlow, t, 0});
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
    Run run;
    run.task = t;
    run.steps = &routed(g);
    uint32_t id = 0;
    if (!free_runs_.empty()) {
      id = free_runs_.back();
      free_runs_.pop_back();
      runs_[id] = run;
    } else {
      id = static_cast<uint32_t>(runs_.size());
      runs_.push_back(run);
    }
    begin_step(id);
  }

  void begin_step(uint32_t id) {
    Run& run = runs_[id];
    if (run.step >= run.steps->size()) {
      const TaskId t = run.task;
      free_runs_.push_back(id);
      finish(t);
      return;
    }
    const RoutedStep& s = (*run.steps)[run.step];
    run.outstanding = s.bytes.size();
    kernel_.start_batch(s.links, s.path_begin, s.bytes, {kStepFlow, id, 0});
    if (run.outstanding == 0) kernel_.after(s.latency, {kStepDone, id, 0});
  }

  void step_done(uint32_t id) {
    Run& run = runs_[id];
    if (++run.repeat >= (*run.steps)[run.step].repeat) {
      run.repeat = 0;
      ++run.step;
    }
    begin_step(id);
  }

  void step_flow_done(uint32_t id) {
    Run& run = runs_[id];
    if (--run.outstanding == 0) kernel_.after((*run.steps)[run.step].latency, {kStepDone, id, 0});
  }

  const GraphProgram& program_;
  const GraphTasks& tasks_;
  GraphPricer& pricer_;
  std::vector<uint32_t> successor_begin_, successors_;
  std::vector<std::vector<TaskId>> stream_tasks_;  // each stream's tasks in order
  engine::InOrderStreams streams_;
  std::vector<Time> latency_;  // per stream: of the send in flight
  engine::Timeline timeline_;
  engine::Kernel kernel_;
  uint64_t hash_ = 0;
  std::vector<LinkId> path_;
  std::map<std::tuple<int32_t, CollectiveKind, Bytes>, std::vector<RoutedStep>> routed_;
  std::vector<Run> runs_;
  std::vector<uint32_t> free_runs_;
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
