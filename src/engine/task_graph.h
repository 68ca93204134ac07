// The engine's fixed-duration path: tasks of known duration on in-order streams, with
// dependencies between tasks (the way CUDA streams and events order GPU work).
//
// A task starts at the earliest instant when (a) the task before it on its stream has finished
// and (b) every task it depends on has finished:
//   start(t) = max(finish(previous on t's stream), max over dependencies d of finish(d))
//   finish(t) = start(t) + duration(t)          (durations in integer picoseconds)
// simulate() advances a clock from one task completion to the next through a queue of
// (finish, task) pairs; the work done is O((tasks + dependencies) log tasks), independent of the
// simulated durations. Each start is a maximum of finishes, so the order in which ends at the same
// instant are handled (here by task id) does not change the timeline. Every duration is known
// when its task starts, so this is the kernel (kernel.h) without activities; it keeps its own
// 16-byte queue entries because running it on Kernel measured 1.5 to 2.5 times slower
// (BM_EngineChainedStreams), and the event mode is the default. The engine knows nothing about
// training.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/time.h"
#include "engine/in_order_streams.h"
#include "engine/successors.h"

namespace orrery::engine {

using TaskId = uint32_t;
using StreamId = uint32_t;

class TaskGraph {
 public:
  StreamId add_stream();
  // Appends a task to `stream`; tasks on a stream run in the order they were added.
  TaskId add_task(StreamId stream, Time duration);
  // `after` may not start before `before` has finished.
  void add_dependency(TaskId before, TaskId after);
  // Room for this many tasks and dependencies in all (an optimisation only).
  void reserve(size_t tasks, size_t dependencies);

  size_t task_count() const { return duration_.size(); }
  size_t stream_count() const { return streams_; }
  size_t dependency_count() const { return edges_.size(); }
  StreamId stream_of(TaskId task) const { return stream_[task]; }
  Time duration_of(TaskId task) const { return duration_[task]; }
  // Every dependency as (before, after), in the order added.
  const std::vector<std::pair<TaskId, TaskId>>& dependencies() const { return edges_; }

 private:
  friend struct Simulation;
  std::vector<StreamId> stream_;
  std::vector<Time> duration_;
  std::vector<std::pair<TaskId, TaskId>> edges_;  // (before, after)
  StreamId streams_ = 0;
};

// One run's bookkeeping for a graph: who waits for each task (successors.h), and the graph's
// streams as in-order streams (in_order_streams.h) with every task waiting for all its
// predecessors. Built once per run by simulate() and by the flow mode of task graphs
// (training/graph_flow_simulator), which time the same tasks in their own ways.
class GraphStreams {
 public:
  explicit GraphStreams(const TaskGraph& graph);
  GraphStreams(const GraphStreams&) = delete;  // the streams point into stream_tasks_
  GraphStreams& operator=(const GraphStreams&) = delete;

  const Successors& successors() const { return successors_; }
  InOrderStreams& streams() { return streams_; }
  // After a run: the next task of the first stream that has one left (it can never start), or
  // InOrderStreams::kNone when every task ran.
  TaskId stuck() const;

 private:
  Successors successors_;
  std::vector<TaskId> stream_tasks_;  // each stream's tasks in order, one stream after another
  InOrderStreams streams_;
};

struct Timeline {
  std::vector<Time> start;   // per task
  std::vector<Time> finish;  // per task
  Time makespan;             // latest finish
};

// Runs the graph. Throws std::logic_error naming a stuck task if some tasks can never start
// (their dependencies form a cycle with stream order).
Timeline simulate(const TaskGraph& graph);

}  // namespace orrery::engine
