#include "training/graph_export.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "training/iteration_plan.h"
#include "training/parallel_axes.h"
#include "training/stage_program.h"

namespace orrery {
namespace {

// Ranks as coordinates on the parallel axes (innermost first).
class RankLayout {
 public:
  RankLayout(const Parallelism& par, const std::vector<std::string>& placement)
      : order_(rank_order(placement)), axes_(parallel_axes(par, order_)) {
    int64_t stride = 1;
    for (const ParallelAxis& a : axes_) {
      strides_.push_back(stride);
      stride *= a.size;
    }
    world_ = stride;
    pp_ = static_cast<size_t>(std::find(order_.begin(), order_.end(), TrainingAxis::Pp) -
                              order_.begin());
  }

  int64_t world() const { return world_; }
  int64_t coordinate(int64_t rank, size_t axis) const {
    return rank / strides_[axis] % axes_[axis].size;
  }
  int64_t stage(int64_t rank) const { return coordinate(rank, pp_); }
  // The same rank in another stage.
  int64_t in_stage(int64_t rank, int64_t stage) const {
    return rank + (stage - this->stage(rank)) * strides_[pp_];
  }
  // The lowest member of the group of `kind` that holds `rank`.
  int64_t lowest(int64_t rank, CommGroup kind) const {
    for (const size_t a : group_axes(kind, order_))
      rank -= coordinate(rank, a) * strides_[a];
    return rank;
  }
  // The members of the group of `kind` whose lowest member is `base`, ascending (the embedding
  // group: the first and last coordinate of its axis only).
  std::vector<int64_t> group(int64_t base, CommGroup kind) const {
    std::vector<int64_t> members = {base};
    for (const size_t a : group_axes(kind, order_)) {
      std::vector<int64_t> next;
      for (const int64_t m : members)
        for (int64_t c = 0; c < axes_[a].size; ++c)
          if (!at_axis_ends(kind) || c == 0 || c == axes_[a].size - 1)
            next.push_back(m + c * strides_[a]);
      members = std::move(next);
    }
    std::sort(members.begin(), members.end());
    return members;
  }

 private:
  std::vector<TrainingAxis> order_;
  std::vector<ParallelAxis> axes_;
  std::vector<int64_t> strides_;
  int64_t world_ = 1;
  size_t pp_ = 0;
};

// Process groups by (kind, lowest member), numbered as first met.
class GroupTable {
 public:
  GroupTable(GraphProgram& program, const RankLayout& layout)
      : program_(program), layout_(layout) {}
  int32_t index(CommGroup kind, int64_t rank) {
    const int64_t base = layout_.lowest(rank, kind);
    const auto [it, added] =
        index_.try_emplace({kind, base}, static_cast<int32_t>(program_.groups.size()));
    if (added) {
      program_.groups.push_back(layout_.group(base, kind));
      program_.group_names.push_back(std::string(to_string(kind)) + "." + std::to_string(base));
    }
    return it->second;
  }

