#include "training/stage_program.h"

#include <algorithm>
#include <array>
#include <deque>
#include <limits>
#include <utility>

#include "training/param_gather_launch.h"
#include "training/pipeline_schedule.h"
#include "training/sm_contention.h"

namespace orrery {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

// Builds one stage's program, issuing tasks the way the rank's code would.
class StageBuilder {
 public:
  StageBuilder(const IterationPlan& plan, int64_t stage,
               const std::vector<std::vector<const CommBucket*>>& buckets_by_layer,
               const std::vector<std::vector<size_t>>& gathers_by_layer, bool labels)
      : plan_(plan),
        buckets_by_layer_(buckets_by_layer),
        gathers_by_layer_(gathers_by_layer),
        s_(stage),
        labels_(labels) {
    p_ = plan.parallelism.pp;
    m_ = plan.micro_batches();
    v_ = plan.chunks;
    program_.stage = stage;
    forward_end_.assign(static_cast<size_t>(m_ * v_), kNone);
    gather_task_.assign(plan.gather_buckets.size(), kNone);
  }

  StageProgram build() {
    // Room for every task a stage may issue: per pass a start and, per layer, at most three
    // computes, three collectives and the recomputed forwards (untouched room costs nothing).
    size_t tasks = 2 * plan_.layers.size() + 16;
    for (size_t mb = 0; mb < plan_.pass_of.size(); ++mb)
      for (const auto& chunk : plan_.chunk_layers(mb)) {
        tasks += 2;
        for (const size_t l : chunk)
          tasks += 6 + 2 * plan_.layers[l].recompute.size();
      }
    program_.tasks.reserve(tasks);
    program_.deps.reserve(2 * tasks);
    const std::vector<PipelineOp> order = pipeline_order(plan_.schedule, p_, s_, m_, v_);
    if (plan_.aligned_gathers) launches_ = aligned_gather_launches(order, s_, v_);
    launch_gathers(-1);
    for (size_t i = 0; i < order.size(); ++i)
      order[i].forward ? forward(order[i], static_cast<int64_t>(i)) : backward(order[i]);
    finish_iteration();
    return std::move(program_);
  }

 private:
  uint32_t add(StageTask task, std::initializer_list<uint32_t> extra = {}) {
    task.deps_begin = static_cast<uint32_t>(program_.deps.size());
    for (const uint32_t d : extra)
      if (d != kNone) program_.deps.push_back(d);
    for (const uint32_t d : pending_)
      program_.deps.push_back(d);
    task.deps_end = static_cast<uint32_t>(program_.deps.size());
    program_.tasks.push_back(task);
    return static_cast<uint32_t>(program_.tasks.size() - 1);
  }

  uint32_t compute(Time duration, int64_t receives = -1) {
    // SM contention: compute running beside an asynchronous collective loses the share of the
    // SMs the collective holds, for as long as they overlap (in program order).
    Time slowed;
    if (!in_flight_.empty()) {
      Time left;
      double share = 0;  // the largest share of the SMs one of them holds
      for (const InFlight& f : in_flight_) {
        left += f.left;
        share = std::max(share, f.share);
      }
      slowed = contention_delay(duration, left, share);
      cover(std::min(left, duration + slowed));
    }
    // Back-to-back compute with nothing issued or awaited in between is one task: the same
    // timeline with fewer tasks (nothing can depend on the first part alone).
    if (receives < 0 && pending_.empty() && last_compute_ != kNone &&
        last_compute_ + 1 == program_.tasks.size()) {
      program_.tasks.back().duration += duration + slowed;
      label(last_compute_, duration + slowed);
      return last_compute_;
    }
    StageTask t;
    t.duration = duration + slowed;
    t.receives = receives;
    last_compute_ = add(t);
    pending_.clear();
    label(last_compute_, t.duration);
    return last_compute_;
  }

  // A phase's compute; the tensor-parallel communication folded into it is marked on the task.
  uint32_t compute(const PlannedPhase& phase) {
    const uint32_t t = compute(phase.compute);
    program_.tasks[t].exposed_overlap += phase.exposed_overlap;
    return t;
  }

  // What the next tasks do, for their labels.
  void at(size_t layer, TaskPhase phase) {
    layer_ = static_cast<int32_t>(layer);
    phase_ = phase;
  }
  void in_pass(int64_t micro_batch, int64_t chunk) {
    micro_batch_ = static_cast<int32_t>(micro_batch);
    chunk_ = static_cast<int32_t>(chunk);
  }
  void label(uint32_t task, Time duration) {
    if (labels_ && duration > Time::zero())
      program_.labels.push_back({task, layer_, phase_, micro_batch_, chunk_, duration});
  }

