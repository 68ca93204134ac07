// Flow-level network: transfers in flight share the links they cross max-min fairly.
//
// Rates are found by progressive filling: every flow of a connected component (flows and the
// links they share) grows at the same pace until a link saturates; the flows through it freeze at
// that rate and the rest keep growing. Rates are recomputed only when a flow starts or ends, and
// only for the component it belongs to, so the cost grows with the number of flows and rate
// changes, never with simulated time. Per-link statistics (bytes, busy time, peak utilisation)
// are kept as rates change.
#pragma once

#include <cstdint>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "core/time.h"
#include "network/link_graph.h"

namespace orrery {

class FlowNetwork {
 public:
  using FlowId = uint32_t;

  struct LinkStats {
    double bytes = 0;  // carried so far
    Time busy;         // time with at least one flow
    double peak = 0;   // highest rate / capacity seen
  };

  // `capacity[l]` in bytes per second.
  explicit FlowNetwork(std::vector<double> capacity);

  // Starts a transfer of `bytes` over `path` at `now` (an empty path or zero bytes completes at
  // once). The id stays valid until the flow is reported complete. `tag` (below tags()) says
  // whose traffic it is, for per-tag link statistics.
  FlowId start(std::span<const LinkId> path, double bytes, Time now, uint32_t tag = 0);

  // Keeps link statistics per tag as well (e.g. one tag per job); call before any flow starts.
  void set_tags(uint32_t tags);
  uint32_t tags() const { return tags_; }

  // Earliest completion among flows in flight (Time::max() if none), after re-solving the rates
  // of components whose flows changed.
  Time next_completion();

  // Ends every flow that completes at `now` (the value next_completion() returned) and appends
  // their ids to `done`.
  void complete(Time now, std::vector<FlowId>& done);

  // Brings the statistics up to `now`.
  void flush_stats(Time now);
  const LinkStats& stats(LinkId link) const { return stats_[link]; }
  // The statistics of the flows of one tag on `link` (busy: time with one of them on it; peak:
  // their highest combined rate / capacity). With one tag, the same as stats(link).
  const LinkStats& stats(LinkId link, uint32_t tag) const {
    return tags_ > 1 ? tag_stats_[tag][link] : stats_[link];
  }
  size_t link_count() const { return capacity_.size(); }

  // Keeps the utilisation of `links` over time from now on (for a timeline).
  void record_rates(std::span<const LinkId> links);
  // (time, rate / capacity) at each change, oldest first; empty unless recorded.
  const std::vector<std::pair<Time, double>>& rate_history(LinkId link) const {
    return history_[link];
  }

  uint64_t flows_started() const { return flows_started_; }
  uint64_t components_solved() const { return components_solved_; }

 private:
  struct Flow {
    std::vector<LinkId> path;
    std::vector<uint32_t> slot;  // position of this flow in each path link's flow list
    double remaining = 0;        // bytes
    double rate = 0;             // bytes per second
    Time updated;                // when `remaining` was last brought up to date
    Time completion;
    uint32_t version = 0;
    uint32_t tag = 0;
    bool active = false;
  };

  void solve_dirty(Time now);
  void solve_component(Time now);
  void detach(FlowId id);
  void flush_link(LinkId link, Time now);
  void note_rate(LinkId link, Time now);

  std::vector<double> capacity_;
  std::vector<std::vector<FlowId>> on_link_;
  std::vector<double> link_rate_;
  std::vector<Time> link_updated_;
  std::vector<LinkStats> stats_;
  uint32_t tags_ = 1;
  std::vector<std::vector<LinkStats>> tag_stats_;  // [tag][link], with more than one tag
  std::vector<std::vector<double>> tag_rate_;      // [tag][link]
  std::vector<std::vector<std::pair<Time, double>>> history_;  // per link
  std::vector<char> recorded_;                                 // per link: keep its history

  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<LinkId> dirty_;
  std::vector<uint32_t> link_mark_, flow_mark_;  // epoch marks for the component search
  std::vector<uint32_t> solved_round_;           // links solved in the current round
  uint32_t epoch_ = 0, round_ = 0;
  Time solved_at_;

  // Scratch for one component.
  std::vector<LinkId> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<double> residual_;
  std::vector<uint32_t> unfrozen_on_;
  std::vector<char> frozen_;

  using Entry = std::pair<Time, std::pair<FlowId, uint32_t>>;  // (completion, (flow, version))
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> completions_;

  uint64_t flows_started_ = 0;
  uint64_t components_solved_ = 0;
};

}  // namespace orrery
