#include "engine/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery::engine {
namespace {

constexpr double kSameShare = 1 + 1e-9;  // shares within this factor saturate together

// Picoseconds to do `amount` at `rate`, rounded up so an activity never ends early.
Time duration(double amount, double rate) {
  if (amount <= 0) return Time::zero();
  const double ps = std::ceil(amount / rate * 1e12);
  return ps >= 9e18 ? Time::max() : Time::from_ps(static_cast<int64_t>(ps));
}

}  // namespace

FairShare::FairShare(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      on_resource_(capacity_.size()),
      rate_on_(capacity_.size(), 0.0),
      updated_on_(capacity_.size()),
      usage_(capacity_.size()),
      history_(capacity_.size()),
      recorded_(capacity_.size(), 0),
      resource_mark_(capacity_.size(), 0),
      solved_round_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfrozen_on_(capacity_.size(), 0) {}

void FairShare::set_tags(uint32_t tags) {
  tags_ = std::max<uint32_t>(1, tags);
  if (tags_ < 2) return;
  tag_usage_.assign(tags_, std::vector<Usage>(capacity_.size()));
  tag_rate_.assign(tags_, std::vector<double>(capacity_.size(), 0.0));
}

FairShare::ActivityId FairShare::start(std::span<const ResourceId> path, double amount, Time now,
                                       uint32_t tag) {
  return add(path, amount, now, tag, true);
}

FairShare::ActivityId FairShare::add(std::span<const ResourceId> path, double amount, Time now,
                                     uint32_t tag, bool mark_dirty) {
  ActivityId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<ActivityId>(activities_.size());
    activities_.emplace_back();
    activity_mark_.push_back(0);
    frozen_.push_back(0);
  }
  Activity& f = activities_[id];
  f.path.assign(path.begin(), path.end());
  f.slot.resize(path.size());
  f.remaining = amount;
  f.rate = 0;
  f.updated = now;
  f.tag = tag;
  f.batch = kNoBatch;
  f.active = true;
  ++f.version;
  ++activities_started_;
  solved_at_ = now;
  if (amount <= 0 || path.empty()) {  // nothing to share: done at once
    f.path.clear();
    f.completion = now;
    completions_.push({now, {id, f.version}});
    return id;
  }
  for (size_t k = 0; k < f.path.size(); ++k) {
    const ResourceId l = f.path[k];
    f.slot[k] = static_cast<uint32_t>(on_resource_[l].size());
    on_resource_[l].push_back(id);
    if (mark_dirty) dirty_.push_back(l);
  }
  return id;
}

void FairShare::start_batch(std::span<const ResourceId> links, std::span<const uint32_t> path_begin,
                            std::span<const double> amounts, Time now, uint32_t tag,
                            std::vector<ActivityId>& ids) {
  const size_t first = ids.size();
  const auto path = [&](size_t i) {
    return links.subspan(path_begin[i], path_begin[i + 1] - path_begin[i]);
  };
  bool alike = amounts.size() > 1 && amounts[0] > 0;
  for (size_t i = 0; i < amounts.size(); ++i)
    alike = alike && amounts[i] == amounts[0] && !path(i).empty();
  // A batch's members are solved by solve_batch, which marks the resources of those it cannot
  // solve together dirty then.
  for (size_t i = 0; i < amounts.size(); ++i)
    ids.push_back(add(path(i), amounts[i], now, tag, !alike));
  if (!alike) return;
  uint32_t b;
  if (!free_batches_.empty()) {
    b = free_batches_.back();
    free_batches_.pop_back();
  } else {
    b = static_cast<uint32_t>(batches_.size());
    batches_.emplace_back();
  }
  batches_[b].members.assign(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end());
  for (const ActivityId id : batches_[b].members)
    activities_[id].batch = b;
  pending_batches_.push_back(b);
}

void FairShare::release_batch(uint32_t b) {
  for (const ActivityId id : batches_[b].members)
    activities_[id].batch = kNoBatch;
  batches_[b].members.clear();
  ++batches_[b].version;
  free_batches_.push_back(b);
}

void FairShare::leave_batch(ActivityId id) {
  const uint32_t b = activities_[id].batch;
  auto& members = batches_[b].members;
  members.erase(std::find(members.begin(), members.end(), id));
  activities_[id].batch = kNoBatch;
  if (members.empty()) release_batch(b);
}

inline void FairShare::flush_resource(ResourceId l, Time now) {
  const Time dt = now - updated_on_[l];
  if (dt > Time::zero() && rate_on_[l] > 0) {
    usage_[l].amount += rate_on_[l] * dt.seconds();
    usage_[l].busy += dt;
    for (uint32_t t = 0; t < tag_rate_.size(); ++t)
      if (tag_rate_[t][l] > 0) {
        tag_usage_[t][l].amount += tag_rate_[t][l] * dt.seconds();
        tag_usage_[t][l].busy += dt;
      }
  }
  updated_on_[l] = now;
}

