#include "training/event_simulator.h"

#include <algorithm>
#include <array>
#include <limits>

#include "engine/task_graph.h"
#include "training/iteration_plan.h"
#include "training/pipeline_schedule.h"

namespace orrery {
namespace {

using engine::StreamId;
using engine::TaskGraph;
using engine::TaskId;

constexpr TaskId kNone = std::numeric_limits<TaskId>::max();

enum class Role : uint8_t { Compute, Collective, Transfer };

struct TaskInfo {
  Role role = Role::Compute;
  CommGroup group = CommGroup::Tensor;
};

// Builds the task graph of all stages and remembers what each task is, for the breakdown.
class IterationGraph {
 public:
  explicit IterationGraph(const IterationPlan& plan) : plan_(plan) {
    p_ = plan.parallelism.pp;
    m_ = plan.micro_batches();
    v_ = plan.chunks;
    incoming_.assign(static_cast<size_t>(2 * p_ * m_ * v_), kNone);
    for (int64_t s = 0; s < p_; ++s) {
      Stage stage;
      stage.compute = graph_.add_stream();
      for (auto& stream : stage.comm)
        stream = graph_.add_stream();
      stage.forward_link = graph_.add_stream();
      stage.backward_link = graph_.add_stream();
      stages_.push_back(stage);
    }
    buckets_by_layer_.resize(plan.layers.size());
    for (const GradientBucket& b : plan.buckets)
      buckets_by_layer_[b.layer].push_back(&b);
  }

  void build() {
    for (int64_t s = 0; s < p_; ++s) {
      for (const PipelineOp& op : pipeline_order(plan_.schedule, p_, s, m_, v_))
        op.forward ? forward(s, op) : backward(s, op);
      finish_iteration(s);
    }
    for (const auto& [key, receiver] : waiting_)
      depend(incoming_.at(key), receiver);
  }

  const TaskGraph& graph() const { return graph_; }
  const std::vector<TaskInfo>& info() const { return info_; }
  const std::vector<std::pair<TaskId, TaskId>>& edges() const { return edges_; }
  const std::vector<TaskId>& compute_tasks(int64_t s) const { return stages_[s].compute_tasks; }

 private:
  struct Stage {
    StreamId compute = 0;
    std::array<StreamId, 5> comm{};  // by CommGroup
    StreamId forward_link = 0;       // to the next stage (or wrap to stage 0 for the next chunk)
    StreamId backward_link = 0;      // to the previous stage
    TaskId last_compute = kNone;
    std::vector<TaskId> pending;  // collectives the next compute must wait for
    std::vector<TaskId> compute_tasks;
    std::array<TaskId, 5> last_comm{kNone, kNone, kNone, kNone, kNone};
    std::vector<TaskId> forward_end;  // per (micro-batch, chunk): last compute of the forward
  };

  TaskId add(StreamId stream, Time duration, TaskInfo info) {
    info_.push_back(info);
    return graph_.add_task(stream, duration);
  }
  void depend(TaskId before, TaskId after) {
    if (before == kNone) return;
    graph_.add_dependency(before, after);
    edges_.emplace_back(before, after);
  }

  TaskId compute(int64_t s, Time duration) {
    Stage& st = stages_[s];
    const TaskId t = add(st.compute, duration, {Role::Compute, CommGroup::Tensor});
    for (const TaskId w : st.pending)
      depend(w, t);
    st.pending.clear();
    st.last_compute = t;
    st.compute_tasks.push_back(t);
    return t;
  }

  // Issues a collective after the latest compute (and any collective still pending).
  TaskId issue(int64_t s, CommGroup group, Time cost) {
    Stage& st = stages_[s];
    const TaskId t = add(st.comm[static_cast<size_t>(group)], cost, {Role::Collective, group});
    depend(st.last_compute, t);
    for (const TaskId w : st.pending)
      depend(w, t);
    st.last_comm[static_cast<size_t>(group)] = t;
    return t;
  }

  void blocking(int64_t s, const PlannedComm& c) {
    stages_[s].pending.push_back(issue(s, c.comm.group, c.cost));
  }

  size_t key(bool forward, int64_t stage, int64_t mb, int64_t chunk) const {
    return static_cast<size_t>(((int64_t{forward} * p_ + stage) * m_ + mb) * v_ + chunk);
  }

