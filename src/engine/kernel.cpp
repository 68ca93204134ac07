#include "engine/kernel.h"

#include <algorithm>
#include <stdexcept>

namespace orrery::engine {

Kernel::Kernel(std::vector<double> capacity) : sharing_(std::move(capacity)) {}

void Kernel::refuse_past() {
  throw std::logic_error("Kernel::at: an event in the past");
}

// A new run of one event at `when`, the latest scheduled.
void Kernel::push_run(Time when, Event event) {
  uint32_t r;
  if (!free_runs_.empty()) {
    r = free_runs_.back();
    free_runs_.pop_back();
  } else {
    r = static_cast<uint32_t>(runs_.size());
    runs_.emplace_back();
  }
  runs_[r].events.push_back(event);
  push_timed({key(when, seq_++), r});
  last_run_ = r;
  last_time_ = when;
}

// The earliest pending event, taken out of its run; a run with none left leaves the heap. A run
// that keeps growing while it fires (a chain of events at one instant) drops the events it has
// fired once they are more than half of it, so that it holds at most twice its pending ones.
Event Kernel::pop_event() {
  const uint32_t r = timed_.front().run;
  Run& run = runs_[r];
  const Event event = run.events[run.next++];
  if (run.next >= 64 && 2 * run.next > run.events.size() && run.next < run.events.size()) {
    run.events.erase(run.events.begin(), run.events.begin() + run.next);
    run.next = 0;
  } else if (run.next == run.events.size()) {
    run.events.clear();
    run.next = 0;
    free_runs_.push_back(r);
    if (last_run_ == r) last_run_ = kNoRun;
    pop_timed();
  }
  return event;
}

void Kernel::push_timed(Timed t) {
  size_t at = timed_.size();
  timed_.push_back(t);
  while (at > 0) {
    const size_t parent = (at - 1) / 4;
    if (!(t < timed_[parent])) break;
    timed_[at] = timed_[parent];
    at = parent;
  }
  timed_[at] = t;
}

void Kernel::pop_timed() {
  const Timed last = timed_.back();
  timed_.pop_back();
  const size_t n = timed_.size();
  if (n == 0) return;
  size_t at = 0;
  while (true) {
    const size_t first = 4 * at + 1;
    if (first >= n) break;
    size_t least = first;
    if (first + 4 <= n) {  // four children: the least of two pairs' least
      const size_t a = timed_[first + 1] < timed_[first] ? first + 1 : first;
      const size_t b = timed_[first + 3] < timed_[first + 2] ? first + 3 : first + 2;
      least = timed_[b] < timed_[a] ? b : a;
    } else {
      for (size_t c = first + 1; c < n; ++c)
        if (timed_[c] < timed_[least]) least = c;
    }
    if (!(timed_[least] < last)) break;
    timed_[at] = timed_[least];
    at = least;
  }
  timed_[at] = last;
}

}  // namespace orrery::engine