void FairShare::record_rates(std::span<const ResourceId> resources) {
  for (const ResourceId l : resources)
    recorded_[l] = 1;
}

void FairShare::note_rate(ResourceId l, Time now) {
  auto& h = history_[l];
  const double utilization = rate_on_[l] / capacity_[l];
  if (!h.empty() && h.back().second == utilization) return;
  if (!h.empty() && h.back().first == now)
    h.back().second = utilization;
  else
    h.emplace_back(now, utilization);
}

void FairShare::flush_usage(Time now) {
  for (ResourceId l = 0; l < capacity_.size(); ++l)
    flush_resource(l, now);
}

void FairShare::detach(ActivityId id) {  // in ascending id order within one complete()
  Activity& f = activities_[id];
  for (size_t k = 0; k < f.path.size(); ++k) {
    auto& list = on_resource_[f.path[k]];
    const uint32_t at = f.slot[k];
    const ActivityId moved = list.back();
    list[at] = moved;
    list.pop_back();
    if (moved != id) {
      Activity& m = activities_[moved];
      for (size_t j = 0; j < m.path.size(); ++j)
        if (m.path[j] == f.path[k] && m.slot[j] == list.size()) {
          m.slot[j] = at;
          break;
        }
    }
    dirty_.push_back(f.path[k]);
  }
  f.path.clear();
  f.active = false;
  free_.push_back(id);
}

// Stale entries: the activity ended or its rate changed since; the batch ended or broke up.
bool FairShare::valid(std::pair<uint32_t, uint32_t> key) const {
  if (key.first & kBatchKey) {
    const Batch& b = batches_[key.first & ~kBatchKey];
    return !b.members.empty() && b.version == key.second;
  }
  const Activity& f = activities_[key.first];
  return f.active && f.version == key.second;
}

Time FairShare::solve_and_peek() {
  solve_dirty(solved_at_);
  while (!completions_.empty()) {
    if (valid(completions_.top().second)) return completions_.top().first;
    completions_.pop();
  }
  return Time::max();
}

void FairShare::complete(Time now, std::vector<ActivityId>& done) {
  const size_t first = done.size();
  while (!completions_.empty() && completions_.top().first <= now) {
    const auto key = completions_.top().second;
    completions_.pop();
    if (!valid(key)) continue;
    if (key.first & kBatchKey) {
      const uint32_t b = key.first & ~kBatchKey;
      done.insert(done.end(), batches_[b].members.begin(), batches_[b].members.end());
      release_batch(b);
    } else {
      done.push_back(key.first);
    }
  }
  // Everything popped ends at `now`; one by one, the ids would have come out in ascending order.
  std::sort(done.begin() + static_cast<std::ptrdiff_t>(first), done.end());
  for (size_t i = first; i < done.size(); ++i)
    detach(done[i]);
  solved_at_ = now;
}

void FairShare::solve_dirty(Time now) {
  ++round_;
  for (const uint32_t b : pending_batches_)
    solve_batch(b, now);
  pending_batches_.clear();
  while (!dirty_.empty()) {
    const ResourceId seed = dirty_.back();
    dirty_.pop_back();
    if (solved_round_[seed] == round_) continue;  // its component is already solved
    if (on_resource_[seed].empty()) {
      solve_idle(seed, now);
      continue;
    }
    // Collect the component of `seed`: resources and activities reachable through shared resources.
    ++epoch_;
    comp_resources_.assign(1, seed);
    comp_activities_.clear();
    resource_mark_[seed] = epoch_;
    for (size_t i = 0; i < comp_resources_.size(); ++i) {
      for (const ActivityId id : on_resource_[comp_resources_[i]]) {
        if (activity_mark_[id] == epoch_) continue;
        activity_mark_[id] = epoch_;
        comp_activities_.push_back(id);
        for (const ResourceId l : activities_[id].path)
          if (resource_mark_[l] != epoch_) {
            resource_mark_[l] = epoch_;
            comp_resources_.push_back(l);
          }
      }
    }
    solve_component(now);
    for (const ResourceId l : comp_resources_)
      solved_round_[l] = round_;
  }
}

// A member's rate when it is alone on every resource of its path (-1 if it is not).
double FairShare::isolated_rate(ActivityId id) const {
  double rate = std::numeric_limits<double>::infinity();
  for (const ResourceId l : activities_[id].path) {
    if (on_resource_[l].size() != 1) return -1;
    rate = std::min(rate, capacity_[l]);
  }
  return rate;
}

