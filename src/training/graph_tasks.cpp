#include "training/graph_tasks.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "network/rank_placement.h"

namespace orrery {

using engine::StreamId;
using engine::TaskGraph;
using engine::TaskId;

namespace {

constexpr TaskId kNone = std::numeric_limits<TaskId>::max();

// Representatives' collectives that do not line up (GraphBuilder::add_quotient_collectives).
struct QuotientMismatch {};

// The streams a rank opens as it needs them (besides compute and memory).
enum class StreamKind { Group, Send, Receive };

std::string node_text(uint64_t node) {
  return "node " + std::to_string(node);
}

// The simulated ranks' tasks as one engine graph.
class GraphBuilder {
 public:
  GraphBuilder(const GraphProgram& program, const RankClasses& classes, GraphPricer& pricer)
      : program_(program), pricer_(pricer) {
    out.classes = classes;
    const auto ranks = classes.representatives.size();
    out.id.resize(ranks);
    out.compute.resize(ranks);
    size_t tasks = 0, deps = 0;
    for (const int64_t r : classes.representatives) {
      tasks += program.ranks[static_cast<size_t>(r)].tasks.size();
      deps += program.ranks[static_cast<size_t>(r)].deps.size();
    }
    out.graph.reserve(tasks, deps + tasks);
    out.origin.reserve(tasks);
  }

  void build() {
    for (size_t k = 0; k < classes_.representatives.size(); ++k)
      add_rank_tasks(k);
    if (!classes_.collapsed)
      add_shared_collectives();
    else if (!classes_.closed)
      add_quotient_collectives();
    for (size_t k = 0; k < classes_.representatives.size(); ++k)
      add_dependencies(k);
  }

  GraphTasks out;

 private:
  const RankGraph& rank_graph(size_t k) const {
    return program_.ranks[static_cast<size_t>(classes_.representatives[k])];
  }

  TaskId add(StreamId stream, Time duration, int64_t rank, uint32_t task) {
    // Every instant before the last finish some task runs, so the durations' sum bounds the
    // clock: kept far inside Time's range.
    constexpr int64_t kMaxTotalPs = int64_t{1} << 62;
    if (__builtin_add_overflow(total_ps_, duration.ps(), &total_ps_) || total_ps_ > kMaxTotalPs) {
      const RankGraph& g = program_.ranks[static_cast<size_t>(rank)];
      throw InputError({g.source, 0}, node_text(g.tasks[task].node) +
                                          ": expected the tasks' durations to add up to less "
                                          "than 53 days; they are implausible");
    }
    const TaskId id = out.graph.add_task(stream, duration);
    out.origin.push_back({rank, task});
    return id;
  }

  // The stream of `rank` for one group (a = the group), or one peer and tag (a, b).
  StreamId stream(int64_t rank, StreamKind kind, int64_t a, int64_t b) {
    const auto [it, added] = streams_.try_emplace({rank, kind, a, b}, 0);
    if (added) it->second = out.graph.add_stream();
    return it->second;
  }

  // Every task but (when ranks are explicit) collectives, which add_shared_collectives() adds.
  void add_rank_tasks(size_t k) {
    const int64_t r = classes_.representatives[k];
    const RankGraph& g = rank_graph(k);
    const StreamId compute = out.graph.add_stream();
    const StreamId memory = out.graph.add_stream();
    out.id[k].assign(g.tasks.size(), kNone);
    for (uint32_t i = 0; i < g.tasks.size(); ++i) {
      const GraphTask& t = g.tasks[i];
      switch (t.kind) {
        case GraphTaskKind::Compute:
          out.id[k][i] = add(compute, t.duration.value_or(Time::zero()), r, i);
          out.compute[k].push_back(out.id[k][i]);
          break;
        case GraphTaskKind::Memory:
          out.id[k][i] = add(memory, t.duration.value_or(Time::zero()), r, i);
          break;
        case GraphTaskKind::Collective:
          if (classes_.closed)
            out.id[k][i] =
                add(stream(r, StreamKind::Group, t.group, 0), collective_time(t, g), r, i);
          break;
        case GraphTaskKind::Send:
          out.id[k][i] = add(stream(r, StreamKind::Send, t.peer, t.tag), send_time(r, t, g), r, i);
          break;
        case GraphTaskKind::Recv:
          out.id[k][i] = add(stream(r, StreamKind::Receive, t.peer, t.tag), Time::zero(), r, i);
          break;
      }
    }
  }