  // A collective after the latest compute (and any collective still pending).
  uint32_t issue(CommGroup group, Time cost, const Communication& comm, Algorithm algorithm) {
    StageTask t;
    t.kind = StageTaskKind::Collective;
    t.stream = stream_of(group);
    t.duration = cost;
    t.comm = comm;
    t.algorithm = algorithm;
    const uint32_t id = add(t, {last_compute_});
    last_comm_[static_cast<size_t>(group)] = id;
    label(id, cost);
    return id;
  }
  uint32_t issue(const PlannedComm& c) { return issue(c.comm.group, c.cost, c.comm, c.algorithm); }
  // An asynchronous collective (or gradient bucket) overlapping the compute that follows.
  uint32_t issue_async(CommGroup group, Time cost, const Communication& comm, Algorithm algorithm,
                       int64_t channels) {
    const uint32_t id = issue(group, cost, comm, algorithm);
    if (const double share =
            sm_contention_share(channels, plan_.compute_units, plan_.contention_overhead);
        plan_.overlap && share > 0) {
      in_flight_.push_back({id, stream_of(group), cost, share});
    }
    return id;
  }
  // `t` of the asynchronous collectives' time passed beside compute: taken from the earliest
  // issued first (a stream runs its collectives in order).
  void cover(Time t) {
    while (t > Time::zero() && !in_flight_.empty()) {
      Time& left = in_flight_.front().left;
      const Time taken = std::min(left, t);
      left -= taken;
      t -= taken;
      if (left == Time::zero()) in_flight_.pop_front();
    }
  }
  // Compute waits for the asynchronous collective `task`: it and those issued before it on its
  // stream end while the compute stands idle, so what is left of their time slows no compute.
  void settle(uint32_t task) {
    const auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                                 [&](const InFlight& f) { return f.task == task; });
    if (it == in_flight_.end()) return;
    const StageStream stream = it->stream;
    const auto end = std::next(it);
    for (auto f = in_flight_.begin(); f != end; ++f)
      if (f->stream == stream) f->left = Time::zero();
    std::erase_if(in_flight_, [](const InFlight& f) { return f.left == Time::zero(); });
  }
  uint32_t issue_async(const CommBucket& b) {
    return issue_async(b.group, b.cost, {b.kind, b.group, b.bytes}, b.algorithm, b.channels);
  }
  void blocking(const PlannedComm& c) { pending_.push_back(issue(c)); }

  int64_t key(bool forward, int64_t stage, int64_t mb, int64_t chunk) const {
    return ((int64_t{forward} * p_ + stage) * m_ + mb) * v_ + chunk;
  }

  void send(bool forward, int64_t to, int64_t mb, int64_t chunk) {
    StageTask t;
    t.kind = StageTaskKind::Transfer;
    t.stream = forward ? StageStream::ForwardLink : StageStream::BackwardLink;
    t.duration = plan_.transfer(s_, to).time;
    t.sends = key(forward, to, mb, chunk);
    t.to_stage = to;
    t.comm = {CollectiveKind::AllGather, CommGroup::Pipeline, plan_.transfer_bytes};
    const uint32_t id = add(t, {last_compute_});
    phase_ = TaskPhase::Transfer;
    layer_ = -1;
    label(id, t.duration);
    if (plan_.blocking_p2p) pending_.push_back(id);  // the schedule waits for the send
  }

  // The first task of a pass, with its incoming dependency.
  void start_pass(const PipelineOp& op) {
    if (op.forward) {
      compute(Time::zero(), s_ > 0 || op.chunk > 0 ? key(true, s_, op.micro_batch, op.chunk) : -1);
    } else if (s_ < p_ - 1 || op.chunk < v_ - 1) {
      compute(Time::zero(), key(false, s_, op.micro_batch, op.chunk));
    } else {
      pending_.push_back(forward_end_[static_cast<size_t>(op.micro_batch * v_ + op.chunk)]);
      compute(Time::zero());
    }
  }

  const std::vector<size_t>& layers_of(const PipelineOp& op) const {
    return plan_.chunk_layers(static_cast<size_t>(op.micro_batch))[static_cast<size_t>(op.chunk)];
  }

