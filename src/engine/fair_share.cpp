#include "engine/fair_share.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
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
    : resources_(capacity.size()),
      on_resource_(capacity.size()),
      history_(capacity.size()),
      resource_mark_(capacity.size(), 0),
      solved_round_(capacity.size(), 0),
      residual_(capacity.size(), 0.0),
      unfrozen_on_(capacity.size(), 0) {
  for (size_t r = 0; r < capacity.size(); ++r)
    resources_[r].capacity = capacity[r];
}

void FairShare::set_tags(uint32_t tags) {
  tags_ = std::max<uint32_t>(1, tags);
  if (tags_ < 2) return;
  tag_usage_.assign(tags_, std::vector<Usage>(resources_.size()));
  tag_rate_.assign(tags_, std::vector<double>(resources_.size(), 0.0));
}

FairShare::ActivityId FairShare::start(std::span<const ResourceId> path, double amount, Time now,
                                       uint32_t tag) {
  return add(path, amount, now, tag);
}

// A fresh id (the most recently freed first), in flight, in no batch.
inline FairShare::ActivityId FairShare::new_id() {
  if (free_.empty()) add_id();
  const ActivityId id = free_.back();
  free_.pop_back();
  Activity& f = activities_[id];
  f.batch = kNoBatch;
  f.active = true;
  f.queued = false;
  ++f.version;
  ++activities_started_;
  return id;
}

// One more activity slot, its id free.
void FairShare::add_id() {
  free_.push_back(static_cast<ActivityId>(activities_.size()));
  activities_.emplace_back();
  activity_mark_.push_back(0);
  frozen_.push_back(0);
}

// An activity of its own, placed on its path's resources, which are marked for re-solving; a
// batch member already on one of them leaves its batch first.
FairShare::ActivityId FairShare::add(std::span<const ResourceId> path, double amount, Time now,
                                     uint32_t tag) {
  const ActivityId id = new_id();
  Activity& f = activities_[id];
  f.remaining = amount;
  f.rate = 0;
  f.updated = now;
  f.tag = tag;
  solved_at_ = now;
  if (amount <= 0 || path.empty()) {  // nothing to share: done at once
    f.completion = now;
    f.queued = true;
    completions_.push({now, {id, f.version}});
    return id;
  }
  f.path.assign(path.begin(), path.end());
  f.slot.resize(path.size());
  for (size_t k = 0; k < f.path.size(); ++k) {
    const ResourceId l = f.path[k];
    if (resources_[l].batch_member != kNone) leave_batch(resources_[l].batch_member);
    f.slot[k] = static_cast<uint32_t>(on_resource_[l].size());
    on_resource_[l].push_back(id);
    dirty_.push_back(l);
  }
  return id;
}

void FairShare::start_batch(std::span<const ResourceId> links, std::span<const uint32_t> path_begin,
                            std::span<const double> amounts, Time now, uint32_t tag,
                            std::vector<ActivityId>& ids) {
  const auto path = [&](size_t i) {
    return links.subspan(path_begin[i], path_begin[i + 1] - path_begin[i]);
  };
  const size_t n = amounts.size();
  if (n < 2 || !(amounts[0] > 0)) {
    for (size_t i = 0; i < n; ++i)
      ids.push_back(add(path(i), amounts[i], now, tag));
    return;
  }
  uint32_t b;
  if (!free_batches_.empty()) {
    b = free_batches_.back();
    free_batches_.pop_back();
  } else {
    b = static_cast<uint32_t>(batches_.size());
    batches_.emplace_back();
  }
  Batch& batch = batches_[b];
  batch.members.clear();
  batch.left = 0;
  batch.links = links;
  batch.begin = path_begin;
  batch.amount = amounts[0];
  batch.start = now;
  batch.tag = tag;
  batch.solved = false;
  solved_at_ = now;
  // The members' rate, once the first has joined (kept here, and stored once all have: a member
  // leaving meanwhile reads only the other fields, the batch not being solved).
  double rate = -1;
  for (size_t i = 0; i < n; ++i) {
    const auto p = path(i);
    const double x = amounts[i] == batch.amount ? alone_rate(p) : -1;
    if (x < 0 || (rate >= 0 && x != rate)) {
      ids.push_back(add(p, amounts[i], now, tag));
      continue;
    }
    const ActivityId id = new_id();
    activities_[id].batch = b;
    activities_[id].member = static_cast<uint32_t>(i);
    for (const ResourceId l : p)
      resources_[l].batch_member = id;
    batch.members.push_back(id);
    ids.push_back(id);
    if (rate < 0) {  // what solve_component gives an activity alone, W units at rate x
      rate = x;
      batch.end = now + duration(batch.amount, x);
      completions_.push({batch.end, {kBatchKey | b, 0}});
      pending_batches_.push_back(b);
    }
  }
  batch.rate = rate;
  if (batch.rate < 0) release_batch(b);  // no member alone: no entry was pushed
}

