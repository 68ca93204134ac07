#include "training/flow_simulator.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/diagnostics.h"
#include "engine/in_order_streams.h"
#include "engine/kernel.h"
#include "engine/successors.h"
#include "network/collective_flows.h"
#include "network/collective_model.h"
#include "network/collective_runs.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "training/compute_waits.h"
#include "training/group_pricing.h"
#include "training/iteration_plan.h"
#include "training/parallel_axes.h"
#include "training/stage_program.h"
#include "training/stage_timeline.h"

namespace orrery {
namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
constexpr size_t kHottestLinks = 10;

// Per stage program: what every rank of the stage shares.
struct ProgramIndex {
  std::array<std::vector<uint32_t>, kStageStreams> stream_tasks;  // task indices, program order
  engine::Successors successors;                                  // local dependents
  std::vector<uint32_t> initial_waiting;                          // deps + an incoming transfer
  std::vector<uint32_t> receiver;                                 // by transfer key, or kNone

  ProgramIndex(const StageProgram& p, int64_t keys) {
    const size_t n = p.tasks.size();
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    edges.reserve(p.deps.size());
    initial_waiting.assign(n, 0);
    receiver.assign(static_cast<size_t>(keys), kNone);
    for (uint32_t t = 0; t < n; ++t) {
      const StageTask& task = p.tasks[t];
      stream_tasks[static_cast<size_t>(task.stream)].push_back(t);
      for (uint32_t k = task.deps_begin; k < task.deps_end; ++k)
        edges.emplace_back(p.deps[k], t);
      initial_waiting[t] = task.deps_end - task.deps_begin + (task.receives >= 0 ? 1 : 0);
      if (task.receives >= 0) receiver[static_cast<size_t>(task.receives)] = t;
    }
    successors = engine::Successors(n, edges);
  }
};

struct Job {
  const Workload* workload = nullptr;
  Diagnostics* diagnostics = nullptr;
  IterationPlan plan;
  IterationPrograms programs;
  std::vector<ProgramIndex> index;  // by stage
  int64_t offset = 0;               // first GPU of the job
  int64_t first_rank = 0;           // index of its rank 0 among all simulated ranks
  std::optional<RankPlacement> placement;
  std::optional<RankPlacement> ends;  // the embedding group's (RankPlacement::ends_of)
  std::vector<int64_t> stride;        // per placement axis
  std::array<std::vector<size_t>, kCommGroups> group_axes;
  // The analytical model of each kind of group (the event mode's, on the job's own GPUs), to
  // pick a stand-in for an algorithm without a decomposition; built when first needed.
  std::unique_ptr<LinkGraph> own_links;
  std::array<std::unique_ptr<CollectiveModel>, kCommGroups> models;