  // A stage-to-stage transfer of the pass just built on stage `s`, received by `to`.
  void send(int64_t s, bool forward, int64_t to, int64_t mb, int64_t chunk) {
    Stage& st = stages_[s];
    const TaskId t = add(forward ? st.forward_link : st.backward_link, plan_.transfer,
                         {Role::Transfer, CommGroup::Pipeline});
    depend(st.last_compute, t);
    for (const TaskId w : st.pending)
      depend(w, t);
    incoming_[key(forward, to, mb, chunk)] = t;
  }

  void receive(int64_t s, bool forward, int64_t mb, int64_t chunk, TaskId receiver) {
    waiting_.emplace_back(key(forward, s, mb, chunk), receiver);
  }

  // The first compute of a pass, with its incoming dependency.
  void start_pass(int64_t s, const PipelineOp& op) {
    const TaskId first = compute(s, Time::zero());
    if (op.forward) {
      if (s > 0 || op.chunk > 0) receive(s, true, op.micro_batch, op.chunk, first);
    } else if (s < p_ - 1 || op.chunk < v_ - 1) {
      receive(s, false, op.micro_batch, op.chunk, first);
    } else {
      depend(stages_[s].forward_end[static_cast<size_t>(op.micro_batch * v_ + op.chunk)], first);
    }
  }

  const std::vector<size_t>& layers_of(const PipelineOp& op) const {
    return plan_.chunk_layers[static_cast<size_t>(op.micro_batch)][static_cast<size_t>(op.chunk)];
  }

  void run_forward(int64_t s, const PlannedLayer& layer) {
    compute(s, layer.forward.compute);
    if (layer.forward.comm) blocking(s, *layer.forward.comm);
  }

  void forward(int64_t s, const PipelineOp& op) {
    start_pass(s, op);
    for (const size_t l : layers_of(op))
      run_forward(s, plan_.layers[l]);
    Stage& st = stages_[s];
    if (st.forward_end.empty()) st.forward_end.assign(static_cast<size_t>(m_ * v_), kNone);
    st.forward_end[static_cast<size_t>(op.micro_batch * v_ + op.chunk)] = st.last_compute;
    if (s < p_ - 1)
      send(s, true, s + 1, op.micro_batch, op.chunk);
    else if (op.chunk < v_ - 1)
      send(s, true, 0, op.micro_batch, op.chunk + 1);
  }

  void backward(int64_t s, const PipelineOp& op) {
    start_pass(s, op);
    const bool last_micro_batch = op.micro_batch == m_ - 1;
    const auto& layers = layers_of(op);
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      const PlannedLayer& layer = plan_.layers[*it];
      for (const size_t r : layer.recompute)
        run_forward(s, plan_.layers[r]);
      compute(s, layer.input_grad.compute);
      TaskId input_grad_comm = kNone;
      if (layer.input_grad.comm) {
        input_grad_comm = issue(s, layer.input_grad.comm->comm.group, layer.input_grad.comm->cost);
        if (!plan_.overlap) stages_[s].pending.push_back(input_grad_comm);
      }
      compute(s, layer.weight_grad.compute);
      if (const auto& c = layer.weight_grad.comm) {
        if (c->role == CommRole::Async)
          issue(s, c->comm.group, c->cost);
        else
          blocking(s, *c);
      }
      if (last_micro_batch)
        for (const GradientBucket* b : buckets_by_layer_[*it])
          issue(s, b->group, b->cost);
      if (plan_.overlap && input_grad_comm != kNone) stages_[s].pending.push_back(input_grad_comm);
    }
    if (s > 0)
      send(s, false, s - 1, op.micro_batch, op.chunk);
    else if (op.chunk > 0)
      send(s, false, p_ - 1, op.micro_batch, op.chunk - 1);
  }

