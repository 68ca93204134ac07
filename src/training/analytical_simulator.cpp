#include "training/analytical_simulator.h"

#include <algorithm>
#include <array>

#include "training/iteration_plan.h"

namespace orrery {
namespace {

// Time per communication group, in the groups' order, remembering which groups were touched
// (a group touched with zero time still appears in the breakdown, as it does in a map).
class GroupTimes {
 public:
  Time& operator[](CommGroup group) {
    const auto i = static_cast<size_t>(group);
    used_[i] = true;
    return time_[i];
  }
  template <class Visit>
  void for_each(Visit&& visit) const {
    for (size_t i = 0; i < kGroups; ++i)
      if (used_[i]) visit(static_cast<CommGroup>(i), time_[i]);
  }

 private:
  static constexpr size_t kGroups = kCommGroups;
  std::array<Time, kGroups> time_{};
  std::array<bool, kGroups> used_{};
};

// Durations of one micro-batch pass, split by what the compute stream does.
struct PassCost {
  Time compute;
  GroupTimes blocking;  // exposed collectives by group
  GroupTimes async;     // collectives on their own stream

  Time span() const {
    Time t = compute;
    blocking.for_each([&](CommGroup, Time time) { t += time; });
    return t;
  }
};

void add_forward(PassCost& cost, const PlannedLayer& layer) {
  cost.compute += layer.forward.compute;
  if (layer.forward.comm) cost.blocking[layer.forward.comm->comm.group] += layer.forward.comm->cost;
}

// Stage `stage`'s share of one micro-batch pass.
PassCost pass_cost(const IterationPlan& plan, size_t micro_batch, int64_t stage) {
  PassCost cost;
  const auto& chunks = plan.chunk_layers(micro_batch);
  for (size_t chunk = 0; chunk < chunks.size(); ++chunk) {
    for (const size_t l : chunks[chunk]) {
      if (!plan.runs(l, stage, static_cast<int64_t>(chunk))) continue;
      const PlannedLayer& layer = plan.layers[l];
      add_forward(cost, layer);
      for (const size_t r : layer.recompute)
        add_forward(cost, plan.layers[r]);
      cost.compute += layer.input_grad.compute + layer.weight_grad.compute;
      if (const auto& c = layer.input_grad.comm) {
        const Time hidden =
            plan.overlap ? std::min(c->cost, layer.weight_grad.compute) : Time::zero();
        cost.blocking[c->comm.group] += c->cost - hidden;
      }
      if (const auto& c = layer.weight_grad.comm)
        (c->role == CommRole::Async ? cost.async : cost.blocking)[c->comm.group] += c->cost;
    }
  }
  return cost;
}

// The span of one micro-batch's backward on a stage: its compute (recomputed forwards included)
// and the collectives it waits for: blocking ones whole, an input-gradient collective beyond the
// weight-gradient compute it overlaps. The window that hides overlapped gradient reductions.
Time backward_span(const IterationPlan& plan, size_t micro_batch, int64_t stage) {
  Time t;
  const auto& chunks = plan.chunk_layers(micro_batch);
  const auto blocking = [](const std::optional<PlannedComm>& c) {
    return c && c->role == CommRole::Blocking ? c->cost : Time::zero();
  };
  for (size_t c = 0; c < chunks.size(); ++c)
    for (const size_t l : chunks[c]) {
      if (!plan.runs(l, stage, static_cast<int64_t>(c))) continue;
      const PlannedLayer& layer = plan.layers[l];
      for (const size_t r : layer.recompute)
        t += plan.layers[r].forward.compute + blocking(plan.layers[r].forward.comm);
      const Time input_grad_comm =
          layer.input_grad.comm ? layer.input_grad.comm->cost : Time::zero();
      t += layer.input_grad.compute +
           (plan.overlap ? std::max(layer.weight_grad.compute, input_grad_comm)
                         : layer.weight_grad.compute + input_grad_comm) +
           blocking(layer.weight_grad.comm);
    }
  return t;
}

using PassRun = std::pair<PassCost, int64_t>;

// One stage's iteration in closed form: its passes, the pipeline's fill and drain, its transfers,
// and its iteration-level rows, with the overlapped gradient reductions hidden behind the last
// backward where they fit.
// `passes`: the stage's micro-batch passes in runs; `longest`: the longest pass of any stage.
StageTiming stage_timing(const IterationPlan& plan, int64_t stage,
                         const std::vector<PassRun>& passes, Time longest) {
  const int64_t p = plan.parallelism.pp;
  Breakdown b;
  GroupTimes reductions;  // data-parallel work that may hide behind the backward
  for (const auto& [cost, count] : passes) {
    b.compute += cost.compute * count;
    cost.blocking.for_each(
        [&, count = count](CommGroup group, Time time) { b.exposed_comm[group] += time * count; });
    cost.async.for_each(
        [&, count = count](CommGroup group, Time time) { reductions[group] += time * count; });
  }
  // Pipeline fill and drain, in passes: (p - 1) / v when every stage has a micro-batch for each
  // chunk step (m >= p); with fewer micro-batches than stages a chunk round still takes p chunk
  // steps, so each of the v rounds idles (p - m) of them: ((p - m) v + m - 1) / v.
  const int64_t m = plan.micro_batches(), v = plan.chunks;
  const int64_t idle_steps = std::max<int64_t>(p - m, 0) * v + std::min(m, p) - 1;
  b.bubble = Time::from_ps(longest.ps() * idle_steps / v);
  // Transfers in the pipeline's fill and drain; blocking ones also each pass's send and receive.
  b.p2p = plan.transfer * (2 * (p - 1));
  if (plan.blocking_p2p && p > 1) b.p2p += plan.transfer * (2 * m * v);

  PassCost tail;
  for (const size_t i : plan.iteration_layers) {
    if (!plan.runs_row(i, stage)) continue;
    const PlannedLayer& layer = plan.layers[i];
    add_forward(tail, layer);
    tail.compute += layer.input_grad.compute + layer.weight_grad.compute;
    if (const auto& c = layer.input_grad.comm) tail.blocking[c->comm.group] += c->cost;
    if (const auto& c = layer.weight_grad.comm) {
      if (c->role == CommRole::GradientReduction && plan.overlap)
        reductions[c->comm.group] += c->cost;
      else
        tail.blocking[c->comm.group] += c->cost;
    }
  }
  b.compute += tail.compute;
  tail.blocking.for_each([&](CommGroup group, Time time) { b.exposed_comm[group] += time; });

  // Overlapped reductions hide behind the last micro-batch's backward; the rest is exposed, in
  // proportion to each group's share.
  Time total_reduction;
  reductions.for_each([&](CommGroup, Time time) { total_reduction += time; });
  if (total_reduction > Time::zero()) {
    const Time window =
        plan.pass_of.empty() ? Time::zero() : backward_span(plan, plan.pass_of.size() - 1, stage);
    const Time exposed = std::max(Time::zero(), total_reduction - window);
    reductions.for_each([&](CommGroup group, Time time) {
      b.exposed_comm[group] += Time::from_seconds(exposed.seconds() * (time / total_reduction));
    });
  }
  return {stage, b.total(), b};
}

}  // namespace

Result AnalyticalSimulator::simulate(const Workload& workload, const Cluster& cluster,
                                     const SimulationOptions& options,
                                     Diagnostics& diagnostics) const {
  const IterationPlan plan =
      plan_iteration(workload, cluster, options, diagnostics, /*buckets=*/false);
  // Stages run alike unless the program gives them different layers; then each is costed.
  const int64_t stages = plan.stage_sets.empty() ? 1 : plan.parallelism.pp;
  std::vector<std::vector<PassRun>> passes(static_cast<size_t>(stages));
  Time longest;  // the longest pass of any stage: what the pipeline's fill and drain wait on
  for (int64_t s = 0; s < stages; ++s) {
    std::vector<PassRun>& runs = passes[static_cast<size_t>(s)];
    for (size_t mb = 0; mb < plan.pass_of.size(); ++mb) {
      // Consecutive micro-batches that run one pass (generated programs) cost the same: one pass
      // and its count.
      if (mb > 0 && plan.pass_of[mb] == plan.pass_of[mb - 1]) {
        ++runs.back().second;
        continue;
      }
      runs.emplace_back(pass_cost(plan, mb, s), 1);
      longest = std::max(longest, runs.back().first.span());
    }
  }
  std::vector<StageTiming> timings;
  for (int64_t s = 0; s < stages; ++s)
    timings.push_back(stage_timing(plan, s, passes[static_cast<size_t>(s)], longest));
  return plan_result("analytical", workload, cluster, plan, std::move(timings));
}

}  // namespace orrery