  // The placement whose groups along `group`'s axes are its communicators.
  const RankPlacement& placement_of(CommGroup group) const {
    return at_axis_ends(group) ? *ends : *placement;
  }
  size_t pp_axis = 0;
  std::vector<std::pair<int64_t, uint32_t>> sender;  // by transfer key: (stage, task)
};

struct RankState {
  uint32_t job = 0;
  int64_t local = 0;  // rank within its job
  int64_t stage = 0;
  uint32_t task_base = 0;  // its tasks' ids in the simulation: task_base + index in its program
  std::array<Time, kStageStreams> latency{};  // of the transfer in flight on a link stream
};

// A collective's members: global rank indices and each one's task (members on different stages
// run different programs).
using Members = std::vector<std::pair<uint32_t, uint32_t>>;

// What an engine::Event means here: (kind, a, b).
enum EventKind : uint32_t {
  kTaskFinish,    // (global rank, task): the task ends
  kTransferFlow,  // (global rank, task): a transfer's bytes are in; its latency follows
  kStepFlow,      // (run, -): one flow of a collective's step ends (CollectiveRuns)
  kStepDone,      // (run, -): a run of the step and its latency are over (kStepFlow + 1)
};

class Simulation {
 public:
  Simulation(const Cluster& cluster, std::vector<Job>& jobs, int64_t gpus)
      : topology_(cluster.network),
        jobs_(jobs),
        links_(cluster.network, gpus),
        kernel_(links_.capacities()),
        collectives_(kernel_, kStepFlow, [this](Members members) {
          for (const auto& [g, t] : members)
            finish_task(g, t);
        }) {
    kernel_.sharing().set_tags(static_cast<uint32_t>(jobs_.size()));
    flows_.assign(jobs_.size(), 0);
    for (uint32_t j = 0; j < jobs_.size(); ++j) {
      Job& job = jobs_[j];
      job.first_rank = static_cast<int64_t>(ranks_.size());
      for (int64_t r = 0; r < job.plan.parallelism.world_size; ++r) {
        RankState s;
        s.job = j;
        s.local = r;
        s.stage = (r / job.stride[job.pp_axis]) % job.plan.parallelism.pp;
        const ProgramIndex& idx = job.index[static_cast<size_t>(s.stage)];
        if (streams_.task_count() + idx.initial_waiting.size() >= engine::InOrderStreams::kNone)
          throw std::length_error("flow simulation: more than 2^32 tasks");
        s.task_base = static_cast<uint32_t>(streams_.task_count());
        streams_.add_tasks(idx.initial_waiting);
        for (const std::vector<uint32_t>& order : idx.stream_tasks)
          streams_.add_stream(order, s.task_base);  // stream g * kStageStreams + s
        ranks_.push_back(s);
      }
    }
    start_.assign(streams_.task_count(), Time::zero());
    finish_.assign(streams_.task_count(), Time::zero());
  }

  void run() {
    for (uint32_t g = 0; g < ranks_.size(); ++g)
      for (size_t s = 0; s < kStageStreams; ++s)
        try_start(g, s);
    kernel_.run([this](const engine::Event& e) { handle(e); });
    kernel_.sharing().flush_usage(kernel_.now());
    for (uint32_t g = 0; g < ranks_.size(); ++g) {
      const RankState& r = ranks_[g];
      for (size_t s = 0; s < kStageStreams; ++s)
        if (const uint32_t t = streams_.next(stream_of(g, s)); t != engine::InOrderStreams::kNone)
          throw std::logic_error("flow simulation deadlock: rank " + std::to_string(r.local) +
                                 " of job " + std::to_string(r.job) + " stuck at task " +
                                 std::to_string(t - r.task_base) + " of " +
                                 std::to_string(program(r).tasks.size()));
    }
  }

  void on_progress(std::function<void(double)> progress) { progress_ = std::move(progress); }
  const std::vector<RankState>& ranks() const { return ranks_; }
  Time start(size_t i) const { return start_[i]; }
  Time finish(size_t i) const { return finish_[i]; }
  const engine::FairShare& network() const { return kernel_.sharing(); }
  engine::FairShare& network() { return kernel_.sharing(); }
  const LinkGraph& links() const { return links_; }

 private:
  Job& job(const RankState& r) const { return jobs_[r.job]; }
  const StageProgram& program(const RankState& r) const {
    return job(r).programs.stages[static_cast<size_t>(r.stage)];
  }

  void handle(const engine::Event& e) {
    switch (e.kind) {
      case kTaskFinish:
        finish_task(e.a, e.b);
        break;
      case kTransferFlow: {
        const RankState& r = ranks_[e.a];
        const auto stream = static_cast<size_t>(program(r).tasks[e.b].stream);
        kernel_.after(r.latency[stream], {kTaskFinish, e.a, e.b});
        break;
      }
      case kStepFlow:
      case kStepDone:
        collectives_.handle(e);
        break;
    }
  }

  // Rank g's stream `stream` among streams_.
  static uint32_t stream_of(uint32_t g, size_t stream) {
    return g * static_cast<uint32_t>(kStageStreams) + static_cast<uint32_t>(stream);
  }

