#include "training/analytical_simulator.h"

#include <algorithm>
#include <array>
#include <optional>

#include "training/iteration_plan.h"
#include "training/param_gather_launch.h"
#include "training/pipeline_schedule.h"

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
  // The span of the pass's backward: its compute (recomputed forwards included) and the
  // collectives it waits for: blocking ones whole, an input-gradient collective beyond the
  // weight-gradient compute it overlaps. The last micro-batch's is the window that hides
  // overlapped gradient reductions.
  Time backward;

  Time span() const {
    Time t = compute;
    blocking.for_each([&](CommGroup, Time time) { t += time; });
    return t;
  }
};

// A phase's compute, less the tensor-parallel communication folded into it, which is exposed.
void add_compute(PassCost& cost, const PlannedPhase& phase) {
  cost.compute += phase.compute - phase.exposed_overlap;
  if (phase.exposed_overlap > Time::zero())
    cost.blocking[CommGroup::Tensor] += phase.exposed_overlap;
}

void add_forward(PassCost& cost, const PlannedLayer& layer) {
  add_compute(cost, layer.forward);
  if (layer.forward.comm) cost.blocking[layer.forward.comm->comm.group] += layer.forward.comm->cost;
}

// The part of a layer's backward that PassCost::backward counts.
Time backward_span(const IterationPlan& plan, const PlannedLayer& layer) {
  const auto blocking = [](const std::optional<PlannedComm>& c) {
    return c && c->role == CommRole::Blocking ? c->cost : Time::zero();
  };
  Time t;
  for (const size_t r : layer.recompute)
    t += plan.layers[r].forward.compute + blocking(plan.layers[r].forward.comm);
  const Time input_grad_comm = layer.input_grad.comm ? layer.input_grad.comm->cost : Time::zero();
  return t + layer.input_grad.compute +
         (plan.overlap ? std::max(layer.weight_grad.compute, input_grad_comm)
                       : layer.weight_grad.compute + input_grad_comm) +
         blocking(layer.weight_grad.comm);
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
      add_compute(cost, layer.input_grad);
      add_compute(cost, layer.weight_grad);
      if (const auto& c = layer.input_grad.comm) {
        const Time hidden =
            plan.overlap ? std::min(c->cost, layer.weight_grad.compute) : Time::zero();
        cost.blocking[c->comm.group] += c->cost - hidden;
      }
      if (const auto& c = layer.weight_grad.comm)
        (c->role == CommRole::Async ? cost.async : cost.blocking)[c->comm.group] += c->cost;
      cost.backward += backward_span(plan, layer);
    }
  }
  return cost;
}

using PassRun = std::pair<PassCost, int64_t>;

// A stage's micro-batch passes in runs (consecutive micro-batches that run one pass cost the same:
// one pass and its count), and its last micro-batch's backward span.
struct StagePasses {
  std::vector<PassRun> runs;
  Time last_backward;
};

StagePasses stage_passes(const IterationPlan& plan, int64_t stage) {
  StagePasses out;
  for (size_t mb = 0; mb < plan.pass_of.size(); ++mb) {
    if (mb > 0 && plan.pass_of[mb] == plan.pass_of[mb - 1]) {
      ++out.runs.back().second;
      continue;
    }
    out.runs.emplace_back(pass_cost(plan, mb, stage), 1);
  }
  if (!out.runs.empty()) out.last_backward = out.runs.back().first.backward;  // last micro-batch
  return out;
}

// Which of the virtual stages that the passes' stage sets name are stage `stage`'s: stages with
// equal keys run the same layers of every pass, so their passes cost the same.
std::vector<bool> pass_key(const IterationPlan& plan, const std::vector<size_t>& sets,
                           int64_t stage) {
  const int64_t pp = plan.parallelism.pp;
  std::vector<bool> key;
  key.reserve(sets.size() * static_cast<size_t>(plan.parallelism.vpp));
  for (const size_t set : sets)
    for (int64_t c = 0; c < plan.parallelism.vpp; ++c)
      key.push_back(plan.stage_sets[set][static_cast<size_t>(c * pp + stage)]);
  return key;
}

