#include "network/flow_network.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery {
namespace {

constexpr double kSameShare = 1 + 1e-9;  // shares within this factor saturate together

// Picoseconds to move `bytes` at `rate`, rounded up so a flow never ends early.
Time duration(double bytes, double rate) {
  if (bytes <= 0) return Time::zero();
  const double ps = std::ceil(bytes / rate * 1e12);
  return ps >= 9e18 ? Time::max() : Time::from_ps(static_cast<int64_t>(ps));
}

}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      on_link_(capacity_.size()),
      link_rate_(capacity_.size(), 0.0),
      link_updated_(capacity_.size()),
      stats_(capacity_.size()),
      history_(capacity_.size()),
      recorded_(capacity_.size(), 0),
      link_mark_(capacity_.size(), 0),
      solved_round_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfrozen_on_(capacity_.size(), 0) {}

void FlowNetwork::set_tags(uint32_t tags) {
  tags_ = std::max<uint32_t>(1, tags);
  if (tags_ < 2) return;
  tag_stats_.assign(tags_, std::vector<LinkStats>(capacity_.size()));
  tag_rate_.assign(tags_, std::vector<double>(capacity_.size(), 0.0));
}

FlowNetwork::FlowId FlowNetwork::start(std::span<const LinkId> path, double bytes, Time now,
                                       uint32_t tag) {
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    frozen_.push_back(0);
  }
  Flow& f = flows_[id];
  f.path.assign(path.begin(), path.end());
  f.slot.resize(path.size());
  f.remaining = bytes;
  f.rate = 0;
  f.updated = now;
  f.tag = tag;
  f.active = true;
  ++f.version;
  ++flows_started_;
  solved_at_ = now;
  if (bytes <= 0 || path.empty()) {  // nothing to share: done at once
    f.path.clear();
    f.completion = now;
    completions_.push({now, {id, f.version}});
    return id;
  }
  for (size_t k = 0; k < f.path.size(); ++k) {
    const LinkId l = f.path[k];
    f.slot[k] = static_cast<uint32_t>(on_link_[l].size());
    on_link_[l].push_back(id);
    dirty_.push_back(l);
  }
  return id;
}

void FlowNetwork::flush_link(LinkId l, Time now) {
  const Time dt = now - link_updated_[l];
  if (dt > Time::zero() && link_rate_[l] > 0) {
    stats_[l].bytes += link_rate_[l] * dt.seconds();
    stats_[l].busy += dt;
    for (uint32_t t = 0; t < tag_rate_.size(); ++t)
      if (tag_rate_[t][l] > 0) {
        tag_stats_[t][l].bytes += tag_rate_[t][l] * dt.seconds();
        tag_stats_[t][l].busy += dt;
      }
  }
  link_updated_[l] = now;
}

void FlowNetwork::record_rates(std::span<const LinkId> links) {
  for (const LinkId l : links)
    recorded_[l] = 1;
}

void FlowNetwork::note_rate(LinkId l, Time now) {
  auto& h = history_[l];
  const double utilization = link_rate_[l] / capacity_[l];
  if (!h.empty() && h.back().second == utilization) return;
  if (!h.empty() && h.back().first == now)
    h.back().second = utilization;
  else
    h.emplace_back(now, utilization);
}

void FlowNetwork::flush_stats(Time now) {
  for (LinkId l = 0; l < capacity_.size(); ++l)
    flush_link(l, now);
}

