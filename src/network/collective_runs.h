// Collectives in flight as flows on the engine's kernel (engine/kernel.h): the one place a
// collective's routed steps (collective_flows.h, route_steps) are run. A collective runs its steps
// in order; each run of a step starts all the step's transfers at once as flows sharing links
// max-min fairly and, once the last of them ends, waits the step's latency; a step repeated r
// times does so r times. After its last step the collective has ended. Used by both flow modes
// (training/flow_simulator, training/graph_flow_simulator) and by a collective run alone
// (run_collective_flows).
//
// The owner hands this object the kernel's events of two kinds it reserves for it and is told
// when each collective ends, with the `Payload` it launched it with (what the owner needs then:
// the members' tasks, say). Units: bytes as doubles, latencies as Time (picoseconds).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "engine/kernel.h"
#include "network/collective_flows.h"

namespace orrery {

// How many flows a collective running `steps` starts in all.
inline uint64_t flow_count(std::span<const RoutedStep> steps) {
  uint64_t n = 0;
  for (const RoutedStep& s : steps)
    n += s.bytes.size() * static_cast<uint64_t>(s.repeat);
  return n;
}

template <class Payload>
class CollectiveRuns {
 public:
  // Events of kind `flow_kind` (one flow of a step ended) and `flow_kind + 1` (a run of a step and
  // its latency are over) are this object's. `ended(payload)` is called at the instant a
  // collective ends; it may launch further collectives. Once the kernel's solver has re-solved
  // more than `max_resolved` activities (collective_flows.h), the next step to start throws
  // InputError instead.
  CollectiveRuns(engine::Kernel& kernel, uint32_t flow_kind, std::function<void(Payload)> ended,
                 uint64_t max_resolved = kMaxResolvedActivities)
      : kernel_(kernel),
        flow_kind_(flow_kind),
        ended_(std::move(ended)),
        max_resolved_(max_resolved) {}

  // Starts a collective now that runs `steps` (which must outlive it), its flows under `tag`
  // (engine::FairShare::start).
  void launch(const std::vector<RoutedStep>& steps, Payload payload, uint32_t tag = 0) {
    Run run{std::move(payload), &steps, 0, 0, 0, tag};
    uint32_t id = 0;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
      runs_[id] = std::move(run);
    } else {
      id = static_cast<uint32_t>(runs_.size());
      runs_.push_back(std::move(run));
    }
    begin_step(id);
  }

  // Advances the collective an event of this object's kinds belongs to.
  void handle(const engine::Event& e) {
    Run& run = runs_[e.a];
    if (e.kind == flow_kind_) {
      if (--run.outstanding == 0) kernel_.after(step(run).latency, step_over(e.a));
      return;
    }
    if (++run.repeat >= step(run).repeat) {
      run.repeat = 0;
      ++run.step;
    }
    begin_step(e.a);
  }

 private:
  struct Run {
    Payload payload;
    const std::vector<RoutedStep>* steps;
    size_t step;
    int64_t repeat;      // runs of the step done
    size_t outstanding;  // flows of the step's run not yet ended
    uint32_t tag;
  };

  static const RoutedStep& step(const Run& run) { return (*run.steps)[run.step]; }
  engine::Event step_over(uint32_t id) const { return {flow_kind_ + 1, id, 0}; }

  void begin_step(uint32_t id) {
    Run& run = runs_[id];
    if (run.step >= run.steps->size()) {
      // ended() may launch collectives that grow runs_ and reuse this id: take the payload out
      // and free the id first, and never touch `run` after.
      Payload payload = std::move(run.payload);
      free_.push_back(id);
      ended_(std::move(payload));
      return;
    }
    if (const uint64_t resolved = kernel_.sharing().activities_solved(); resolved > max_resolved_)
      throw_flows_contend(resolved);
    const RoutedStep& s = step(run);
    run.outstanding = s.bytes.size();
    kernel_.start_batch(s.links, s.path_begin, s.bytes, {flow_kind_, id, 0}, run.tag);
    if (run.outstanding == 0) kernel_.after(s.latency, step_over(id));
  }

  engine::Kernel& kernel_;
  uint32_t flow_kind_;
  std::function<void(Payload)> ended_;
  uint64_t max_resolved_;
  std::vector<Run> runs_;
  std::vector<uint32_t> free_;  // ids of ended runs, to reuse
};

}  // namespace orrery