// The rate of an activity on `path` if no other is on any of its resources (-1 otherwise, or if
// the path is empty).
double FairShare::alone_rate(std::span<const ResourceId> path) const {
  if (path.empty()) return -1;
  double rate = std::numeric_limits<double>::infinity();
  for (const ResourceId l : path) {
    const Resource& res = resources_[l];
    if (res.batch_member != kNone || !on_resource_[l].empty()) return -1;
    rate = std::min(rate, res.capacity);
  }
  return rate;
}

std::span<const ResourceId> FairShare::member_path(const Batch& batch, uint32_t member) const {
  return batch.links.subspan(batch.begin[member], batch.begin[member + 1] - batch.begin[member]);
}

// A member becomes an activity of its own, in the state one by one would have left it: not yet
// solved (its resources marked for solving), or solved alone at the batch's start.
void FairShare::leave_batch(ActivityId id) {
  Activity& f = activities_[id];
  Batch& batch = batches_[f.batch];
  ++batch.left;  // it stays listed, no longer in_batch
  const auto path = member_path(batch, f.member);
  f.batch = kNoBatch;
  f.remaining = batch.amount;
  f.updated = batch.start;
  f.tag = batch.tag;
  f.path.assign(path.begin(), path.end());
  f.slot.resize(path.size());
  for (size_t k = 0; k < path.size(); ++k) {
    const ResourceId l = path[k];
    resources_[l].batch_member = kNone;
    f.slot[k] = static_cast<uint32_t>(on_resource_[l].size());
    on_resource_[l].push_back(id);
  }
  if (!batch.solved) {
    f.rate = 0;
    dirty_.insert(dirty_.end(), path.begin(), path.end());
    return;
  }
  for (const ResourceId l : path)
    solve_alone(l, batch.rate, f.tag, batch.start);
  f.rate = batch.rate;
  f.completion = batch.end;
  f.queued = true;
  completions_.push({f.completion, {id, ++f.version}});
}

// The batch's members end now: each resource carried the rate from the start and is left idle
// (solve_alone at the start, then solve_idle now).
void FairShare::end_batch(uint32_t b, Time now) {
  const Batch& batch = batches_[b];
  const double x = batch.rate;
  const Time carried = now - batch.start;
  const double seconds = carried.seconds();
  const bool one_tag = tag_rate_.empty();
  const bool some_time = carried > Time::zero();
  const auto carry = [&](ResourceId l) {
    Resource& res = resources_[l];
    res.batch_member = kNone;
    if (one_tag && !res.recorded && res.rate == 0) {
      // Idle before, with nothing but the total to keep: the same steps, in one pass.
      const double rate = std::max(0.0, res.capacity - (res.capacity - x));
      res.usage.peak = std::max(res.usage.peak, rate / res.capacity);
      if (some_time && rate > 0) {
        res.usage.amount += rate * seconds;
        res.usage.busy += carried;
      }
      res.updated = now;
      return;
    }
    solve_alone(l, x, batch.tag, batch.start);
    // A recorded resource goes idle through solve_dirty, as it would one by one, so that a flow
    // starting on it now leaves the same history.
    if (res.recorded)
      dirty_.push_back(l);
    else
      solve_idle(l, now);
  };
  if (batch.left == 0 && batch.members.size() + 1 == batch.begin.size()) {  // every path's
    for (uint32_t k = batch.begin.front(); k < batch.begin.back(); ++k)
      carry(batch.links[k]);
    return;
  }
  for (const ActivityId id : batch.members)
    if (in_batch(id, b))
      for (const ResourceId l : member_path(batch, activities_[id].member))
        carry(l);
}

void FairShare::release_batch(uint32_t b) {
  batches_[b].members.clear();
  free_batches_.push_back(b);
}