  // The network model's times; a size beyond Time's range is the file's error.
  Time collective_time(const GraphTask& t, const RankGraph& g) {
    if (t.duration) return *t.duration;
    try {
      return pricer_.collective(t.group, t.collective, t.bytes);
    } catch (const TimeOverflow&) {
      throw too_large(t, g);
    }
  }
  Time send_time(int64_t rank, const GraphTask& t, const RankGraph& g) const {
    if (t.duration) return *t.duration;
    try {
      return pricer_.transfer(rank, t.peer, t.bytes).time;
    } catch (const TimeOverflow&) {
      throw too_large(t, g);
    }
  }
  static InputError too_large(const GraphTask& t, const RankGraph& g) {
    return InputError({g.source, 0}, node_text(t.node) +
                                         ": expected a size the network moves "
                                         "within 106 days, found " +
                                         std::to_string(t.bytes) + " B");
  }

  // Explicit ranks: the i-th collective of every member on a group is one task on its stream.
  void add_shared_collectives() {
    const size_t n = program_.ranks.size();
    std::map<int32_t, std::vector<std::vector<uint32_t>>> issued;  // group -> per rank: tasks
    for (size_t r = 0; r < n; ++r)
      for (uint32_t i = 0; i < program_.ranks[r].tasks.size(); ++i) {
        const GraphTask& t = program_.ranks[r].tasks[i];
        if (t.kind != GraphTaskKind::Collective) continue;
        auto& per_rank = issued[t.group];
        per_rank.resize(n);
        per_rank[r].push_back(i);
      }
    for (const auto& [group, per_rank] : issued) {
      const std::vector<int64_t>& members = pricer_.members(group);
      const StreamId s = out.graph.add_stream();
      const auto first = static_cast<size_t>(members.front());
      for (const int64_t m : members)
        check_same_count(group, first, static_cast<size_t>(m), per_rank);
      for (size_t j = 0; j < per_rank[first].size(); ++j) {
        const GraphTask& lead = program_.ranks[first].tasks[per_rank[first][j]];
        Time duration = collective_time(lead, program_.ranks[first]);
        for (const int64_t m : members) {
          const GraphTask& t =
              program_.ranks[static_cast<size_t>(m)].tasks[per_rank[static_cast<size_t>(m)][j]];
          check_same_collective(lead, first, t, static_cast<size_t>(m), group);
          if (t.duration) duration = std::max(duration, *t.duration);
        }
        const TaskId id = add(s, duration, static_cast<int64_t>(first), per_rank[first][j]);
        for (const int64_t m : members)
          out.id[static_cast<size_t>(m)][per_rank[static_cast<size_t>(m)][j]] = id;
      }
    }
  }

  // Collapsed but not closed: the i-th collective of a representative on its group is one task
  // with the task of the same index of each member's class representative (a member's trace is
  // its representative's, renamed); representatives of one class appearing twice in a task, or a
  // member without that collective, throw QuotientMismatch (every rank is simulated instead).
  void add_quotient_collectives() {
    const size_t reps = classes_.representatives.size();
    std::vector<uint32_t> base(reps + 1, 0);
    for (size_t k = 0; k < reps; ++k)
      base[k + 1] = base[k] + static_cast<uint32_t>(rank_graph(k).tasks.size());
    std::vector<uint32_t> parent(base.back());
    std::iota(parent.begin(), parent.end(), 0);
    const auto find = [&](uint32_t x) {
      while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
      return x;
    };
    for (size_t k = 0; k < reps; ++k) {
      const int64_t r = classes_.representatives[k];
      std::map<int32_t, size_t> issued;  // group -> collectives so far
      const RankGraph& g = rank_graph(k);
      for (uint32_t i = 0; i < g.tasks.size(); ++i) {
        const GraphTask& t = g.tasks[i];
        if (t.kind != GraphTaskKind::Collective) continue;
        const size_t nth = issued[t.group]++;
        for (const int64_t m : pricer_.members(t.group)) {
          if (m == r) continue;
          const std::vector<uint32_t>& list = collectives_of(m, t.group);
          if (nth >= list.size()) throw QuotientMismatch{};
          const auto c = static_cast<size_t>(classes_.class_of[static_cast<size_t>(m)]);
          parent[find(base[c] + list[nth])] = find(base[k] + i);
        }
      }
    }
    // One task per set, on the stream of its first member's group, in that member's order.
    std::vector<TaskId> task_of(base.back(), kNone);
    std::vector<std::vector<bool>> seen(reps);
    for (size_t k = 0; k < reps; ++k) {
      const int64_t r = classes_.representatives[k];
      const RankGraph& g = rank_graph(k);
      for (uint32_t i = 0; i < g.tasks.size(); ++i) {
        const GraphTask& t = g.tasks[i];
        if (t.kind != GraphTaskKind::Collective) continue;
        TaskId& id = task_of[find(base[k] + i)];
        if (id == kNone)
          id = add(stream(r, StreamKind::Group, t.group, 0), collective_time(t, g), r, i);
        else if (out.graph.duration_of(id) != collective_time(t, g))
          throw QuotientMismatch{};
        out.id[k][i] = id;
      }
    }
    for (size_t k = 0; k < reps; ++k) {  // a task holds each representative once
      std::set<TaskId> mine;
      for (uint32_t i = 0; i < rank_graph(k).tasks.size(); ++i)
        if (rank_graph(k).tasks[i].kind == GraphTaskKind::Collective &&
            !mine.insert(out.id[k][i]).second)
          throw QuotientMismatch{};
    }
  }