// The stage sets of the layers that micro-batch passes run (not the iteration-level rows').
std::vector<size_t> pass_stage_sets(const IterationPlan& plan) {
  std::vector<bool> row(plan.layers.size(), false), used(plan.stage_sets.size(), false);
  for (const size_t i : plan.iteration_layers)
    row[i] = true;
  std::vector<size_t> sets;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const int32_t set = plan.layers[i].stage_set;
    if (row[i] || set < 0 || used[static_cast<size_t>(set)]) continue;
    used[static_cast<size_t>(set)] = true;
    sets.push_back(static_cast<size_t>(set));
  }
  return sets;
}

// The iteration-level rows each of `stages` stages runs, in file order. The stages of each stage
// set are found once, with the first row that has it, rather than every row tried on every stage
// (a generated program has many rows and a set per stage).
std::vector<std::vector<size_t>> rows_by_stage(const IterationPlan& plan, int64_t stages) {
  std::vector<std::vector<size_t>> rows(static_cast<size_t>(stages));
  // The stages of each set, and last those of a row with no set (every stage).
  std::vector<std::optional<std::vector<size_t>>> stages_of(plan.stage_sets.size() + 1);
  for (const size_t i : plan.iteration_layers) {
    const int32_t set = plan.layers[i].stage_set;
    std::optional<std::vector<size_t>>& on =
        stages_of[set < 0 ? plan.stage_sets.size() : static_cast<size_t>(set)];
    if (!on) {
      on.emplace();
      for (int64_t s = 0; s < stages; ++s)
        if (plan.runs_row(i, s)) on->push_back(static_cast<size_t>(s));
    }
    for (const size_t stage : *on)
      rows[stage].push_back(i);
  }
  return rows;
}

// What the first forward of stage `stage` waits for the parameter gathers of
// overlap_param_gather (IterationPlan::gather_buckets), by group: each model chunk's chain of
// buckets, the first issued as the chunk's first forward starts and each next once the one before
// is gathered and the forward has reached it (the event mode's order, stage_program.h); the
// forward waits before each bucket's first layer until it is gathered. The clock is the forward's
// own compute and blocking collectives; what the chain costs the compute beside it (SM
// contention) and waits that earlier stages pass on through the pipeline are not counted.
// `gathers_at[l]`: the gather buckets tied to layer l.
GroupTimes gather_waits(const IterationPlan& plan, int64_t stage,
                        const std::vector<std::vector<size_t>>& gathers_at) {
  GroupTimes waits;
  const std::vector<CommBucket>& gathers = plan.gather_buckets;
  std::vector<std::optional<Time>> done(gathers.size());  // when each issued bucket is gathered
  const auto& chunks = plan.chunk_layers(0);
  for (size_t chunk = 0; chunk < chunks.size(); ++chunk) {
    const auto c = static_cast<int64_t>(chunk);
    Time clock;  // since the chunk's first forward began
    for (const size_t l : chunks[chunk]) {
      if (!plan.runs(l, stage, c)) continue;
      for (const size_t i : gathers_at[l]) {
        const CommBucket& b = gathers[i];
        if (!plan.runs_row(b.row, stage) || (b.chunk >= 0 && b.chunk != c)) continue;
        if (!done[i]) done[i] = clock + b.cost;
        if (*done[i] > clock) {
          waits[b.group] += *done[i] - clock;
          clock = *done[i];
        }
        if (i + 1 < gathers.size() && gathers[i + 1].row == b.row &&
            gathers[i + 1].chunk == b.chunk)
          done[i + 1] = clock + gathers[i + 1].cost;
      }
      const PlannedPhase& f = plan.layers[l].forward;
      clock += f.compute + (f.comm ? f.comm->cost : Time::zero());
    }
  }
  return waits;
}

