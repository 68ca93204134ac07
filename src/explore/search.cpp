#include "explore/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core/diagnostics.h"
#include "training/group_pricing.h"

namespace orrery::explore {
namespace {

// The objective's figure must exist on every cluster choice before any work.
void check_objective(const SearchRequest& r) {
  for (const ClusterChoice& c : r.clusters) {
    const bool cost = r.objective == Objective::Cost || r.objective == Objective::TokensPerDollar;
    if (cost && !c.cluster.price_per_gpu_hour)
      throw InputError("--objective " + objective_name(r.objective) + ": cluster '" + c.label +
                       "' has no price per GPU-hour");
    if (r.objective == Objective::Energy &&
        !(c.resolved.tdp_watts > 0 && c.resolved.idle_watts >= 0))
      throw InputError("--objective energy: device '" + c.resolved.name +
                       "' gives no TDP and idle power");
  }
}

PruneContext prune_context(const SearchRequest& r) {
  PruneContext c;
  c.spec = &r.spec;
  c.gbs = r.gbs;
  c.tp_asked = r.axes.tp.has_value();
  const FilledAxes a = fill_axes(r.spec, r.base.seq, r.axes, r.clusters);
  const auto has = [&](RecomputeMode m) {
    return std::find(a.recompute.begin(), a.recompute.end(), m) != a.recompute.end();
  };
  c.has_selective = has(RecomputeMode::Selective);
  c.has_no_recompute = has(RecomputeMode::None);
  for (int z = 0; z < 4; ++z)
    c.has_zero[z] = std::find(a.zero.begin(), a.zero.end(), z) != a.zero.end();
  return c;
}

std::string counts_text(const SearchCounts& c) {
  std::string out;
  for (size_t i = 0; i < kPruneRules.size(); ++i)
    out += (i ? ", " : "") + rule_name(kPruneRules[i]) + " " + std::to_string(c.pruned[i]);
  return out;
}

// Runs `work(thread, i)` for i in [0, n) on `threads` threads numbered from 0.
template <typename Work>
void parallel_for(size_t n, int threads, Work&& work) {
  std::atomic<size_t> next{0};
  const auto worker = [&](size_t thread) {
    for (size_t i = next++; i < n; i = next++)
      work(thread, i);
  };
  std::vector<std::jthread> pool;
  for (int t = 1; t < threads && static_cast<size_t>(t) < n; ++t)
    pool.emplace_back(worker, static_cast<size_t>(t));
  worker(0);
}

// Per worker thread and cluster choice, the network pricing its evaluations share.
std::vector<std::vector<std::shared_ptr<GroupPricingCache>>> pricing_per_thread(
    const SearchRequest& r) {
  std::vector<std::vector<std::shared_ptr<GroupPricingCache>>> caches(
      static_cast<size_t>(std::max(1, r.threads)));
  for (auto& per_cluster : caches)
    for (size_t c = 0; c < r.clusters.size(); ++c)
      per_cluster.push_back(std::make_shared<GroupPricingCache>());
  return caches;
}

}  // namespace

std::vector<PlanPoint> survivors_of(const SearchRequest& r, SearchCounts& counts) {
  const PruneContext context = prune_context(r);
  std::vector<PlanPoint> survivors;
  for_each_point(r.spec, r.base, r.gbs, r.axes, r.clusters, [&](const PlanPoint& point) {
    ++counts.space;
    if (const auto rule = prune(point, r.clusters[point.cluster], context))
      ++counts.pruned[static_cast<size_t>(*rule)];
    else
      survivors.push_back(point);
  });
  if (survivors.empty()) {
    // The rules filter in order: the space became empty at the last one that removed anything.
    size_t last = 0;
    for (size_t i = 0; i < kPruneRules.size(); ++i)
      if (counts.pruned[i] > 0) last = i;
    throw InputError("pruning removed every one of the " + std::to_string(counts.space) +
                     " plans; the last by the " + rule_name(kPruneRules[last]) + " rule (" +
                     counts_text(counts) + "; docs/explore.md, \"Pruning\")");
  }
  return survivors;
}

SearchResult run_search(const SearchRequest& r, ResultStore* store, Distribution* distribution) {
  check_objective(r);
  SearchResult out;
  SearchCounts& counts = out.counts;
  const std::vector<PlanPoint> survivors = survivors_of(r, counts);
  const int rank = distribution ? distribution->rank() : 0;
  const int ranks = distribution ? distribution->ranks() : 1;

  // Points an earlier run stored: rank 0 takes their figures, no rank evaluates them.
  std::unordered_map<std::string, std::optional<PointFigures>> stored;
  if (store) stored = store->stored_points();
  std::vector<char> done(survivors.size(), 0);
  for (size_t i = 0; i < survivors.size() && !stored.empty(); ++i)
    done[i] = stored.contains(point_key(survivors[i], r.clusters[survivors[i].cluster]));
  if (distribution) distribution->share_done(done);

  TopK top(r.objective, std::max(r.top, r.rank_by == SimulationMode::Event ? 0 : r.recheck));
  ParetoFront pareto;
  std::mutex sink;
  const auto take = [&](size_t index, const Evaluation& e) {
    const PlanPoint& point = survivors[index];
    if (!done[index]) {
      ++counts.evaluated;
      if (store)
        store->add(point_key(point, r.clusters[point.cluster]), point, r.clusters[point.cluster],
                   std::string(to_string(r.rank_by)), e);
    }
    if (!e.figures) {
      ++counts.failed;
      if (out.first_error.empty()) out.first_error = e.error;
      return;
    }
    const RankedPoint ranked{point, index, *e.figures, std::nullopt};
    top.offer(ranked);
    pareto.offer(ranked);
  };
  if (rank == 0)
    for (size_t i = 0; i < survivors.size(); ++i)
      if (done[i]) {
        ++counts.reused;
        const auto& figures = stored.at(point_key(survivors[i], r.clusters[survivors[i].cluster]));
        take(i, figures ? Evaluation{figures, ""}
                        : Evaluation{std::nullopt,
                                     "failed in an earlier run (the database's error column)"});
      }
  // This process's share: streamed into the ranking alone, collected to send when distributed.
  std::vector<size_t> mine;
  for (size_t i = static_cast<size_t>(rank); i < survivors.size(); i += static_cast<size_t>(ranks))
    if (!done[i]) mine.push_back(i);
  std::vector<IndexedEvaluation> evaluated;
  const auto start = std::chrono::steady_clock::now();
  size_t finished = 0;
  const auto pricing = pricing_per_thread(r);
  parallel_for(mine.size(), r.threads, [&](size_t thread, size_t k) {
    const size_t i = mine[k];
    const PlanPoint& point = survivors[i];
    Evaluation e = evaluate_point(r.spec, r.gbs, point, r.clusters[point.cluster], r.rank_by,
                                  pricing[thread][point.cluster]);
    const std::lock_guard lock(sink);
    if (distribution)
      evaluated.push_back({i, std::move(e)});
    else
      take(i, e);
    if (r.progress) r.progress(static_cast<double>(++finished) / static_cast<double>(mine.size()));
  });
  if (distribution) {
    std::vector<IndexedEvaluation> all = distribution->gather(evaluated);
    if (rank != 0) return out;
    std::sort(all.begin(), all.end(), [](const IndexedEvaluation& a, const IndexedEvaluation& b) {
      return a.index < b.index;
    });
    out.per_rank.assign(static_cast<size_t>(ranks), 0);
    for (const IndexedEvaluation& e : all) {
      ++out.per_rank[e.index % static_cast<size_t>(ranks)];
      take(e.index, e.evaluation);
    }
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (store) store->throw_if_failed();

  out.best = top.best();
  out.pareto = pareto.front();
  if (r.rank_by == SimulationMode::Analytical) {
    const size_t n = std::min(r.recheck, out.best.size());
    parallel_for(n, r.threads, [&](size_t thread, size_t i) {
      RankedPoint& p = out.best[i];
      const ClusterChoice& choice = r.clusters[p.point.cluster];
      const Evaluation e = evaluate_point(r.spec, r.gbs, p.point, choice, SimulationMode::Event,
                                          pricing[thread][p.point.cluster]);
      const std::lock_guard lock(sink);
      ++counts.rechecked;
      if (!e.figures) return;
      p.event = e.figures;
      if (store) store->add_event(point_key(p.point, choice), *e.figures);
    });
    const auto event_score = [&](const RankedPoint& p) {
      return score(r.objective, *p.event).value_or(0);
    };
    std::stable_sort(out.best.begin(), out.best.begin() + static_cast<std::ptrdiff_t>(n),
                     [&](const RankedPoint& a, const RankedPoint& b) {
                       if (a.event.has_value() != b.event.has_value()) return a.event.has_value();
                       return a.event && event_score(a) < event_score(b);
                     });
  }
  if (out.best.size() > r.top) out.best.resize(r.top);
  if (store) store->throw_if_failed();
  return out;
}

}  // namespace orrery::explore
