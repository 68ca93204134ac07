// Activities that share resources max-min fairly: the part of the discrete-event kernel whose
// durations are decided while the activities run (kernel.h drives it).
//
// An activity has an amount of work (bytes, for a network flow) to do on a set of resources
// (links); a resource serves `capacity` units per second in all. Between two instants at which an
// activity starts or ends, every activity a runs at a constant rate x_a (units/s) and the rates
// satisfy, for every resource r with capacity C_r and the activities A_r that use it:
//
//   sum_{a in A_r} x_a <= C_r                                      (no resource is overfull)
//   every a has a bottleneck r in its path: sum_{b in A_r} x_b = C_r and x_a = max_{b in A_r} x_b
//
// which is the max-min fair allocation: no rate can grow without shrinking a rate no larger. It
// is found by progressive filling: every activity of a connected component (activities and the
// resources they share) grows at the same pace until a resource saturates (the smallest
// C_r' / n_r, C_r' the capacity left and n_r the activities still growing on r); the activities
// through it freeze at that rate and the rest keep growing. An activity with W units left at time
// t ends at t + ceil(W / x_a), in whole picoseconds, so it never ends early.
//
// Rates are recomputed only when an activity starts or ends, and only for the component it
// belongs to, so the cost grows with the number of activities and rate changes, never with
// simulated time. An activity re-solved to the completion it already has keeps its queued entry.
//
// A batch (start_batch) is k activities started together with equal amounts W, e.g. the flows of
// one collective step. A member alone on every resource of its path (no other activity on them)
// is a component of its own, and the equations above reduce to
//
//   x_i = min_{r in path_i} C_r        and every resource r of path_i carries x_i of C_r,
//
// so the members alone at one rate x (that of the first member alone) end together at
// t + ceil(W / x). They run as ONE activity: one completion, their paths the caller's (not copied),
// no place on their resources' lists, and each resource's usage (x over [t, end)) accounted once,
// when the batch ends. The others (sharing a resource with each other or with another activity,
// or at another rate) are started one by one, and a member leaves the batch, becoming an activity
// of its own as if it had been solved alone at t, as soon as another activity joins one of its
// resources. The arithmetic is the same as one by one, so rates, completion times, usage, rate
// history and the order in which complete() reports ids are exactly those of k start() calls;
// only the work is shared. Per-resource usage (units served, busy time, peak utilisation) is kept
// as rates change, in all and per tag (whose activity it is, e.g. one tag per job); a batch's
// resources are brought up to date when it ends, when a member leaves it, or by flush_usage().
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/time.h"
#include "engine/min_heap.h"

namespace orrery::engine {

using ResourceId = uint32_t;

class FairShare {
 public:
  using ActivityId = uint32_t;

  struct Usage {
    double amount = 0;  // units served so far
    Time busy;          // time with at least one activity on the resource
    double peak = 0;    // highest rate / capacity seen
  };

  // `capacity[r]`: units per second resource r serves in all (bytes per second for a link).
  explicit FairShare(std::vector<double> capacity);

  // Starts an activity of `amount` units on `path` (distinct resources) at `now`; an empty path
  // or no work ends at once. The id stays valid until the activity is reported complete, then may
  // be reused. `tag` (below tags()) says whose activity it is, for per-tag usage.
  ActivityId start(std::span<const ResourceId> path, double amount, Time now, uint32_t tag = 0);

  // Starts amounts.size() activities as a batch (see above): activity i has amounts[i] units on
  // links[path_begin[i], path_begin[i + 1]). The same as start() for each in order (their ids,
  // appended to `ids`, and every later result included). `links` and `path_begin` are kept, not
  // copied: they must stay valid until every activity of the batch has ended.
  void start_batch(std::span<const ResourceId> links, std::span<const uint32_t> path_begin,
                   std::span<const double> amounts, Time now, uint32_t tag,
                   std::vector<ActivityId>& ids);
  // A temporary would be gone before the batch ends.
  void start_batch(std::vector<ResourceId>&& links, auto&&... rest) = delete;
  void start_batch(std::span<const ResourceId> links, std::vector<uint32_t>&& path_begin,
                   auto&&... rest) = delete;

  // Keeps usage per tag as well (e.g. one tag per job); call before any activity starts.
  void set_tags(uint32_t tags);

  // Earliest completion among activities in flight (Time::max() if none), after re-solving the
  // rates of components whose activities changed.
  Time next_completion() {
    return dirty_.empty() && pending_batches_.empty() && completions_.empty() ? Time::max()
                                                                              : solve_and_peek();
  }

  // Ends every activity that completes at `now` (the value next_completion() returned) and
  // appends their ids to `done`, earliest completion first (ties: lower id first).
  void complete(Time now, std::vector<ActivityId>& done);

  // Brings the usage and rate history up to `now`: call it before reading them, since a batch in
  // flight accounts for its resources only when it ends.
  void flush_usage(Time now);
  const Usage& usage(ResourceId r) const { return resources_[r].usage; }
  // The usage by the activities of one tag (busy: time with one of them on r; peak: their highest
  // combined rate / capacity). With one tag, the same as usage(r).
  const Usage& usage(ResourceId r, uint32_t tag) const {
    return tags_ > 1 ? tag_usage_[tag][r] : resources_[r].usage;
  }
  size_t resource_count() const { return resources_.size(); }