  void run_forward(size_t l, TaskPhase phase = TaskPhase::Forward) {
    at(l, phase);
    const PlannedLayer& layer = plan_.layers[l];
    compute(layer.forward);
    if (layer.forward.comm) blocking(*layer.forward.comm);
  }

  // The aligned launch (IterationPlan::aligned_gathers): at the start of the forward at `index` in
  // the schedule order (-1: before the first), the stage's buckets of every model chunk launched
  // there, in bucket order on their group's stream. A bucket of no chunk counts as chunk 0's.
  void launch_gathers(int64_t index) {
    for (size_t c = 0; c < launches_.size(); ++c) {
      if (launches_[c] != index) continue;
      for (size_t i = 0; i < plan_.gather_buckets.size(); ++i) {
        const CommBucket& b = plan_.gather_buckets[i];
        if (!plan_.runs_row(b.row, s_) || std::max<int64_t>(b.chunk, 0) != static_cast<int64_t>(c))
          continue;
        at(b.row, TaskPhase::Bucket);
        gather_task_[i] = issue_async(b);
      }
    }
  }

  // overlap_param_gather, in a chunk's first forward: layer `l` waits for the parameter buckets
  // it is the first layer of. In the lazy chain the first is issued as the forward reaches it and,
  // once a bucket is gathered, the next of its chain is issued, overlapping the forward from here
  // on; aligned, they were all issued from the schedule (launch_gathers).
  void await_gathers(size_t l, int64_t chunk) {
    const std::vector<CommBucket>& gathers = plan_.gather_buckets;
    for (const size_t i : gathers_by_layer_[l]) {
      const CommBucket& b = gathers[i];
      if (!plan_.runs_row(b.row, s_) || (b.chunk >= 0 && b.chunk != chunk)) continue;
      at(b.row, TaskPhase::Bucket);
      if (gather_task_[i] == kNone)
        gather_task_[i] = issue(b.group, b.cost, {b.kind, b.group, b.bytes}, b.algorithm);
      settle(gather_task_[i]);
      pending_.push_back(gather_task_[i]);
      if (plan_.aligned_gathers) continue;
      const size_t next = i + 1;
      if (next < gathers.size() && gathers[next].row == b.row && gathers[next].chunk == b.chunk &&
          gather_task_[next] == kNone)
        gather_task_[next] = issue_async(gathers[next]);
    }
  }

  // `index`: the forward's place in the schedule order.
  void forward(const PipelineOp& op, int64_t index) {
    in_pass(op.micro_batch, op.chunk);
    start_pass(op);
    launch_gathers(index);
    for (const size_t l : layers_of(op)) {
      if (!plan_.runs(l, s_, op.chunk)) continue;
      if (op.micro_batch == 0) await_gathers(l, op.chunk);
      run_forward(l);
    }
    forward_end_[static_cast<size_t>(op.micro_batch * v_ + op.chunk)] = last_compute_;
    if (s_ < p_ - 1)
      send(true, s_ + 1, op.micro_batch, op.chunk);
    else if (op.chunk < v_ - 1)
      send(true, 0, op.micro_batch, op.chunk + 1);
  }