  // The task indices of `rank`'s collectives on `group`, in order.
  const std::vector<uint32_t>& collectives_of(int64_t rank, int32_t group) {
    auto [it, added] = collectives_.try_emplace({rank, group});
    if (added) {
      const RankGraph& g = program_.ranks[static_cast<size_t>(rank)];
      for (uint32_t i = 0; i < g.tasks.size(); ++i)
        if (g.tasks[i].kind == GraphTaskKind::Collective && g.tasks[i].group == group)
          it->second.push_back(i);
    }
    return it->second;
  }

  std::string group_text(int32_t group) const {
    return group < 0 ? "the group of all ranks"
                     : "process group '" + program_.group_names[static_cast<size_t>(group)] + "'";
  }

  void check_same_count(int32_t group, size_t first, size_t m,
                        const std::vector<std::vector<uint32_t>>& per_rank) const {
    const size_t a = per_rank[first].size(), b = per_rank[m].size();
    if (a == b) return;
    const size_t more = a > b ? first : m, fewer = a > b ? m : first;
    const auto& extra = program_.ranks[more].tasks[per_rank[more][std::min(a, b)]];
    throw InputError({program_.ranks[more].source, 0},
                     node_text(extra.node) + ": expected rank " + std::to_string(fewer) +
                         " to issue this collective on " + group_text(group) + " too; it issues " +
                         std::to_string(std::min(a, b)) + " there, so this one would wait forever");
  }

  void check_same_collective(const GraphTask& lead, size_t first, const GraphTask& t, size_t m,
                             int32_t group) const {
    if (t.collective == lead.collective && t.bytes == lead.bytes) return;
    throw InputError(
        {program_.ranks[m].source, 0},
        node_text(t.node) + ": expected the " + std::string(to_string(lead.collective)) + " of " +
            std::to_string(lead.bytes) + " B that rank " + std::to_string(first) +
            " issues at this point on " + group_text(group) + " (" + node_text(lead.node) +
            "), found a " + std::string(to_string(t.collective)) + " of " +
            std::to_string(t.bytes) + " B");
  }

  // The send a receive of simulated rank k waits for: (simulated rank, task).
  std::pair<size_t, uint32_t> matching_send(size_t k, const GraphTask& recv, size_t nth) {
    const int64_t r = classes_.representatives[k];
    const auto n = static_cast<int64_t>(program_.ranks.size());
    // The representative of the peer's class stands for the peer: its send to the rank at the
    // mirrored offset (the rank itself when every rank is simulated).
    const auto sk = static_cast<size_t>(classes_.class_of[static_cast<size_t>(recv.peer)]);
    const int64_t sender = classes_.representatives[sk];
    const int64_t to = ((sender - (recv.peer - r)) % n + n) % n;
    auto& list = sends_[{sender, to, recv.tag}];
    if (list.empty()) {
      const RankGraph& g = program_.ranks[static_cast<size_t>(sender)];
      for (uint32_t i = 0; i < g.tasks.size(); ++i)
        if (g.tasks[i].kind == GraphTaskKind::Send && g.tasks[i].peer == to &&
            g.tasks[i].tag == recv.tag)
          list.push_back(i);
      list.push_back(std::numeric_limits<uint32_t>::max());  // end marker: listed
    }
    if (nth + 1 >= list.size())
      throw InputError({rank_graph(k).source, 0},
                       node_text(recv.node) + ": expected rank " + std::to_string(recv.peer) +
                           " to send message " + std::to_string(nth + 1) + " with tag " +
                           std::to_string(recv.tag) + " to rank " + std::to_string(r) +
                           "; it sends " + std::to_string(list.size() - 1) +
                           ", so this receive would wait forever");
    return {sk, list[nth]};
  }

