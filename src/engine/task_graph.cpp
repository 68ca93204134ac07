#include "engine/task_graph.h"

#include <span>
#include <stdexcept>
#include <string>

#include "engine/in_order_streams.h"
#include "engine/min_heap.h"

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

GraphStreams::GraphStreams(const TaskGraph& g)
    : successors_(g.task_count(), g.dependencies()), streams_(successors_.predecessor_counts()) {
  // Each stream's tasks in order, by a counting sort on the stream.
  std::vector<size_t> stream_begin(g.stream_count() + 1, 0);
  for (TaskId t = 0; t < g.task_count(); ++t)
    ++stream_begin[g.stream_of(t) + 1];
  for (size_t s = 0; s < g.stream_count(); ++s)
    stream_begin[s + 1] += stream_begin[s];
  stream_tasks_.resize(g.task_count());
  std::vector<size_t> at(stream_begin.begin(), stream_begin.end() - 1);
  for (TaskId t = 0; t < g.task_count(); ++t)
    stream_tasks_[at[g.stream_of(t)]++] = t;
  streams_.reserve_streams(g.stream_count());
  for (size_t s = 0; s < g.stream_count(); ++s)
    streams_.add_stream(
        std::span(stream_tasks_).subspan(stream_begin[s], stream_begin[s + 1] - stream_begin[s]));
}

TaskId GraphStreams::stuck() const {
  for (StreamId s = 0; s < streams_.stream_count(); ++s)
    if (const TaskId t = streams_.next(s); t != InOrderStreams::kNone) return t;
  return InOrderStreams::kNone;
}

struct Simulation {
  explicit Simulation(const TaskGraph& g) : graph(g), run_state(g), streams(run_state.streams()) {
    timeline.start.assign(g.task_count(), Time::zero());
    timeline.finish.assign(g.task_count(), Time::zero());
  }

  void try_start(StreamId s, Time now) {
    const TaskId t = streams.ready(s);
    if (t == InOrderStreams::kNone) return;
    streams.start(s);
    timeline.start[t] = now;
    events.push({now + graph.duration_[t], t});
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
      for (const TaskId next : run_state.successors().of(t))
        if (streams.release(next)) try_start(graph.stream_[next], now);
      try_start(s, now);
    }
    if (finished != graph.task_count()) {
      const TaskId stuck = run_state.stuck();
      throw std::logic_error("task graph deadlock: task " + std::to_string(stuck) + " on stream " +
                             std::to_string(graph.stream_[stuck]) + " can never start");
    }
    return std::move(timeline);
  }

  const TaskGraph& graph;
  GraphStreams run_state;
  InOrderStreams& streams;
  Timeline timeline;
  MinHeap<std::pair<Time, TaskId>> events;  // (finish, task): unique
};

Timeline simulate(const TaskGraph& graph) {
  return Simulation(graph).run();
}

}  // namespace orrery::engine
