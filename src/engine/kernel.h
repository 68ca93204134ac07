// The discrete-event kernel: one clock (Time, integer picoseconds), timed events, and activities
// whose duration is decided while they run because they share resources (fair_share.h).
//
// Two things happen at an instant:
//   - a timed event fires: its time was known when it was scheduled (a task of known duration
//     ends, a latency elapses);
//   - an activity ends: its time follows from its rate, which changes whenever another activity
//     on a resource it shares starts or ends (a flow on a link, at the max-min fair share).
// run() moves the clock to the earliest of the two and hands the Event attached to it to the
// owner's handler, which may schedule events and start activities at that instant or later. At
// equal times activities end first, all those ending at that instant together (earliest
// completion first, ties by activity id), then timed events in the order they were scheduled, so
// a run is deterministic. The cost is O(events log events) plus the sharing's (fair_share.h),
// never growing with the simulated durations. The kernel knows nothing about training.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/time.h"
#include "engine/fair_share.h"
#include "engine/min_heap.h"

namespace orrery::engine {

// What happened, in the owner's terms: the kernel only hands it back.
struct Event {
  uint32_t kind = 0;
  uint32_t a = 0, b = 0;
};

class Kernel {
 public:
  // `capacity[r]`: units per second resource r serves (none: timed events only).
  explicit Kernel(std::vector<double> capacity = {});

  Time now() const { return now_; }

  // Fires `event` at `when` (not before now()).
  void at(Time when, Event event) {
    if (when < now_) refuse_past();
    if (last_run_ != kNoRun && when == last_time_)
      runs_[last_run_].events.push_back(event);
    else
      push_run(when, event);
  }
  void after(Time delay, Event event) { at(now_ + delay, event); }

  // Starts an activity of `amount` units on the resources of `path` now; `done` fires when the
  // last unit is served (at once for no work or an empty path). `tag`: see FairShare::start.
  void start(std::span<const ResourceId> path, double amount, Event done, uint32_t tag = 0) {
    const FairShare::ActivityId id = sharing_.start(path, amount, now_, tag);
    sharing_changed_ = true;
    if (on_done_.size() <= id) on_done_.resize(id + 1);
    on_done_[id] = done;
  }

  // Starts amounts.size() activities now as one batch (FairShare::start_batch), each firing `done`
  // when it ends: the same as start() for each in order. `links` and `path_begin` must stay valid
  // until the last of them has ended.
  // A temporary would be gone before the batch ends.
  void start_batch(std::vector<ResourceId>&& links, auto&&... rest) = delete;
  void start_batch(std::span<const ResourceId> links, std::vector<uint32_t>&& path_begin,
                   auto&&... rest) = delete;
  void start_batch(std::span<const ResourceId> links, std::span<const uint32_t> path_begin,
                   std::span<const double> amounts, Event done, uint32_t tag = 0) {
    started_.clear();
    sharing_.start_batch(links, path_begin, amounts, now_, tag, started_);
    sharing_changed_ = true;
    if (on_done_.size() < sharing_.id_bound()) on_done_.resize(sharing_.id_bound());
    for (const FairShare::ActivityId id : started_)
      on_done_[id] = done;
  }

  // Runs until no event is pending and no activity is in flight, calling handle(Event) for each.
  template <class Handler>
  void run(Handler&& handle);

  FairShare& sharing() { return sharing_; }
  const FairShare& sharing() const { return sharing_; }

 private:
  // A timed event's place in the order: its time (never negative) in the high 64 bits, its order
  // of scheduling (for ties) in the low 64, so one unsigned comparison, without branches, orders
  // by (time, seq).
  __extension__ typedef unsigned __int128 Key;
  static Key key(Time time, uint64_t seq) {
    return (Key{static_cast<uint64_t>(time.ps())} << 64) | seq;
  }
  static Time time_of(Key key) { return Time::from_ps(static_cast<int64_t>(key >> 64)); }

  // Events scheduled one after another for one time: they fire in that order, one after another,
  // since none was scheduled between them. One heap entry stands for the run, keyed by its first.
  struct Run {
    std::vector<Event> events;
    size_t next = 0;  // the next to fire
  };
  struct Timed {
    Key key;
    uint32_t run;
    bool operator<(const Timed& o) const { return key < o.key; }
  };
  static constexpr uint32_t kNoRun = ~uint32_t{0};

  [[noreturn]] static void refuse_past();
  void push_run(Time when, Event event);
  Event pop_event();

  FairShare sharing_;
  std::vector<Event> on_done_;  // by activity id
  std::vector<FairShare::ActivityId> done_, started_;
  // The sharing's next completion is asked again only after an activity started or ended: until
  // then it is the same.
  bool sharing_changed_ = true;
  Time next_completion_;
  MinHeap<Timed> timed_;  // keys are unique
  std::vector<Run> runs_;
  std::vector<uint32_t> free_runs_;
  uint32_t last_run_ = kNoRun;  // the run the latest event went to, while it is pending
  Time last_time_;              // its time
  uint64_t seq_ = 0;
  Time now_;
};

template <class Handler>
void Kernel::run(Handler&& handle) {
  sharing_changed_ = true;
  while (true) {
    if (sharing_changed_) {
      next_completion_ = sharing_.next_completion();
      sharing_changed_ = false;
    }
    const Time activity = next_completion_;
    const Time timed = timed_.empty() ? Time::max() : time_of(timed_.top().key);
    if (activity == Time::max() && timed == Time::max()) return;
    if (activity <= timed) {
      now_ = activity;
      done_.clear();
      sharing_.complete(now_, done_);
      sharing_changed_ = true;
      for (const FairShare::ActivityId id : done_)
        handle(Event(on_done_[id]));  // a copy: the handler may start activities
    } else {
      now_ = timed;
      handle(pop_event());
    }
  }
}

}  // namespace orrery::engine