  void try_start(uint32_t g, size_t stream) {
    const uint32_t id = streams_.ready(stream_of(g, stream));
    if (id == engine::InOrderStreams::kNone) return;
    streams_.start(stream_of(g, stream));
    start_[id] = kernel_.now();
    const RankState& r = ranks_[g];
    const uint32_t t = id - r.task_base;
    const StageTask& task = program(r).tasks[t];
    switch (task.kind) {
      case StageTaskKind::Compute:
        kernel_.after(task.duration, {kTaskFinish, g, t});
        break;
      case StageTaskKind::Collective:
        arrive(g, t, task);
        break;
      case StageTaskKind::Transfer:
        send(g, t, task);
        break;
    }
  }

  void finish_task(uint32_t g, uint32_t t) {
    if (progress_ && (++finished_ & 4095) == 0)
      progress_(static_cast<double>(finished_) / static_cast<double>(streams_.task_count()));
    const RankState& r = ranks_[g];
    const StageProgram& p = program(r);
    const ProgramIndex& idx = job(r).index[static_cast<size_t>(r.stage)];
    const StageTask& task = p.tasks[t];
    finish_[r.task_base + t] = kernel_.now();
    const auto stream = static_cast<size_t>(task.stream);
    streams_.finish(stream_of(g, stream));
    for (const uint32_t next : idx.successors.of(t))
      if (streams_.release(r.task_base + next))
        try_start(g, static_cast<size_t>(p.tasks[next].stream));
    if (task.sends >= 0) {
      const uint32_t peer = peer_of(g, task.to_stage);
      const RankState& pr = ranks_[peer];
      const StageProgram& pp = program(pr);
      const uint32_t receiver =
          job(pr).index[static_cast<size_t>(pr.stage)].receiver[static_cast<size_t>(task.sends)];
      if (streams_.release(pr.task_base + receiver))
        try_start(peer, static_cast<size_t>(pp.tasks[receiver].stream));
    }
    try_start(g, stream);
  }

  // The rank of `to_stage` with the same coordinates on the other axes.
  uint32_t peer_of(uint32_t g, int64_t to_stage) const {
    const RankState& r = ranks_[g];
    const Job& j = job(r);
    const int64_t local = r.local + (to_stage - r.stage) * j.stride[j.pp_axis];
    return static_cast<uint32_t>(j.first_rank + local);
  }

  void send(uint32_t g, uint32_t t, const StageTask& task) {
    RankState& r = ranks_[g];
    const Job& j = job(r);
    const int64_t src = j.offset + r.local;
    const int64_t dst = j.offset + ranks_[peer_of(g, task.to_stage)].local;
    path_.clear();
    const Time route = links_.route(src, dst, hash_++, path_);
    // The point-to-point path's protocol as the closed form prices the boundary's transfer
    // (GroupPricing::transfer).
    const TransferCost& cost = j.plan.transfer(r.stage, task.to_stage);
    r.latency[static_cast<size_t>(task.stream)] = cost.latency.value_or(route);
    kernel_.start(path_, static_cast<double>(task.comm.bytes) * cost.rate, {kTransferFlow, g, t},
                  r.job);
    ++flows_[r.job];
  }

  void arrive(uint32_t g, uint32_t t, const StageTask& task) {
    const RankState& r = ranks_[g];
    Job& j = job(r);
    const auto group = static_cast<size_t>(task.comm.group);
    int64_t base = r.local;
    int64_t size = 1;
    for (const size_t a : j.group_axes[group]) {
      base -= (r.local / j.stride[a] % j.placement->axes()[a].size) * j.stride[a];
      size *= j.placement_of(task.comm.group).axes()[a].size;
    }
    if (size <= 1) {
      kernel_.after(Time::zero(), {kTaskFinish, g, t});
      return;
    }
    // Members meet at their n-th collective on the group's stream (the same task where they run
    // one program, different tasks on different stages).
    const uint32_t nth = streams_.position(stream_of(g, static_cast<size_t>(task.stream)));
    const auto key = std::make_tuple(r.job, static_cast<uint32_t>(group), base, nth);
    auto& arrived = arrivals_[key];
    if (arrived.empty()) arrived.reserve(static_cast<size_t>(size));
    arrived.emplace_back(g, t);
    if (static_cast<int64_t>(arrived.size()) < size) return;
    Members members = std::move(arrived);
    arrivals_.erase(key);
    launch(r.job, task, base, std::move(members));
  }

