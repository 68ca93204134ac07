#include "engine/task_graph.h"

#include <functional>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>

#include "engine/in_order_streams.h"

namespace orrery::engine {

StreamId TaskGraph::add_stream() {
  return streams_++;
}

void TaskGraph::reserve(size_t tasks, size_t dependencies) {
  stream_.reserve(tasks);
  duration_.reserve(tasks);
  edges_.reserve(dependencies);
}

TaskId TaskGraph::add_task(StreamId stream, Time duration) {
  if (stream >= streams_) throw std::logic_error("add_task: unknown stream");
  if (duration < Time::zero()) throw std::logic_error("add_task: negative duration");
  stream_.push_back(stream);
  duration_.push_back(duration);
  return static_cast<TaskId>(duration_.size() - 1);
}

void TaskGraph::add_dependency(TaskId before, TaskId after) {
  if (before >= task_count() || after >= task_count())
    throw std::logic_error("add_dependency: unknown task");
  edges_.emplace_back(before, after);
}

struct Simulation {
  explicit Simulation(const TaskGraph& g) : graph(g) {
    const size_t n = g.task_count();
    // Successor lists in compressed form.
    successor_begin.assign(n + 1, 0);
    for (const auto& [before, after] : g.edges_)
      ++successor_begin[before + 1];
    for (size_t i = 0; i < n; ++i)
      successor_begin[i + 1] += successor_begin[i];
    successors.resize(g.edges_.size());
    std::vector<size_t> fill(successor_begin.begin(), successor_begin.end() - 1);
    std::vector<uint32_t> waiting_on(n, 0);
    for (const auto& [before, after] : g.edges_) {
      successors[fill[before]++] = after;
      ++waiting_on[after];
    }
    // Tasks of each stream in order.
    std::vector<size_t> stream_begin(g.streams_ + 1, 0);
    for (const StreamId s : g.stream_)
      ++stream_begin[s + 1];
    for (size_t s = 0; s < g.streams_; ++s)
      stream_begin[s + 1] += stream_begin[s];
    stream_tasks.resize(n);
    std::vector<size_t> at(stream_begin.begin(), stream_begin.end() - 1);
    for (TaskId t = 0; t < n; ++t)
      stream_tasks[at[g.stream_[t]]++] = t;
    streams = InOrderStreams(std::move(waiting_on));
    streams.reserve_streams(g.streams_);
    for (size_t s = 0; s < g.streams_; ++s)
      streams.add_stream(
          std::span(stream_tasks).subspan(stream_begin[s], stream_begin[s + 1] - stream_begin[s]));
    timeline.start.assign(n, Time::zero());
    timeline.finish.assign(n, Time::zero());
  }

  void try_start(StreamId s, Time now) {
    const TaskId t = streams.ready(s);
    if (t == InOrderStreams::kNone) return;
    streams.start(s);
    timeline.start[t] = now;
    events.emplace(now + graph.duration_[t], t);
  }

  Timeline run() {
    for (StreamId s = 0; s < graph.streams_; ++s)
      try_start(s, Time::zero());
    size_t finished = 0;
    while (!events.empty()) {
      const auto [now, t] = events.top();
      events.pop();
      timeline.finish[t] = now;
      timeline.makespan = std::max(timeline.makespan, now);
      ++finished;
      const StreamId s = graph.stream_[t];
      streams.finish(s);
      for (size_t k = successor_begin[t]; k < successor_begin[t + 1]; ++k) {
        const TaskId next = successors[k];
        if (streams.release(next)) try_start(graph.stream_[next], now);
      }
      try_start(s, now);
    }
    if (finished != graph.task_count()) {
      for (StreamId s = 0; s < graph.streams_; ++s)
        if (streams.next(s) != InOrderStreams::kNone)
          throw std::logic_error("task graph deadlock: task " + std::to_string(streams.next(s)) +
                                 " on stream " + std::to_string(s) + " can never start");
    }
    return std::move(timeline);
  }

  const TaskGraph& graph;
  std::vector<size_t> successor_begin;
  std::vector<TaskId> successors;
  std::vector<TaskId> stream_tasks;  // each stream's tasks in order, one stream after another
  InOrderStreams streams;
  Timeline timeline;
  std::priority_queue<std::pair<Time, TaskId>, std::vector<std::pair<Time, TaskId>>, std::greater<>>
      events;
};

Timeline simulate(const TaskGraph& graph) {
  return Simulation(graph).run();
}

}  // namespace orrery::engine