inline void FairShare::flush_resource(ResourceId l, Time now) {
  Resource& res = resources_[l];
  const Time dt = now - res.updated;
  if (dt > Time::zero() && res.rate > 0) {
    res.usage.amount += res.rate * dt.seconds();
    res.usage.busy += dt;
    for (uint32_t t = 0; t < tag_rate_.size(); ++t)
      if (tag_rate_[t][l] > 0) {
        tag_usage_[t][l].amount += tag_rate_[t][l] * dt.seconds();
        tag_usage_[t][l].busy += dt;
      }
  }
  res.updated = now;
}

void FairShare::record_rates(std::span<const ResourceId> resources) {
  for (const ResourceId l : resources)
    resources_[l].recorded = true;
}

void FairShare::note_rate(ResourceId l, Time now) {
  auto& h = history_[l];
  const double utilization = resources_[l].rate / resources_[l].capacity;
  if (!h.empty() && h.back().second == utilization) return;
  if (!h.empty() && h.back().first == now)
    h.back().second = utilization;
  else
    h.emplace_back(now, utilization);
}

void FairShare::flush_usage(Time now) {
  for (uint32_t b = 0; b < batches_.size(); ++b)
    if (batches_[b].solved)
      for (const ActivityId id : batches_[b].members)
        if (in_batch(id, b)) leave_batch(id);
  for (ResourceId l = 0; l < resources_.size(); ++l)
    flush_resource(l, now);
}

// Ends an activity (in ascending id order within one complete()): off its resources, its id free.
inline void FairShare::detach(ActivityId id) {
  Activity& f = activities_[id];
  if (!f.path.empty()) unlink(id);  // a batch member's resources were let go by end_batch
  f.active = false;
  free_.push_back(id);
}

// Takes an activity off its path's resources, which are marked for re-solving.
void FairShare::unlink(ActivityId id) {
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
}

// Stale entries: the activity ended or its rate changed since; every member left the batch.
bool FairShare::valid(std::pair<uint32_t, uint32_t> key) const {
  if (key.first & kBatchKey) {
    const Batch& batch = batches_[key.first & ~kBatchKey];
    return batch.members.size() > batch.left;
  }
  const Activity& f = activities_[key.first];
  return f.active && f.version == key.second;
}

Time FairShare::solve_and_peek() {
  if (!dirty_.empty() || !pending_batches_.empty()) solve_dirty(solved_at_);
  while (!completions_.empty()) {
    const auto key = completions_.top().second;
    if (valid(key)) return completions_.top().first;
    completions_.pop();
    if (key.first & kBatchKey) release_batch(key.first & ~kBatchKey);
  }
  return Time::max();
}

void FairShare::complete(Time now, std::vector<ActivityId>& done) {
  const size_t first = done.size();
  while (!completions_.empty() && completions_.top().first <= now) {
    const auto key = completions_.top().second;
    completions_.pop();
    if (key.first & kBatchKey) {
      const uint32_t b = key.first & ~kBatchKey;
      const Batch& batch = batches_[b];
      if (batch.left == 0) {
        done.insert(done.end(), batch.members.begin(), batch.members.end());
      } else {
        for (const ActivityId id : batch.members)
          if (in_batch(id, b)) done.push_back(id);
      }
      end_batch(b, now);
      release_batch(b);
    } else if (valid(key)) {
      done.push_back(key.first);
    }
  }
  // Everything popped ends at `now`; one by one, the ids would have come out in ascending order.
  // A batch's members are often in descending order (freed ids come back largest first).
  const auto begin = done.begin() + static_cast<std::ptrdiff_t>(first);
  if (std::is_sorted(begin, done.end(), std::greater<>()))
    std::reverse(begin, done.end());
  else
    sort_ids(std::span(begin, done.end()));
  for (size_t i = first; i < done.size(); ++i)
    detach(done[i]);
  solved_at_ = now;
}

// Distinct ids in ascending order. Many within a narrow range (the flows of many steps ending
// together) are marked in a bitmap and read back in order, in time linear in their count and
// range; others are sorted.
void FairShare::sort_ids(std::span<ActivityId> ids) {
  constexpr size_t kFew = 64;
  if (ids.size() < kFew) {
    std::sort(ids.begin(), ids.end());
    return;
  }
  const auto [lowest, highest] = std::minmax_element(ids.begin(), ids.end());
  const ActivityId low = *lowest;
  const size_t words = (*highest - low) / 64 + 1;
  if (words > ids.size()) {
    std::sort(ids.begin(), ids.end());
    return;
  }
  id_bits_.assign(words, 0);
  for (const ActivityId id : ids)
    id_bits_[(id - low) / 64] |= uint64_t{1} << ((id - low) % 64);
  size_t k = 0;
  for (size_t w = 0; w < words; ++w)
    for (uint64_t bits = id_bits_[w]; bits != 0; bits &= bits - 1)
      ids[k++] = low + static_cast<ActivityId>(w * 64 + std::countr_zero(bits));
}