// A batch's first solve: the members alone on their paths at the rate x of the first such member
// are solved together (the steps of solve_component for a component of one activity); the others
// leave the batch.
void FairShare::solve_batch(uint32_t b, Time now) {
  std::vector<ActivityId>& members = batches_[b].members;
  double rate = -1;
  size_t kept = 0;
  for (const ActivityId id : members) {
    const double x = isolated_rate(id);
    if (x < 0 || (rate >= 0 && x != rate)) {
      activities_[id].batch = kNoBatch;  // solved one by one, from its resources
      dirty_.insert(dirty_.end(), activities_[id].path.begin(), activities_[id].path.end());
    } else {
      rate = x;
      members[kept++] = id;
    }
  }
  members.resize(kept);
  if (members.empty()) {
    release_batch(b);
    return;
  }
  // Not solved before, every member still has the (equal) amount it started with.
  const Activity& first = activities_[members.front()];
  const double remaining =
      std::max(0.0, first.remaining - first.rate * (now - first.updated).seconds());
  const Time completion = now + duration(remaining, rate);
  for (const ActivityId id : members) {
    Activity& f = activities_[id];
    f.remaining = remaining;
    f.updated = now;
    f.rate = rate;
    f.completion = completion;
    ++f.version;
    for (const ResourceId l : f.path) {
      flush_resource(l, now);
      residual_[l] = capacity_[l] - rate;
      settle(l, now);
      if (!tag_rate_.empty()) {
        for (auto& rates : tag_rate_)
          rates[l] = 0;
        tag_rate_[f.tag][l] = rate;
        Usage& st = tag_usage_[f.tag][l];
        st.peak = std::max(st.peak, rate / capacity_[l]);
      }
      solved_round_[l] = round_;
    }
  }
  completions_.push({completion, {kBatchKey | b, batches_[b].version}});
}

// A resource left with no activity: a component of its own, with no rate.
void FairShare::solve_idle(ResourceId l, Time now) {
  flush_resource(l, now);
  residual_[l] = capacity_[l];
  settle(l, now);
  for (auto& rates : tag_rate_)
    rates[l] = 0;
  solved_round_[l] = round_;
}

// The rate through `l` once its residual capacity is known: usage, peak and recorded history.
inline void FairShare::settle(ResourceId l, Time now) {
  rate_on_[l] = std::max(0.0, capacity_[l] - residual_[l]);
  usage_[l].peak = std::max(usage_[l].peak, rate_on_[l] / capacity_[l]);
  if (recorded_[l]) note_rate(l, now);
}

void FairShare::solve_component(Time now) {
  for (const ResourceId l : comp_resources_) {
    flush_resource(l, now);
    residual_[l] = capacity_[l];
    unfrozen_on_[l] = static_cast<uint32_t>(on_resource_[l].size());
  }
  for (const ActivityId id : comp_activities_) {
    if (activities_[id].batch != kNoBatch) leave_batch(id);
    Activity& f = activities_[id];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated).seconds());
    f.updated = now;
    frozen_[id] = 0;
  }
  size_t unfrozen = comp_activities_.size();
  while (unfrozen > 0) {
    double share = std::numeric_limits<double>::infinity();
    for (const ResourceId l : comp_resources_)
      if (unfrozen_on_[l] > 0) share = std::min(share, residual_[l] / unfrozen_on_[l]);
    for (const ResourceId l : comp_resources_) {
      if (unfrozen_on_[l] == 0 || residual_[l] / unfrozen_on_[l] > share * kSameShare) continue;
      for (const ActivityId id : on_resource_[l]) {
        if (frozen_[id]) continue;
        frozen_[id] = 1;
        --unfrozen;
        Activity& f = activities_[id];
        f.rate = share;
        for (const ResourceId p : f.path) {
          residual_[p] -= share;
          --unfrozen_on_[p];
        }
      }
    }
  }
  for (const ActivityId id : comp_activities_) {
    Activity& f = activities_[id];
    f.completion = now + duration(f.remaining, f.rate);
    completions_.push({f.completion, {id, ++f.version}});
  }
  for (const ResourceId l : comp_resources_)
    settle(l, now);
  if (!tag_rate_.empty()) {
    for (const ResourceId l : comp_resources_)
      for (auto& rates : tag_rate_)
        rates[l] = 0;
    for (const ActivityId id : comp_activities_)
      for (const ResourceId l : activities_[id].path)
        tag_rate_[activities_[id].tag][l] += activities_[id].rate;
    for (const ResourceId l : comp_resources_)
      for (uint32_t t = 0; t < tag_rate_.size(); ++t) {
        Usage& st = tag_usage_[t][l];
        st.peak = std::max(st.peak, tag_rate_[t][l] / capacity_[l]);
      }
  }
}

}  // namespace orrery::engine