 private:
  GraphProgram& program_;
  const RankLayout& layout_;
  std::map<std::pair<CommGroup, int64_t>, int32_t> index_;
};

// Where each transfer key is sent from: (stage, stream).
std::map<int64_t, std::pair<int64_t, StageStream>> senders(const IterationPrograms& programs) {
  std::map<int64_t, std::pair<int64_t, StageStream>> out;
  for (const StageProgram& p : programs.stages)
    for (const StageTask& t : p.tasks)
      if (t.sends >= 0) out[t.sends] = {p.stage, t.stream};
  return out;
}

int64_t tag_of(StageStream stream) {
  return stream == StageStream::ForwardLink ? 0 : 1;
}

// What a compute task does, summed over the layer phases it runs (a task may run several back to
// back): floating-point operations and device-memory bytes of their kernels; zero where the
// workload gives times only.
struct ComputeWork {
  double flop = 0;
  Bytes bytes = 0;
};

const Phase& phase_run(const Layer& layer, TaskPhase phase) {
  if (phase == TaskPhase::InputGrad) return layer.input_grad;
  if (phase == TaskPhase::WeightGrad) return layer.weight_grad;
  return layer.forward;  // forward, and recompute runs it again
}

std::vector<ComputeWork> compute_work(const Program& program, const StageProgram& p) {
  std::vector<ComputeWork> work(p.tasks.size());
  for (const TaskLabel& l : p.labels) {
    if (p.tasks[l.task].kind != StageTaskKind::Compute || l.layer < 0) continue;
    for (const ComputeDemand& k :
         phase_run(program.layers[static_cast<size_t>(l.layer)], l.phase).kernels) {
      work[l.task].flop += k.flop;
      work[l.task].bytes += k.bytes;
    }
  }
  return work;
}

// One rank's graph from its stage's program.
RankGraph rank_graph(const StageProgram& p, const std::vector<ComputeWork>& work, int64_t rank,
                     const RankLayout& layout, GroupTable& groups, const IterationPlan& plan,
                     const std::map<int64_t, std::pair<int64_t, StageStream>>& from) {
  RankGraph g;
  std::vector<uint32_t> index(p.tasks.size());
  std::array<uint32_t, kStageStreams> last;
  last.fill(std::numeric_limits<uint32_t>::max());
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const StageTask& s = p.tasks[i];
    std::vector<uint32_t> deps;
    if (s.receives >= 0) {
      const auto [stage, stream] = from.at(s.receives);
      GraphTask recv;
      recv.kind = GraphTaskKind::Recv;
      recv.node = g.tasks.size();
      recv.peer = layout.in_stage(rank, stage);
      recv.tag = tag_of(stream);
      recv.bytes = plan.transfer_bytes;
      recv.deps_begin = recv.deps_end = static_cast<uint32_t>(g.deps.size());
      deps.push_back(static_cast<uint32_t>(g.tasks.size()));
      g.tasks.push_back(recv);
    }
    GraphTask t;
    t.node = g.tasks.size();
    t.duration = s.duration;
    switch (s.kind) {
      case StageTaskKind::Compute:
        t.flop = work[i].flop;
        t.bytes = work[i].bytes;
        break;
      case StageTaskKind::Collective:
        t.kind = GraphTaskKind::Collective;
        t.collective = s.comm.kind;
        t.bytes = s.comm.bytes;
        t.group = groups.index(s.comm.group, rank);
        break;
      case StageTaskKind::Transfer:
        t.kind = GraphTaskKind::Send;
        t.peer = layout.in_stage(rank, s.to_stage);
        t.tag = tag_of(s.stream);
        t.bytes = s.comm.bytes;
        break;
    }
    const auto stream = static_cast<size_t>(s.stream);
    if (last[stream] != std::numeric_limits<uint32_t>::max()) deps.push_back(last[stream]);
    for (uint32_t k = s.deps_begin; k < s.deps_end; ++k)
      deps.push_back(index[p.deps[k]]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    t.deps_begin = static_cast<uint32_t>(g.deps.size());
    g.deps.insert(g.deps.end(), deps.begin(), deps.end());
    t.deps_end = static_cast<uint32_t>(g.deps.size());
    index[i] = static_cast<uint32_t>(g.tasks.size());
    last[stream] = index[i];
    g.tasks.push_back(t);
  }
  return g;
}

}  // namespace

GraphProgram export_task_graphs(const Workload& workload, const Cluster& cluster,
                                const SimulationOptions& options, Diagnostics& diagnostics) {
  const IterationPlan plan = plan_iteration(workload, cluster, options, diagnostics);
  const IterationPrograms programs = build_stage_programs(plan, /*labels=*/true);
  const RankLayout layout(plan.parallelism,
                          options.placement ? *options.placement : cluster.placement);
  const auto from = senders(programs);
  GraphProgram out;
  GroupTable groups(out, layout);
  std::vector<std::vector<ComputeWork>> work;
  for (const StageProgram& p : programs.stages)
    work.push_back(compute_work(workload.program, p));
  for (int64_t r = 0; r < layout.world(); ++r) {
    const auto stage = static_cast<size_t>(layout.stage(r));
    out.ranks.push_back(
        rank_graph(programs.stages[stage], work[stage], r, layout, groups, plan, from));
  }
  return out;
}

}  // namespace orrery