  const std::vector<RoutedStep>& routed(uint32_t job_id, const StageTask& task, int64_t base,
                                        const std::vector<int64_t>& gpus) {
    Job& j = jobs_[job_id];
    const auto group = static_cast<size_t>(task.comm.group);
    const auto key = std::make_tuple(job_id, static_cast<uint32_t>(group), base, task.comm.kind,
                                     task.comm.bytes, task.algorithm);
    const auto it = routed_.find(key);
    if (it != routed_.end()) return it->second;
    if (!j.own_links)
      j.own_links = std::make_unique<LinkGraph>(topology_, j.plan.parallelism.world_size);
    auto& model = j.models[group];
    if (!model)
      model = std::make_unique<CollectiveModel>(
          *j.own_links, j.placement_of(task.comm.group).groups(j.group_axes[group]));
    const CollectiveFlowPlan plan =
        flow_plan(*model, task.comm.kind, task.comm.bytes, task.algorithm, gpus);
    if (!decomposes(task.algorithm) && warned_.insert({job_id, task.algorithm}).second)
      j.diagnostics->warn({}, std::string(to_string(task.algorithm)) +
                                  " has no flow decomposition; flow mode runs the fastest "
                                  "algorithm that has one in its place (here " +
                                  std::string(to_string(plan.algorithm)) + ")");
    return routed_.emplace(key, route_steps(topology_, links_, plan.steps, hash_)).first->second;
  }

  // `members`: (global rank index, task) of each member, in any order.
  void launch(uint32_t job_id, const StageTask& task, int64_t base, Members members) {
    const Job& j = jobs_[job_id];
    std::sort(members.begin(), members.end());  // rank order, as the group lists its GPUs
    std::vector<int64_t> gpus;
    gpus.reserve(members.size());
    for (const auto& [g, t] : members) {
      gpus.push_back(j.offset + (static_cast<int64_t>(g) - j.first_rank));
      // A collective joining stages runs from when the last stage reaches it; before, the
      // others wait (bubble, as in the event mode).
      if (joins_stages(task.comm.group)) start_[ranks_[g].task_base + t] = kernel_.now();
    }
    const std::vector<RoutedStep>& steps = routed(job_id, task, base, gpus);
    flows_[job_id] += flow_count(steps);
    // The whole run's flows by the per-collective estimate (collective_flows.h): a run of many
    // collectives, each within the budget, stops once their sum is past it.
    for (const RoutedStep& step : steps)
      estimated_seconds_ +=
          flow_seconds(static_cast<double>(step.bytes.size()), static_cast<double>(step.repeat));
    if (estimated_seconds_ > kFlowBudgetSeconds) {
      double flows = 0;
      for (const uint64_t f : flows_)
        flows += static_cast<double>(f);
      throw_too_many_flows(flows, estimated_seconds_, "this iteration (so far)");
    }
    collectives_.launch(steps, std::move(members), job_id);
  }

 public:
  std::vector<uint64_t> flows_;   // started, per job
  double estimated_seconds_ = 0;  // their computer time, by flow_seconds()

