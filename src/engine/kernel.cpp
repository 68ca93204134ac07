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
  timed_.push({key(when, seq_++), r});
  last_run_ = r;
  last_time_ = when;
}

// The earliest pending event, taken out of its run; a run with none left leaves the heap. A run
// that keeps growing while it fires (a chain of events at one instant) drops the events it has
// fired once they are more than half of it, so that it holds at most twice its pending ones.
Event Kernel::pop_event() {
  const uint32_t r = timed_.top().run;
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
    timed_.pop();
  }
  return event;
}

}  // namespace orrery::engine