  // Keeps the utilisation of `resources` over time from now on (for a timeline).
  void record_rates(std::span<const ResourceId> resources);
  // (time, rate / capacity) at each change, oldest first; empty unless recorded.
  const std::vector<std::pair<Time, double>>& rate_history(ResourceId r) const {
    return history_[r];
  }

  uint64_t activities_started() const { return activities_started_; }
  // Activities whose rates were solved so far, each counted once per solve of its component: the
  // solver's work, which grows with contention (a component of k activities re-solved k times).
  uint64_t activities_solved() const { return activities_solved_; }
  // Every id handed out so far is below this.
  size_t id_bound() const { return activities_.size(); }

 private:
  struct Activity {
    std::vector<ResourceId> path;  // empty while it runs in a batch, which keeps its path
    std::vector<uint32_t> slot;    // position of this activity in each path resource's list
    double remaining = 0;          // units
    double rate = 0;               // units per second
    Time updated;                  // when `remaining` was last brought up to date
    Time completion;
    uint32_t version = 0;
    uint32_t tag = 0;
    uint32_t batch = kNoBatch;  // the batch it runs in, if any
    uint32_t member = 0;        // its path's index in that batch
    bool active = false;
    bool queued = false;  // an entry (completion, version) of it is in completions_
  };

  // Members alone on their paths at one rate, run as one activity: one completion entry
  // (kBatchKey | batch index); nothing on the resources' lists.
  struct Batch {
    // Every member it had: those whose `batch` is still this one are in it; `left` have left.
    // With none in it, it is freed when its entry is popped.
    std::vector<ActivityId> members;
    size_t left = 0;
    std::span<const ResourceId> links;  // path i: links[begin[i], begin[i + 1]), the caller's
    std::span<const uint32_t> begin;
    double amount = 0, rate = 0;  // each member's units and rate
    Time start, end;
    uint32_t tag = 0;
    bool solved = false;  // the solve at `start` has happened (its rates count from then)
  };
  static constexpr uint32_t kNoBatch = ~uint32_t{0};
  static constexpr uint32_t kBatchKey = uint32_t{1} << 31;
  static constexpr ActivityId kNone = ~ActivityId{0};

  ActivityId new_id();
  void add_id();
  ActivityId add(std::span<const ResourceId> path, double amount, Time now, uint32_t tag);
  double alone_rate(std::span<const ResourceId> path) const;
  std::span<const ResourceId> member_path(const Batch& batch, uint32_t member) const;
  bool in_batch(ActivityId id, uint32_t b) const { return activities_[id].batch == b; }
  void leave_batch(ActivityId id);
  void end_batch(uint32_t b, Time now);
  void release_batch(uint32_t b);
  void sort_ids(std::span<ActivityId> ids);
  Time solve_and_peek();
  bool valid(std::pair<uint32_t, uint32_t> key) const;
  void solve_dirty(Time now);
  void solve_alone(ResourceId r, double rate, uint32_t tag, Time now);
  void solve_idle(ResourceId r, Time now);
  void solve_component(Time now);
  void settle(ResourceId r, Time now);
  void detach(ActivityId id);
  void unlink(ActivityId id);
  void flush_resource(ResourceId r, Time now);
  void note_rate(ResourceId r, Time now);

  // What is kept per resource, together since a batch's start and end read most of it.
  struct Resource {
    double capacity = 0;  // units per second
    double rate = 0;      // the rate through it since `updated` (as last solved)
    Time updated;         // when `usage` was last brought up to date
    Usage usage;
    ActivityId batch_member = kNone;  // the batch member on it, if any
    bool recorded = false;            // keep its rate history
  };
  std::vector<Resource> resources_;
  std::vector<std::vector<ActivityId>> on_resource_;
  uint32_t tags_ = 1;
  std::vector<std::vector<Usage>> tag_usage_;  // [tag][resource], with more than one tag
  std::vector<std::vector<double>> tag_rate_;  // [tag][resource]
  std::vector<std::vector<std::pair<Time, double>>> history_;  // per resource

  std::vector<Activity> activities_;
  std::vector<ActivityId> free_;
  std::vector<Batch> batches_;
  std::vector<uint32_t> free_batches_, pending_batches_;  // pending: not solved yet
  std::vector<ResourceId> dirty_;
  std::vector<uint32_t> resource_mark_, activity_mark_;  // epoch marks for the component search
  std::vector<uint32_t> shared_mark_;   // epoch mark: on more than one path of a starting batch
  std::vector<uint32_t> solved_round_;  // resources solved in the current round
  uint32_t epoch_ = 0, round_ = 0;
  Time solved_at_;

  // Scratch for one component.
  std::vector<ResourceId> comp_resources_;
  std::vector<ResourceId> growing_, saturating_;  // solve_component's rounds
  std::vector<ActivityId> comp_activities_;
  std::vector<double> residual_;
  std::vector<uint32_t> unfrozen_on_;
  std::vector<char> frozen_;
  std::vector<uint64_t> id_bits_;  // sort_ids' bitmap

  // (completion, (activity, version)) or (completion, (kBatchKey | batch, 0)): one per batch
  using Entry = std::pair<Time, std::pair<uint32_t, uint32_t>>;
  MinHeap<Entry> completions_;  // unique: a stale entry differs in its version

  uint64_t activities_started_ = 0;
  uint64_t activities_solved_ = 0;
};

}  // namespace orrery::engine