  void finish_iteration(int64_t s) {
    Stage& st = stages_[s];
    // Gradient reductions not already issued as buckets.
    for (const size_t i : plan_.iteration_layers) {
      const auto& c = plan_.layers[i].weight_grad.comm;
      if (!c || c->role != CommRole::GradientReduction) continue;
      if (!plan_.overlap)
        blocking(s, *c);
      else if (plan_.buckets.empty())
        issue(s, c->comm.group, c->cost);
    }
    for (const TaskId t : st.last_comm)
      st.pending.push_back(t);
    st.pending.erase(std::remove(st.pending.begin(), st.pending.end(), kNone), st.pending.end());

    std::vector<const PlannedComm*> gathers;
    for (const size_t i : plan_.iteration_layers) {
      const PlannedLayer& layer = plan_.layers[i];
      run_forward(s, layer);
      compute(s, layer.input_grad.compute);
      if (layer.input_grad.comm) blocking(s, *layer.input_grad.comm);
      compute(s, layer.weight_grad.compute);
      if (const auto& c = layer.weight_grad.comm) {
        if (c->role == CommRole::ParameterGather)
          gathers.push_back(&*c);
        else if (c->role != CommRole::GradientReduction)
          blocking(s, *c);
      }
    }
    for (const PlannedComm* c : gathers)
      blocking(s, *c);
    compute(s, Time::zero());  // end of the stage's iteration
  }

  const IterationPlan& plan_;
  int64_t p_ = 1, m_ = 1, v_ = 1;
  TaskGraph graph_;
  std::vector<TaskInfo> info_;
  std::vector<std::pair<TaskId, TaskId>> edges_;
  std::vector<Stage> stages_;
  std::vector<TaskId> incoming_;                    // transfer task by receiving key
  std::vector<std::pair<size_t, TaskId>> waiting_;  // (key, receiving compute)
  std::vector<std::vector<const GradientBucket*>> buckets_by_layer_;
};

// Partitions [0, finish) of a stage's compute stream into compute, exposed communication per
// group, transfers in flight and bubble. A gap before a compute task is charged to what it
// waited for: the dependency that finished last.
StageTiming account(int64_t stage, const IterationGraph& g, const engine::Timeline& timeline,
                    const std::vector<TaskId>& binding) {
  StageTiming result;
  result.stage = stage;
  Breakdown& b = result.breakdown;
  Time previous = Time::zero();
  for (const TaskId t : g.compute_tasks(stage)) {
    const Time gap = timeline.start[t] - previous;
    if (gap > Time::zero()) {
      const TaskId cause = binding[t];
      const TaskInfo& info = g.info()[cause];
      if (info.role == Role::Collective) {
        b.exposed_comm[info.group] += gap;
      } else if (info.role == Role::Transfer) {
        const Time in_flight = timeline.finish[cause] - std::max(timeline.start[cause], previous);
        const Time p2p = std::min(gap, in_flight);
        b.p2p += p2p;
        b.bubble += gap - p2p;
      } else {
        b.bubble += gap;
      }
    }
    b.compute += g.graph().duration_of(t);
    previous = timeline.finish[t];
  }
  result.finish = previous;
  return result;
}

}  // namespace

Result EventSimulator::simulate(const Workload& workload, const Cluster& cluster,
                                const SimulationOptions& options, Diagnostics& diagnostics) const {
  const IterationPlan plan = plan_iteration(workload, cluster, options, diagnostics);
  IterationGraph graph(plan);
  graph.build();
  const engine::Timeline timeline = engine::simulate(graph.graph());

  // For each task, the dependency that finished last.
  std::vector<TaskId> binding(graph.graph().task_count(), kNone);
  for (const auto& [before, after] : graph.edges())
    if (binding[after] == kNone || timeline.finish[before] > timeline.finish[binding[after]])
      binding[after] = before;

  Result result;
  result.mode = "event";
  result.schedule = std::string(to_string(plan.schedule));
  result.workload = workload.name;
  result.cluster = cluster.name;
  result.parallelism = plan.parallelism;
  result.simulated_tasks = static_cast<int64_t>(graph.graph().task_count());
  for (int64_t s = 0; s < plan.parallelism.pp; ++s) {
    result.stages.push_back(account(s, graph, timeline, binding));
    if (result.stages.back().finish > result.iteration_time) {
      result.iteration_time = result.stages.back().finish;
      result.critical_stage = s;
    }
  }
  result.breakdown = result.stages[static_cast<size_t>(result.critical_stage)].breakdown;
  result.layers = layer_timings(workload, plan);
  return result;
}

}  // namespace orrery