  void add_dependencies(size_t k) {
    const RankGraph& g = rank_graph(k);
    std::map<std::pair<int64_t, int64_t>, size_t> received;  // (peer, tag) -> count
    for (uint32_t i = 0; i < g.tasks.size(); ++i) {
      const TaskId self = out.id[k][i];
      for (uint32_t d = g.tasks[i].deps_begin; d < g.tasks[i].deps_end; ++d)
        if (out.id[k][g.deps[d]] != self) out.graph.add_dependency(out.id[k][g.deps[d]], self);
      if (g.tasks[i].kind != GraphTaskKind::Recv) continue;
      const size_t nth = received[{g.tasks[i].peer, g.tasks[i].tag}]++;
      const auto [sk, send] = matching_send(k, g.tasks[i], nth);
      out.graph.add_dependency(out.id[sk][send], self);
    }
  }

  const GraphProgram& program_;
  const RankClasses& classes_ = out.classes;
  GraphPricer& pricer_;
  std::map<std::tuple<int64_t, StreamKind, int64_t, int64_t>, StreamId> streams_;
  std::map<std::pair<int64_t, int32_t>, std::vector<uint32_t>> collectives_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<uint32_t>> sends_;
  int64_t total_ps_ = 0;
};

// The first task (in id order) that can never start: its dependencies and stream order form a
// cycle with it or lead to one. kNone when every task can run.
TaskId first_stuck(const TaskGraph& graph) {
  const size_t n = graph.task_count();
  std::vector<uint32_t> waiting(n, 0);
  std::vector<std::vector<TaskId>> next(n);
  for (const auto& [before, after] : graph.dependencies()) {
    next[before].push_back(after);
    ++waiting[after];
  }
  std::vector<TaskId> last(graph.stream_count(), kNone);
  for (TaskId t = 0; t < n; ++t) {
    const StreamId s = graph.stream_of(t);
    if (last[s] != kNone) {
      next[last[s]].push_back(t);
      ++waiting[t];
    }
    last[s] = t;
  }
  std::vector<TaskId> ready;
  for (TaskId t = 0; t < n; ++t)
    if (waiting[t] == 0) ready.push_back(t);
  size_t done = 0;
  while (!ready.empty()) {
    const TaskId t = ready.back();
    ready.pop_back();
    ++done;
    for (const TaskId s : next[t])
      if (--waiting[s] == 0) ready.push_back(s);
  }
  if (done == n) return kNone;
  for (TaskId t = 0; t < n; ++t)
    if (waiting[t] > 0) return t;
  return kNone;
}

// One simulated rank's breakdown: its compute stream's busy time and gaps, and its finish.
StageTiming account(size_t k, int64_t rank, const GraphTasks& b, const GraphProgram& program,
                    const engine::Timeline& timeline, const std::vector<TaskId>& binding) {
  StageTiming s;
  s.stage = rank;
  for (const TaskId t : b.id[k])
    if (t != kNone) s.finish = std::max(s.finish, timeline.finish[t]);
  const auto charge = [&](TaskId cause, Time gap) {
    if (gap <= Time::zero()) return;
    const GraphTaskKind kind = cause == kNone
                                   ? GraphTaskKind::Compute
                                   : program.ranks[static_cast<size_t>(b.origin[cause].rank)]
                                         .tasks[b.origin[cause].task]
                                         .kind;
    if (kind == GraphTaskKind::Collective)
      s.breakdown.exposed_comm[CommGroup::Data] += gap;
    else if (kind == GraphTaskKind::Send || kind == GraphTaskKind::Recv)
      s.breakdown.p2p += gap;
    else
      s.breakdown.bubble += gap;
  };
  Time previous;
  for (const TaskId t : b.compute[k]) {
    charge(binding[t], timeline.start[t] - previous);
    s.breakdown.compute += timeline.finish[t] - timeline.start[t];
    previous = timeline.finish[t];
  }
  // After the last compute: charged to the task that ends the rank's work.
  TaskId last = kNone;
  for (const TaskId t : b.id[k])
    if (t != kNone && (last == kNone || timeline.finish[t] > timeline.finish[last])) last = t;
  charge(last, s.finish - previous);
  return s;
}

}  // namespace

GraphPricer::GraphPricer(const GraphProgram& program, const Cluster& cluster, Algorithm algorithm)
    : program_(program), topology_(cluster.network), algorithm_(algorithm) {
  const auto ranks = static_cast<int64_t>(program.ranks.size());
  const auto capacity = topology_.capacity();
  if (capacity && *capacity < ranks)
    throw InputError("the traces hold " + std::to_string(ranks) + " ranks; cluster '" +
                     cluster.name + "' holds only " + std::to_string(*capacity) + " GPUs");
  links_.emplace(topology_, ranks);
  all_.resize(static_cast<size_t>(ranks));
  std::iota(all_.begin(), all_.end(), 0);
}

const CollectiveModel& GraphPricer::model(int32_t group) {
  auto& model = models_[group];
  if (!model)
    model = std::make_unique<CollectiveModel>(*links_,
                                              std::vector<std::vector<int64_t>>{members(group)});
  return *model;
}

Time GraphPricer::collective(int32_t group, CollectiveKind kind, Bytes bytes) {
  if (members(group).size() <= 1) return Time::zero();
  const auto key = std::make_tuple(group, kind, bytes);
  if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
  const Time t = model(group).cost(kind, bytes, algorithm_).time;
  cache_.emplace(key, t);
  return t;
}

TransferCost GraphPricer::transfer(int64_t from, int64_t to, Bytes bytes) {
  if (from == to) return {Time::zero(), 1, std::nullopt};
  std::unique_ptr<CollectiveModel>& pair = pairs_[std::minmax(from, to)];
  if (!pair)
    pair =
        std::make_unique<CollectiveModel>(*links_, std::vector<std::vector<int64_t>>{{from, to}});
  return point_to_point_cost(*pair, bytes);
}

GraphTasks build_graph_tasks(const GraphProgram& program, const RankClasses& classes,
                             GraphPricer& pricer) {
  std::optional<GraphBuilder> b;
  try {
    b.emplace(program, classes, pricer);
    b->build();
  } catch (const QuotientMismatch&) {
    b.emplace(program, every_rank(program.ranks.size()), pricer);
    b->build();
  }
  if (const TaskId stuck = first_stuck(b->out.graph); stuck != kNone) {
    const GraphOrigin o = b->out.origin[stuck];
    const RankGraph& g = program.ranks[static_cast<size_t>(o.rank)];
    throw InputError({g.source, 0}, node_text(g.tasks[o.task].node) +
                                        ": expected every task to be able to start; this one "
                                        "waits forever (a cycle of waits across ranks)");
  }
  return std::move(b->out);
}

Result graph_result(std::string mode, const Workload& workload, const Cluster& cluster,
                    const GraphTasks& tasks, const engine::Timeline& timeline) {
  const RankClasses& classes = tasks.classes;
  std::vector<TaskId> binding(tasks.graph.task_count(), kNone);
  for (const auto& [before, after] : tasks.graph.dependencies())
    if (binding[after] == kNone || timeline.finish[before] > timeline.finish[binding[after]])
      binding[after] = before;
  Result result;
  result.mode = std::move(mode);
  result.workload = workload.name;
  result.cluster = cluster.name;
  result.parallelism = workload.parallelism;
  for (size_t k = 0; k < classes.representatives.size(); ++k)
    result.stages.push_back(
        account(k, classes.representatives[k], tasks, *workload.graph, timeline, binding));
  size_t critical = 0;
  for (size_t k = 0; k < result.stages.size(); ++k)
    if (result.stages[k].finish > result.stages[critical].finish) critical = k;
  result.critical_stage = result.stages[critical].stage;
  result.iteration_time = timeline.makespan;
  result.breakdown = result.stages[critical].breakdown;
  result.simulated_tasks = static_cast<int64_t>(tasks.graph.task_count());
  return result;
}

}  // namespace orrery