// The same waits under the aligned launch (IterationPlan::aligned_gathers): the stage's forwards
// in schedule order up to its last chunk's first forward (the warm-up: no backward before it) run
// on one clock of their compute and blocking collectives; each chunk's buckets are issued at its
// launch (aligned_gather_launches) one after another on their group's stream, and a chunk's
// first forward waits before each bucket's first layer until it is gathered. As for the chain,
// SM contention and the stage's waits for its inputs are not counted.
GroupTimes aligned_gather_waits(const IterationPlan& plan, int64_t stage,
                                const std::vector<std::vector<size_t>>& gathers_at) {
  GroupTimes waits;
  const std::vector<CommBucket>& gathers = plan.gather_buckets;
  const std::vector<PipelineOp> order =
      pipeline_order(plan.schedule, plan.parallelism.pp, stage, plan.micro_batches(), plan.chunks);
  const std::vector<int64_t> launches = aligned_gather_launches(order, stage, plan.chunks);
  std::vector<Time> done(gathers.size());
  std::array<Time, kCommGroups> stream_free{};
  Time clock;  // since the stage's first forward began
  const auto launch = [&](int64_t index) {
    for (size_t c = 0; c < launches.size(); ++c) {
      if (launches[c] != index) continue;
      for (size_t i = 0; i < gathers.size(); ++i) {
        const CommBucket& b = gathers[i];
        if (!plan.runs_row(b.row, stage) ||
            std::max<int64_t>(b.chunk, 0) != static_cast<int64_t>(c))
          continue;
        Time& free = stream_free[static_cast<size_t>(b.group)];
        free = std::max(free, clock) + b.cost;
        done[i] = free;
      }
    }
  };
  launch(-1);
  int64_t first_forwards_left = plan.chunks;
  for (size_t k = 0; k < order.size() && first_forwards_left > 0; ++k) {
    const PipelineOp& op = order[k];
    if (!op.forward) continue;
    launch(static_cast<int64_t>(k));
    const bool first = op.micro_batch == 0;
    const auto mb = static_cast<size_t>(op.micro_batch);
    for (const size_t l : plan.chunk_layers(mb)[static_cast<size_t>(op.chunk)]) {
      if (!plan.runs(l, stage, op.chunk)) continue;
      for (const size_t i : gathers_at[l]) {
        const CommBucket& b = gathers[i];
        if (!first || !plan.runs_row(b.row, stage) || (b.chunk >= 0 && b.chunk != op.chunk))
          continue;
        if (done[i] > clock) {
          waits[b.group] += done[i] - clock;
          clock = done[i];
        }
      }
      const PlannedPhase& f = plan.layers[l].forward;
      clock += f.compute + (f.comm ? f.comm->cost : Time::zero());
    }
    if (first) --first_forwards_left;
  }
  return waits;
}

// What blocking transfers cost stage `stage` per micro-batch and model chunk: a send forward
// and one backward, each over the boundary it crosses; an end stage of a pipeline without model
// chunks has one boundary and pays it for both.
Time blocking_sends(const IterationPlan& plan, int64_t stage) {
  const int64_t p = plan.parallelism.pp;
  const bool wraps = plan.chunks > 1;
  const int64_t next = stage + 1 < p || wraps ? (stage + 1) % p : stage - 1;
  const int64_t previous = stage > 0 || wraps ? (stage + p - 1) % p : 1;
  return plan.transfer(stage, next).time + plan.transfer(stage, previous).time;
}