void FairShare::solve_dirty(Time now) {
  ++round_;
  for (const uint32_t b : pending_batches_)
    batches_[b].solved = true;
  pending_batches_.clear();
  while (!dirty_.empty()) {
    const ResourceId seed = dirty_.back();
    dirty_.pop_back();
    if (solved_round_[seed] == round_) continue;  // its component is already solved
    if (on_resource_[seed].empty()) {
      // Unless a batch started on it since it went idle: its rate counts from the batch's start.
      if (resources_[seed].batch_member == kNone) solve_idle(seed, now);
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

// `r` carries one activity, alone at `rate` from `now`: what solve_component does for it.
void FairShare::solve_alone(ResourceId l, double rate, uint32_t tag, Time now) {
  flush_resource(l, now);
  residual_[l] = resources_[l].capacity - rate;
  settle(l, now);
  if (tag_rate_.empty()) return;
  for (auto& rates : tag_rate_)
    rates[l] = 0;
  tag_rate_[tag][l] = rate;
  Usage& st = tag_usage_[tag][l];
  st.peak = std::max(st.peak, rate / resources_[l].capacity);
}

// A resource left with no activity: a component of its own, with no rate.
void FairShare::solve_idle(ResourceId l, Time now) {
  flush_resource(l, now);
  residual_[l] = resources_[l].capacity;
  settle(l, now);
  for (auto& rates : tag_rate_)
    rates[l] = 0;
  solved_round_[l] = round_;
}

// The rate through `l` once its residual capacity is known: usage, peak and recorded history.
inline void FairShare::settle(ResourceId l, Time now) {
  Resource& res = resources_[l];
  res.rate = std::max(0.0, res.capacity - residual_[l]);
  res.usage.peak = std::max(res.usage.peak, res.rate / res.capacity);
  if (res.recorded) note_rate(l, now);
}

void FairShare::solve_component(Time now) {
  for (const ResourceId l : comp_resources_) {
    flush_resource(l, now);
    residual_[l] = resources_[l].capacity;
    unfrozen_on_[l] = static_cast<uint32_t>(on_resource_[l].size());
  }
  for (const ActivityId id : comp_activities_) {
    Activity& f = activities_[id];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated).seconds());
    f.updated = now;
    frozen_[id] = 0;
  }
  size_t unfrozen = comp_activities_.size();
  activities_solved_ += unfrozen;
  // Each round scans the resources with activities still growing (kept in order, the others
  // dropped) for the smallest share, noting those that may saturate at it: a share above the
  // smallest so far stays above the round's. Only the noted are visited to freeze; freezing at
  // `share` only raises the share of a resource above it, so none other would saturate. (Exact
  // in real arithmetic; in doubles the rise outruns rounding while a resource carries fewer than
  // about a million activities, far beyond what the flow budget lets run.)
  growing_.assign(comp_resources_.begin(), comp_resources_.end());
  while (unfrozen > 0) {
    double share = std::numeric_limits<double>::infinity();
    saturating_.clear();
    size_t kept = 0;
    for (const ResourceId l : growing_) {
      if (unfrozen_on_[l] == 0) continue;
      growing_[kept++] = l;
      const double s = residual_[l] / unfrozen_on_[l];
      if (s > share * kSameShare) continue;
      saturating_.push_back(l);
      share = std::min(share, s);
    }
    growing_.resize(kept);
    for (const ResourceId l : saturating_) {
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
  // An activity whose completion comes out where its queued entry already is keeps that entry
  // (most of a large component's rates do not change when one activity starts or ends).
  for (const ActivityId id : comp_activities_) {
    Activity& f = activities_[id];
    const Time completion = now + duration(f.remaining, f.rate);
    if (f.queued && completion == f.completion) continue;
    f.completion = completion;
    f.queued = true;
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
        st.peak = std::max(st.peak, tag_rate_[t][l] / resources_[l].capacity);
      }
  }
}

}  // namespace orrery::engine