 private:
  const Topology& topology_;
  std::vector<Job>& jobs_;
  LinkGraph links_;
  std::set<std::pair<uint32_t, Algorithm>> warned_;  // (job, algorithm) stand-ins warned of
  engine::Kernel kernel_;
  CollectiveRuns<Members> collectives_;
  std::vector<RankState> ranks_;
  engine::InOrderStreams streams_;  // kStageStreams per rank, in rank order
  std::vector<Time> start_, finish_;
  // (job, group, base, n-th on the stream) -> the (rank, task) of the members arrived so far
  std::map<std::tuple<uint32_t, uint32_t, int64_t, uint32_t>, Members> arrivals_;
  std::map<std::tuple<uint32_t, uint32_t, int64_t, CollectiveKind, Bytes, Algorithm>,
           std::vector<RoutedStep>>
      routed_;
  std::vector<LinkId> path_;
  uint64_t hash_ = 0;
  std::function<void(double)> progress_;
  uint64_t finished_ = 0;  // tasks, counted only for progress
};

Job prepare(const Workload& w, const Cluster& cluster, const SimulationOptions& options,
            int64_t offset, Diagnostics& diagnostics) {
  Job j;
  j.workload = &w;
  j.diagnostics = &diagnostics;
  j.plan = plan_iteration(w, cluster, options, diagnostics);
  j.programs = build_stage_programs(j.plan, options.record_timeline);
  // Every rank runs its stage's tasks here (the event mode runs one rank a stage).
  double tasks = 0;
  for (const StageProgram& p : j.programs.stages)
    tasks += static_cast<double>(p.tasks.size());
  tasks *= static_cast<double>(j.plan.parallelism.world_size / j.plan.parallelism.pp);
  if (tasks > static_cast<double>(kMaxStageTasks))
    throw InputError(
        {w.source, 0},
        fmt::format("expected a job the flow simulation can hold: every one of its {} "
                    "ranks runs its stage's tasks, about {:.0f} million in all, "
                    "beyond the {} million it takes; the event and analytical modes "
                    "run one rank a stage",
                    j.plan.parallelism.world_size, tasks / 1e6, kMaxStageTasks / 1'000'000));
  for (const StageProgram& p : j.programs.stages)
    j.index.emplace_back(p, j.programs.transfer_keys);
  j.offset = offset;
  const Parallelism& par = j.plan.parallelism;
  const std::vector<TrainingAxis> order = rank_order(options.placement.value_or(cluster.placement));
  const std::vector<ParallelAxis> axes = parallel_axes(par, order);
  j.placement.emplace(axes, cluster.network);
  int64_t stride = 1;
  for (const ParallelAxis& a : axes) {
    j.stride.push_back(stride);
    stride *= a.size;
  }
  j.pp_axis = group_axes(CommGroup::Pipeline, order).front();
  j.ends.emplace(j.placement->ends_of(j.pp_axis));
  for (const CommGroup g : kTrainingGroups)
    j.group_axes[static_cast<size_t>(g)] = group_axes(g, order);
  j.sender.assign(static_cast<size_t>(j.programs.transfer_keys), {-1, kNone});
  for (const StageProgram& p : j.programs.stages)
    for (uint32_t t = 0; t < p.tasks.size(); ++t)
      if (p.tasks[t].sends >= 0) j.sender[static_cast<size_t>(p.tasks[t].sends)] = {p.stage, t};
  return j;
}

// The compute-stream breakdown of one rank (as the event mode's account()).
StageTiming account(const Simulation& sim, const Job& job, uint32_t g) {
  const RankState& r = sim.ranks()[g];
  const StageProgram& p = job.programs.stages[static_cast<size_t>(r.stage)];
  StageTiming result;
  result.stage = r.stage;
  Breakdown& b = result.breakdown;
  Time previous;
  for (uint32_t t = 0; t < p.tasks.size(); ++t) {
    const StageTask& task = p.tasks[t];
    if (task.kind != StageTaskKind::Compute) continue;
    const Time begin = sim.start(r.task_base + t);
    const Time gap = begin - previous;
    if (gap > Time::zero()) {
      // What it waited for: the dependency (or incoming transfer) that finished last.
      WaitCause cause{nullptr, Time::zero(), Time::zero() - Time::max()};
      for (uint32_t k = task.deps_begin; k < task.deps_end; ++k) {
        const uint32_t d = p.deps[k];
        if (sim.finish(r.task_base + d) > cause.finish)
          cause = {&p.tasks[d], sim.start(r.task_base + d), sim.finish(r.task_base + d)};
      }
      if (task.receives >= 0) {
        const auto [stage, sender] = job.sender[static_cast<size_t>(task.receives)];
        const int64_t local = r.local + (stage - r.stage) * job.stride[job.pp_axis];
        const RankState& s = sim.ranks()[static_cast<size_t>(job.first_rank + local)];
        if (sim.finish(s.task_base + sender) > cause.finish)
          cause = {&job.programs.stages[static_cast<size_t>(stage)].tasks[sender],
                   sim.start(s.task_base + sender), sim.finish(s.task_base + sender)};
      }
      charge_wait(b, gap, previous, cause);
    }
    b.compute += task.duration - task.exposed_overlap;
    if (task.exposed_overlap > Time::zero())
      b.exposed_comm[CommGroup::Tensor] += task.exposed_overlap;
    previous = sim.finish(r.task_base + t);
  }
  result.finish = previous;
  return result;
}

// The timeline of a job's chosen ranks (`ranks`: local ranks) and the utilisation of `hottest`.
IterationTimeline job_timeline(const Simulation& sim, const Job& job,
                               const std::vector<int64_t>& ranks,
                               const std::vector<LinkId>& hottest) {
  IterationTimeline timeline;
  for (const int64_t local : ranks) {
    const RankState& r = sim.ranks()[static_cast<size_t>(job.first_rank + local)];
    const StageProgram& p = job.programs.stages[static_cast<size_t>(r.stage)];
    for (TimelineTrack& track :
         stage_tracks(job.workload->program, job.plan, p, local, [&](uint32_t t) {
           return std::pair(sim.start(r.task_base + t), sim.finish(r.task_base + t));
         }))
      timeline.tracks.push_back(std::move(track));
  }
  for (const LinkId id : hottest)
    timeline.links.push_back({sim.links().link_name(id), sim.network().rate_history(id)});
  return timeline;
}

// Throws InputError when a rank asked for the timeline is not one of the job's.
void check_timeline_ranks(const Job& job, const std::vector<int64_t>& asked) {
  const int64_t world = job.plan.parallelism.world_size;
  for (const int64_t r : asked)
    if (r < 0 || r >= world)
      throw InputError("--trace-ranks: rank " + std::to_string(r) + " is not among the job's " +
                       std::to_string(world) + " ranks (0 to " + std::to_string(world - 1) + ")");
}

// The links that carried most of a job's traffic, most first (at most kHottestLinks).
std::vector<LinkId> hottest_links(const Simulation& sim, uint32_t job) {
  std::vector<LinkId> order(sim.network().resource_count());
  for (LinkId l = 0; l < order.size(); ++l)
    order[l] = l;
  const size_t keep = std::min(kHottestLinks, order.size());
  std::partial_sort(
      order.begin(), order.begin() + static_cast<long>(keep), order.end(), [&](LinkId a, LinkId b) {
        return sim.network().usage(a, job).amount > sim.network().usage(b, job).amount;
      });
  order.resize(keep);
  while (!order.empty() && sim.network().usage(order.back(), job).amount <= 0)
    order.pop_back();
  return order;
}

}  // namespace

