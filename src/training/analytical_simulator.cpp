#include "training/analytical_simulator.h"

#include <algorithm>

#include "training/iteration_plan.h"

namespace orrery {
namespace {

// Durations of one micro-batch pass, split by what the compute stream does.
struct PassCost {
  Time compute;
  std::map<CommGroup, Time> blocking;  // exposed collectives by group
  std::map<CommGroup, Time> async;     // collectives on their own stream

  Time span() const {
    Time t = compute;
    for (const auto& [group, time] : blocking)
      t += time;
    return t;
  }
};

void add_forward(PassCost& cost, const PlannedLayer& layer) {
  cost.compute += layer.forward.compute;
  if (layer.forward.comm) cost.blocking[layer.forward.comm->comm.group] += layer.forward.comm->cost;
}

PassCost pass_cost(const IterationPlan& plan, size_t micro_batch) {
  PassCost cost;
  for (const auto& chunk : plan.chunk_layers[micro_batch]) {
    for (const size_t l : chunk) {
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

Time backward_span(const IterationPlan& plan, size_t micro_batch) {
  Time t;
  for (const auto& chunk : plan.chunk_layers[micro_batch])
    for (const size_t l : chunk)
      t += plan.layers[l].input_grad.compute + plan.layers[l].weight_grad.compute;
  return t;
}

}  // namespace

Result AnalyticalSimulator::simulate(const Workload& workload, const Cluster& cluster,
                                     const SimulationOptions& options,
                                     Diagnostics& diagnostics) const {
  const IterationPlan plan = plan_iteration(workload, cluster, options, diagnostics);
  const int64_t p = plan.parallelism.pp;
  Breakdown b;
  Time longest_pass;
  std::map<CommGroup, Time> reductions;  // data-parallel work that may hide behind the backward
  for (size_t mb = 0; mb < plan.chunk_layers.size(); ++mb) {
    const PassCost cost = pass_cost(plan, mb);
    b.compute += cost.compute;
    for (const auto& [group, time] : cost.blocking)
      b.exposed_comm[group] += time;
    for (const auto& [group, time] : cost.async)
      reductions[group] += time;
    longest_pass = std::max(longest_pass, cost.span());
  }
  // Pipeline fill and drain, in passes: (p - 1) / v when every stage has a micro-batch for each
  // chunk step (m >= p); with fewer micro-batches than stages a chunk round still takes p chunk
  // steps, so each of the v rounds idles (p - m) of them: ((p - m) v + m - 1) / v.
  const int64_t m = plan.micro_batches(), v = plan.chunks;
  const int64_t idle_steps = std::max<int64_t>(p - m, 0) * v + std::min(m, p) - 1;
  b.bubble = Time::from_ps(longest_pass.ps() * idle_steps / v);
  b.p2p = plan.transfer * (2 * (p - 1));

  PassCost tail;
  for (const size_t i : plan.iteration_layers) {
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
  for (const auto& [group, time] : tail.blocking)
    b.exposed_comm[group] += time;

  // Overlapped reductions hide behind the last micro-batch's backward; the rest is exposed, in
  // proportion to each group's share.
  Time total_reduction;
  for (const auto& [group, time] : reductions)
    total_reduction += time;
  if (total_reduction > Time::zero()) {
    const Time window = plan.chunk_layers.empty()
                            ? Time::zero()
                            : backward_span(plan, plan.chunk_layers.size() - 1);
    const Time exposed = std::max(Time::zero(), total_reduction - window);
    for (const auto& [group, time] : reductions)
      b.exposed_comm[group] += Time::from_seconds(exposed.seconds() * (time / total_reduction));
  }

  Result result = plan_result("analytical", workload, cluster, plan, {{0, b.total(), b}});
  return result;
}

}  // namespace orrery