// One stage's iteration in closed form: its passes, the pipeline's fill and drain, its transfers,
// and its iteration-level rows, with the overlapped gradient reductions hidden behind the last
// backward where they fit.
// `passes`: the stage's micro-batch passes; `longest`: the longest pass of any stage; `rows`: the
// iteration-level rows it runs (rows_by_stage); `gathers`: its first forward's waits for the
// parameter gathers (gather_waits), which replace the prefetched gather rows.
StageTiming stage_timing(const IterationPlan& plan, int64_t stage, const StagePasses& passes,
                         Time longest, const std::vector<size_t>& rows, const GroupTimes& gathers) {
  const int64_t p = plan.parallelism.pp;
  Breakdown b;
  GroupTimes reductions;  // data-parallel work that may hide behind the backward
  for (const auto& [cost, count] : passes.runs) {
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
  // Transfers in the pipeline's fill and drain (each boundary crossed forward and back);
  // blocking ones also each pass's send and receive (blocking_sends).
  for (int64_t k = 0; k + 1 < p; ++k)
    b.p2p += plan.transfers[static_cast<size_t>(k)].time * 2;
  if (plan.blocking_p2p && p > 1) b.p2p += blocking_sends(plan, stage) * (m * v);

  PassCost tail;
  for (const size_t i : rows) {
    const PlannedLayer& layer = plan.layers[i];
    add_forward(tail, layer);
    add_compute(tail, layer.input_grad);
    add_compute(tail, layer.weight_grad);
    if (const auto& c = layer.input_grad.comm) tail.blocking[c->comm.group] += c->cost;
    if (const auto& c = layer.weight_grad.comm) {
      if (c->role == CommRole::GradientReduction && plan.overlap)
        reductions[c->comm.group] += c->cost;
      else if (c->role != CommRole::ParameterPrefetch)
        tail.blocking[c->comm.group] += c->cost;
    }
  }
  gathers.for_each([&](CommGroup group, Time time) { b.exposed_comm[group] += time; });
  b.compute += tail.compute;
  tail.blocking.for_each([&](CommGroup group, Time time) { b.exposed_comm[group] += time; });

  // Overlapped reductions hide behind the last micro-batch's backward; the rest is exposed, in
  // proportion to each group's share.
  Time total_reduction;
  reductions.for_each([&](CommGroup, Time time) { total_reduction += time; });
  if (total_reduction > Time::zero()) {
    const Time exposed = std::max(Time::zero(), total_reduction - passes.last_backward);
    reductions.for_each([&](CommGroup group, Time time) {
      b.exposed_comm[group] += Time::from_seconds(exposed.seconds() * (time / total_reduction));
    });
  }
  return {stage, b.total(), b};
}

// Whether every pipeline boundary's transfer takes the same time (stages then differ in nothing
// the plan does not say).
bool uniform_transfers(const IterationPlan& plan) {
  return std::all_of(plan.transfers.begin(), plan.transfers.end(),
                     [&](const TransferCost& t) { return t.time == plan.transfers.front().time; });
}

}  // namespace

Result AnalyticalSimulator::simulate(const Workload& workload, const Cluster& cluster,
                                     const SimulationOptions& options,
                                     Diagnostics& diagnostics) const {
  const IterationPlan plan =
      plan_iteration(workload, cluster, options, diagnostics, /*for_closed_form=*/true);
  // Stages run alike unless the program gives them different layers; then each distinct stage
  // is costed once.
  const int64_t stages =
      plan.stage_sets.empty() && uniform_transfers(plan) ? 1 : plan.parallelism.pp;
  const std::vector<size_t> sets = pass_stage_sets(plan);
  std::vector<std::vector<bool>> keys;
  std::vector<StagePasses> distinct;
  std::vector<size_t> passes_of(static_cast<size_t>(stages));
  Time longest;  // the longest pass of any stage: what the pipeline's fill and drain wait on
  for (int64_t s = 0; s < stages; ++s) {
    std::vector<bool> key = pass_key(plan, sets, s);
    const auto same = std::find(keys.begin(), keys.end(), key);
    passes_of[static_cast<size_t>(s)] = static_cast<size_t>(same - keys.begin());
    if (same != keys.end()) continue;
    keys.push_back(std::move(key));
    distinct.push_back(stage_passes(plan, s));
    for (const auto& [cost, count] : distinct.back().runs)
      longest = std::max(longest, cost.span());
  }
  const std::vector<std::vector<size_t>> rows = rows_by_stage(plan, stages);
  std::vector<std::vector<size_t>> gathers_at(plan.gather_buckets.empty() ? 0 : plan.layers.size());
  for (size_t i = 0; i < plan.gather_buckets.size(); ++i)
    gathers_at[plan.gather_buckets[i].layer].push_back(i);
  std::vector<StageTiming> timings;
  for (int64_t s = 0; s < stages; ++s) {
    const auto k = static_cast<size_t>(s);
    const GroupTimes gathers = gathers_at.empty()     ? GroupTimes()
                               : plan.aligned_gathers ? aligned_gather_waits(plan, s, gathers_at)
                                                      : gather_waits(plan, s, gathers_at);
    timings.push_back(stage_timing(plan, s, distinct[passes_of[k]], longest, rows[k], gathers));
  }
  return plan_result("analytical", workload, cluster, plan, std::move(timings), options.layer_rows);
}

}  // namespace orrery