std::vector<Result> FlowSimulator::simulate_jobs(std::span<const Workload* const> workloads,
                                                 const Cluster& cluster,
                                                 const SimulationOptions& options,
                                                 std::span<Diagnostics* const> diagnostics) const {
  std::vector<Job> jobs;
  int64_t next = 0;
  const int64_t block = std::max<int64_t>(1, cluster.network[0].size);
  for (size_t k = 0; k < workloads.size(); ++k) {
    SimulationOptions o = options;
    jobs.push_back(prepare(*workloads[k], cluster, o, next, *diagnostics[k]));
    next = (next + jobs.back().plan.parallelism.world_size + block - 1) / block * block;
  }
  const int64_t gpus = jobs.size() == 1 ? jobs.front().plan.parallelism.world_size : next;
  if (const auto cap = cluster.network.capacity(); cap && gpus > *cap)
    throw InputError("the jobs need " + std::to_string(gpus) + " GPUs but cluster '" +
                     cluster.name + "' has " + std::to_string(*cap));
  for (const Job& job : jobs)
    check_timeline_ranks(job, options.timeline_ranks);
  // A timeline shows the busiest links' utilisation over time. Which links those are is known
  // only at the end, and keeping every link's rate changes would hold millions of them, so a
  // first run finds the links (its warnings, the same as the second's, are dropped) and the
  // second records theirs alone. Progress: half each.
  std::vector<std::vector<LinkId>> hot(jobs.size());
  const auto half = [&](double offset) -> std::function<void(double)> {
    if (!options.progress) return nullptr;
    return [&options, offset](double done) { options.progress(offset + done / 2); };
  };
  if (options.record_timeline) {
    std::vector<Diagnostics> dropped(jobs.size());
    for (size_t k = 0; k < jobs.size(); ++k)
      jobs[k].diagnostics = &dropped[k];
    Simulation first(cluster, jobs, gpus);
    first.on_progress(half(0));
    first.run();
    for (uint32_t j = 0; j < jobs.size(); ++j)
      hot[j] = hottest_links(first, j);
    for (size_t k = 0; k < jobs.size(); ++k)
      jobs[k].diagnostics = diagnostics[k];
  }
  Simulation sim(cluster, jobs, gpus);
  if (options.record_timeline) {
    std::vector<LinkId> recorded;
    for (const auto& links : hot)
      recorded.insert(recorded.end(), links.begin(), links.end());
    sim.network().record_rates(recorded);
    sim.on_progress(half(0.5));
  } else {
    sim.on_progress(options.progress);
  }
  sim.run();

  const auto usage = [&](const std::vector<LinkId>& ids, uint32_t job) {
    std::vector<LinkUsage> list;
    for (const LinkId id : ids) {
      const auto& s = sim.network().usage(id, job);
      list.push_back({sim.links().link_name(id), s.amount, s.busy, s.peak});
    }
    return list;
  };

  std::vector<Result> results;
  for (uint32_t j = 0; j < jobs.size(); ++j) {
    const Job& job = jobs[j];
    // Each stage is represented by its rank that finishes last.
    std::vector<std::optional<StageTiming>> last(static_cast<size_t>(job.plan.parallelism.pp));
    std::vector<int64_t> last_rank(last.size(), 0);
    for (int64_t l = 0; l < job.plan.parallelism.world_size; ++l) {
      StageTiming t = account(sim, job, static_cast<uint32_t>(job.first_rank + l));
      auto& slot = last[static_cast<size_t>(t.stage)];
      if (!slot || t.finish > slot->finish) {
        last_rank[static_cast<size_t>(t.stage)] = l;
        slot = std::move(t);
      }
    }
    std::vector<StageTiming> stages;
    for (auto& s : last)
      stages.push_back(std::move(*s));
    Result result = plan_result("flow", *job.workload, cluster, job.plan, std::move(stages),
                                options.layer_rows);
    for (int64_t l = 0; l < job.plan.parallelism.world_size; ++l) {
      const RankState& r = sim.ranks()[static_cast<size_t>(job.first_rank + l)];
      result.simulated_tasks +=
          static_cast<int64_t>(job.programs.stages[static_cast<size_t>(r.stage)].tasks.size());
    }
    result.first_gpu = job.offset;
    result.flows = static_cast<int64_t>(sim.flows_[j]);
    result.hottest_links = usage(hottest_links(sim, j), j);
    if (options.record_timeline)
      result.timeline = job_timeline(
          sim, job, options.timeline_ranks.empty() ? last_rank : options.timeline_ranks, hot[j]);
    results.push_back(std::move(result));
  }
  return results;
}

Result FlowSimulator::simulate(const Workload& workload, const Cluster& cluster,
                               const SimulationOptions& options, Diagnostics& diagnostics) const {
  const Workload* one[] = {&workload};
  Diagnostics* sink[] = {&diagnostics};
  return std::move(simulate_jobs(one, cluster, options, sink).front());
}

}  // namespace orrery