  void backward(const PipelineOp& op) {
    in_pass(op.micro_batch, op.chunk);
    start_pass(op);
    const bool last_micro_batch = op.micro_batch == m_ - 1;
    const auto& layers = layers_of(op);
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      if (!plan_.runs(*it, s_, op.chunk)) continue;
      const PlannedLayer& layer = plan_.layers[*it];
      for (const size_t r : layer.recompute)
        run_forward(r, TaskPhase::Recompute);
      at(*it, TaskPhase::InputGrad);
      compute(layer.input_grad);
      uint32_t input_grad_comm = kNone;
      if (layer.input_grad.comm) {
        input_grad_comm = issue(*layer.input_grad.comm);
        if (!plan_.overlap) pending_.push_back(input_grad_comm);
      }
      at(*it, TaskPhase::WeightGrad);
      compute(layer.weight_grad);
      if (const auto& c = layer.weight_grad.comm) {
        if (c->role == CommRole::Async)
          issue_async(c->comm.group, c->cost, c->comm, c->algorithm, c->channels);
        else
          blocking(*c);
      }
      if (last_micro_batch)
        for (const CommBucket* b : buckets_by_layer_[*it])
          if (plan_.runs_row(b->row, s_) && (b->chunk < 0 || b->chunk == op.chunk)) {
            at(b->row, TaskPhase::Bucket);
            issue_async(*b);
          }
      if (plan_.overlap && input_grad_comm != kNone) pending_.push_back(input_grad_comm);
    }
    if (s_ > 0)
      send(false, s_ - 1, op.micro_batch, op.chunk);
    else if (op.chunk > 0)
      send(false, p_ - 1, op.micro_batch, op.chunk - 1);
  }

  void finish_iteration() {
    in_pass(-1, -1);
    // Gradient reductions not already issued as buckets.
    for (const size_t i : plan_.iteration_layers) {
      const auto& c = plan_.layers[i].weight_grad.comm;
      if (!c || c->role != CommRole::GradientReduction || !plan_.runs_row(i, s_)) continue;
      at(i, TaskPhase::WeightGrad);
      if (!plan_.overlap)
        blocking(*c);
      else if (plan_.buckets.empty())
        issue(*c);
    }
    for (const uint32_t t : last_comm_)
      if (t != kNone) pending_.push_back(t);
    // The compute after this waits for every collective: none runs beside it any more.
    in_flight_.clear();

    std::vector<std::pair<size_t, const PlannedComm*>> gathers;  // (layer, gather)
    for (const size_t i : plan_.iteration_layers) {
      if (!plan_.runs_row(i, s_)) continue;
      const PlannedLayer& layer = plan_.layers[i];
      run_forward(i);
      at(i, TaskPhase::InputGrad);
      compute(layer.input_grad);
      if (layer.input_grad.comm) blocking(*layer.input_grad.comm);
      at(i, TaskPhase::WeightGrad);
      compute(layer.weight_grad);
      if (const auto& c = layer.weight_grad.comm) {
        if (c->role == CommRole::ParameterGather)
          gathers.emplace_back(i, &*c);
        else if (c->role != CommRole::GradientReduction && c->role != CommRole::ParameterPrefetch)
          blocking(*c);
      }
    }
    for (const auto& [layer, c] : gathers) {
      at(layer, TaskPhase::WeightGrad);
      blocking(*c);
    }
    compute(Time::zero());  // end of the stage's iteration
  }

  const IterationPlan& plan_;
  const std::vector<std::vector<const CommBucket*>>& buckets_by_layer_;
  const std::vector<std::vector<size_t>>& gathers_by_layer_;  // indices into gather_buckets
  int64_t s_ = 0, p_ = 1, m_ = 1, v_ = 1;
  StageProgram program_;
  uint32_t last_compute_ = kNone;
  // Asynchronous collectives running beside the stage's compute, in issue order: what of each
  // compute has not yet covered (SM contention) and the share of the SMs it holds.
  struct InFlight {
    uint32_t task;
    StageStream stream;
    Time left;
    double share;
  };
  std::deque<InFlight> in_flight_;
  std::vector<uint32_t> pending_;  // collectives the next compute must wait for
  std::array<uint32_t, kCommGroups> last_comm_ = [] {
    std::array<uint32_t, kCommGroups> none{};
    none.fill(kNone);
    return none;
  }();
  std::vector<uint32_t> forward_end_;  // per (micro-batch, chunk): last compute of the forward
  std::vector<uint32_t> gather_task_;  // per parameter-gather bucket: its task, once issued
  std::vector<int64_t> launches_;      // aligned launch: per chunk, aligned_gather_launches
  bool labels_ = false;
  // The label of the tasks being issued.
  int32_t layer_ = -1, micro_batch_ = -1, chunk_ = -1;
  TaskPhase phase_ = TaskPhase::Forward;
};

}  // namespace

IterationPrograms build_stage_programs(const IterationPlan& plan, bool labels) {
  std::vector<std::vector<const CommBucket*>> buckets_by_layer(plan.layers.size());
  for (const CommBucket& b : plan.buckets)
    buckets_by_layer[b.layer].push_back(&b);
  std::vector<std::vector<size_t>> gathers_by_layer(plan.layers.size());
  for (size_t i = 0; i < plan.gather_buckets.size(); ++i)
    gathers_by_layer[plan.gather_buckets[i].layer].push_back(i);
  IterationPrograms programs;
  for (int64_t s = 0; s < plan.parallelism.pp; ++s)
    programs.stages.push_back(
        StageBuilder(plan, s, buckets_by_layer, gathers_by_layer, labels).build());
  programs.transfer_keys = 2 * plan.parallelism.pp * plan.micro_batches() * plan.chunks;
  return programs;
}

}  // namespace orrery
