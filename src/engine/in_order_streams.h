// In-order streams gated by dependencies: which task each stream may start next. This is the
// bookkeeping shared by every simulator that runs tasks on streams (the way CUDA streams and
// events order GPU work): task_graph.cpp's fixed-duration run, and the flow modes that run the
// same tasks on the kernel (training/flow_simulator, training/graph_flow_simulator).
//
// A task may start when
//   (a) it is the next task of its stream (a stream runs its tasks one at a time, in order),
//   (b) its stream is idle (the task before it has finished), and
//   (c) none of its predecessors is unfinished (its count of them is zero).
// The owner decides what starting a task means and when it ends: it calls start() when it starts
// a stream's ready task, finish() when that task ends, and release() once for each predecessor
// that ends (which successors those are is the owner's graph). Everything is O(1); nothing here
// knows about time.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace orrery::engine {

class InOrderStreams {
 public:
  using Id = uint32_t;
  static constexpr Id kNone = std::numeric_limits<Id>::max();

  // Tasks 0 to waiting.size() - 1, task t with waiting[t] unfinished predecessors.
  explicit InOrderStreams(std::vector<uint32_t> waiting = {}) : waiting_(std::move(waiting)) {}

  // Appends the tasks `base + order[i]` as a new stream's tasks, in that order. `order` is not
  // copied: it must outlive this object (streams of identical ranks may share one list).
  Id add_stream(std::span<const uint32_t> order, uint32_t base = 0) {
    streams_.push_back({order.data(), order.data(), order.data() + order.size(), base, false});
    return static_cast<Id>(streams_.size() - 1);
  }
  // Appends `count` more tasks with `waiting` predecessors each (those of a further rank).
  void add_tasks(std::span<const uint32_t> waiting) {
    waiting_.insert(waiting_.end(), waiting.begin(), waiting.end());
  }
  void reserve_streams(size_t n) { streams_.reserve(n); }

  size_t task_count() const { return waiting_.size(); }
  size_t stream_count() const { return streams_.size(); }

  // The task stream `s` may start now, or kNone.
  Id ready(Id s) const {
    const Stream& stream = streams_[s];
    if (stream.busy || stream.next == stream.end) return kNone;
    const Id t = stream.base + *stream.next;
    return waiting_[t] == 0 ? t : kNone;
  }
  // The ready task of `s` has started: the stream is busy until finish(s).
  void start(Id s) { streams_[s].busy = true; }
  // The task running on `s` has ended: the stream moves on to its next task.
  void finish(Id s) {
    streams_[s].busy = false;
    ++streams_[s].next;
  }
  // One predecessor of `t` has ended; true when it was the last (t may now be ready).
  bool release(Id t) { return --waiting_[t] == 0; }

  // How many tasks `s` has finished: the place of its running or next task in its list.
  uint32_t position(Id s) const {
    return static_cast<uint32_t>(streams_[s].next - streams_[s].first);
  }
  // The next task of `s` whether or not it is ready (kNone when the stream has run them all):
  // after a run, a stream with a next task is stuck.
  Id next(Id s) const {
    const Stream& stream = streams_[s];
    return stream.next == stream.end ? kNone : stream.base + *stream.next;
  }

 private:
  struct Stream {
    const uint32_t* first;  // the owner's list of the stream's tasks
    const uint32_t* next;   // into that list
    const uint32_t* end;
    uint32_t base;
    bool busy;
  };
  std::vector<uint32_t> waiting_;  // by task: predecessors not yet ended
  std::vector<Stream> streams_;
};

}  // namespace orrery::engine