void FlowNetwork::detach(FlowId id) {
  Flow& f = flows_[id];
  for (size_t k = 0; k < f.path.size(); ++k) {
    auto& list = on_link_[f.path[k]];
    const uint32_t at = f.slot[k];
    const FlowId moved = list.back();
    list[at] = moved;
    list.pop_back();
    if (moved != id) {
      Flow& m = flows_[moved];
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

Time FlowNetwork::next_completion() {
  solve_dirty(solved_at_);
  while (!completions_.empty()) {
    const auto& [time, key] = completions_.top();
    const Flow& f = flows_[key.first];
    if (f.active && f.version == key.second) return time;
    completions_.pop();  // stale: the flow ended or its rate changed since
  }
  return Time::max();
}

void FlowNetwork::complete(Time now, std::vector<FlowId>& done) {
  while (!completions_.empty() && completions_.top().first <= now) {
    const auto [time, key] = completions_.top();
    completions_.pop();
    Flow& f = flows_[key.first];
    if (!f.active || f.version != key.second) continue;
    detach(key.first);
    done.push_back(key.first);
  }
  solved_at_ = now;
}

void FlowNetwork::solve_dirty(Time now) {
  ++round_;
  while (!dirty_.empty()) {
    const LinkId seed = dirty_.back();
    dirty_.pop_back();
    if (solved_round_[seed] == round_) continue;  // its component is already solved
    // Collect the component of `seed`: links and flows reachable through shared links.
    ++epoch_;
    comp_links_.assign(1, seed);
    comp_flows_.clear();
    link_mark_[seed] = epoch_;
    for (size_t i = 0; i < comp_links_.size(); ++i) {
      for (const FlowId id : on_link_[comp_links_[i]]) {
        if (flow_mark_[id] == epoch_) continue;
        flow_mark_[id] = epoch_;
        comp_flows_.push_back(id);
        for (const LinkId l : flows_[id].path)
          if (link_mark_[l] != epoch_) {
            link_mark_[l] = epoch_;
            comp_links_.push_back(l);
          }
      }
    }
    solve_component(now);
    for (const LinkId l : comp_links_)
      solved_round_[l] = round_;
  }
}

void FlowNetwork::solve_component(Time now) {
  ++components_solved_;
  for (const LinkId l : comp_links_) {
    flush_link(l, now);
    residual_[l] = capacity_[l];
    unfrozen_on_[l] = static_cast<uint32_t>(on_link_[l].size());
  }
  for (const FlowId id : comp_flows_) {
    Flow& f = flows_[id];
    f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.updated).seconds());
    f.updated = now;
    frozen_[id] = 0;
  }
  size_t unfrozen = comp_flows_.size();
  while (unfrozen > 0) {
    double share = std::numeric_limits<double>::infinity();
    for (const LinkId l : comp_links_)
      if (unfrozen_on_[l] > 0) share = std::min(share, residual_[l] / unfrozen_on_[l]);
    for (const LinkId l : comp_links_) {
      if (unfrozen_on_[l] == 0 || residual_[l] / unfrozen_on_[l] > share * kSameShare) continue;
      for (const FlowId id : on_link_[l]) {
        if (frozen_[id]) continue;
        frozen_[id] = 1;
        --unfrozen;
        Flow& f = flows_[id];
        f.rate = share;
        for (const LinkId p : f.path) {
          residual_[p] -= share;
          --unfrozen_on_[p];
        }
      }
    }
  }
  for (const FlowId id : comp_flows_) {
    Flow& f = flows_[id];
    f.completion = now + duration(f.remaining, f.rate);
    completions_.push({f.completion, {id, ++f.version}});
  }
  for (const LinkId l : comp_links_) {
    link_rate_[l] = std::max(0.0, capacity_[l] - residual_[l]);
    stats_[l].peak = std::max(stats_[l].peak, link_rate_[l] / capacity_[l]);
    if (recorded_[l]) note_rate(l, now);
  }
  if (!tag_rate_.empty()) {
    for (const LinkId l : comp_links_)
      for (auto& rates : tag_rate_)
        rates[l] = 0;
    for (const FlowId id : comp_flows_)
      for (const LinkId l : flows_[id].path)
        tag_rate_[flows_[id].tag][l] += flows_[id].rate;
    for (const LinkId l : comp_links_)
      for (uint32_t t = 0; t < tag_rate_.size(); ++t) {
        LinkStats& st = tag_stats_[t][l];
        st.peak = std::max(st.peak, tag_rate_[t][l] / capacity_[l]);
      }
  }
}

}  // namespace orrery
