#include "dataflow/mapping_search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "dataflow/cost_terms.h"
#include "dataflow/fusion.h"
#include "dataflow/sharding_search.h"

namespace orrery {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

// Every ordered factorisation of `total` into sizes, keeping the fixed (> 0) ones.
void factorizations(const std::vector<int64_t>& fixed, int64_t total, std::vector<int64_t>& now,
                    std::vector<std::vector<int64_t>>& out) {
  const size_t i = now.size();
  if (i == fixed.size()) {
    if (total == 1) out.push_back(now);
    return;
  }
  const auto descend = [&](int64_t size) {
    now.push_back(size);
    factorizations(fixed, total / size, now, out);
    now.pop_back();
  };
  if (fixed[i] > 0) {
    if (total % fixed[i] == 0) descend(fixed[i]);
  } else if (i + 1 == fixed.size()) {
    descend(total);
  } else {
    for (const int64_t d : divisors(total))
      descend(d);
  }
}

// The role assignments DFModel's LLM path allows: distinct roles, all three on a 3-D topology.
std::vector<std::vector<ParallelRole>> role_assignments(
    const std::vector<TopologyDimension>& dims) {
  using R = ParallelRole;
  std::vector<std::vector<ParallelRole>> out;
  std::array<R, 3> roles = {R::Tensor, R::Pipeline, R::Data};
  std::sort(roles.begin(), roles.end());
  do {
    std::vector<ParallelRole> a(roles.begin(), roles.begin() + static_cast<long>(dims.size()));
    bool fits = true;
    for (size_t i = 0; i < dims.size(); ++i)
      fits = fits && (dims[i].role == R::Unassigned || dims[i].role == a[i]);
    if (fits && std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  } while (std::next_permutation(roles.begin(), roles.end()));
  return out;
}

struct Layout {
  std::vector<int64_t> shape;
  std::vector<ParallelRole> roles;
  int64_t tp = 1, pp = 1, dp = 1;

  Mapping mapping(int64_t micro_batch, int64_t tile_size, ExecutionStyle style) const {
    Mapping m;
    m.shape = shape;
    m.roles = roles;
    m.tp = tp;
    m.pp = pp;
    m.dp = dp;
    m.micro_batch = micro_batch;
    m.tile_size = tile_size;
    m.style = style;
    return m;
  }
};

// Every shape of the topology (fixed sizes kept) with every allowed role assignment whose
// data-parallel degree divides the global batch.
std::vector<Layout> layouts_of(const DataflowProblem& problem) {
  const DataflowSystem& sys = problem.system;
  const SourceLocation at{problem.source, sys.line};
  std::vector<int64_t> fixed;
  for (const TopologyDimension& d : sys.dimensions)
    fixed.push_back(d.size);
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> scratch;
  factorizations(fixed, sys.chips, scratch, shapes);
  if (shapes.empty())
    throw InputError(at, sys.topology + ": expected dimension sizes whose product is num_chip " +
                             std::to_string(sys.chips));
  std::vector<Layout> layouts;
  for (const auto& roles : role_assignments(sys.dimensions))
    for (const auto& shape : shapes) {
      Layout l{shape, roles};
      for (size_t i = 0; i < shape.size(); ++i)
        (roles[i] == ParallelRole::Tensor     ? l.tp
         : roles[i] == ParallelRole::Pipeline ? l.pp
                                              : l.dp) = shape[i];
      if (problem.run.llm->global_batch % l.dp == 0) layouts.push_back(std::move(l));
    }
  if (layouts.empty())
    throw InputError(at,
                     "no layout of TP/PP/DP on the topology has a data-parallel degree dividing "
                     "global_batch_size " +
                         std::to_string(problem.run.llm->global_batch));
  return layouts;
}

// Tile size fixed by the file's stage-2 shard sizes: every tiled kernel's shard on its tiled
// axis must give the same number of tiles.
std::optional<int64_t> tile_from_shards(const DataflowProblem& p) {
  std::optional<int64_t> tiles;
  for (const DataflowKernel& k : p.kernels) {
    int64_t size = 0, shard = 0;
    switch (k.tiling) {
      case TensorAxis::Outer:
      case TensorAxis::M:
        size = k.outer * k.m;
        shard = k.shard_outer_m;
        break;
      case TensorAxis::K:
        size = k.k;
        shard = k.shard_k;
        break;
      case TensorAxis::N:
        size = k.n;
        shard = k.shard_n;
        break;
      case TensorAxis::None:
        continue;
    }
    if (shard <= 0) return std::nullopt;
    const int64_t t = (size + shard - 1) / shard;
    if (tiles && *tiles != t) return std::nullopt;
    tiles = t;
  }
  if (!tiles) return std::nullopt;
  const int64_t seq = p.run.llm->seq_len;
  return (seq + *tiles - 1) / *tiles;
}

// Everything a worker needs to score candidates.
class Scorer {
 public:
  Scorer(const DataflowProblem& p, const DataflowGraph& g, const ShardingPlan& plan,
         const ModelOptions& options, bool pins)
      : problem_(p), graph_(g), plan_(plan), options_(options), pins_(pins) {}

  // The mapping with its configurations filled, or nothing when it does not fit.
  std::optional<RankedMapping> score(Mapping m) const {
    const CostTerms terms(problem_, graph_, plan_, m, options_);
    const size_t n = problem_.kernels.size();
    double ii = 0;
    if (m.style == ExecutionStyle::KernelByKernel || pins_) {
      if (m.style == ExecutionStyle::KernelByKernel) {
        m.config.resize(n);
        for (size_t k = 0; k < n; ++k)
          m.config[k] = static_cast<int64_t>(k);
        m.config_count = static_cast<int64_t>(n);
      } else {
        m.config.clear();
        for (const DataflowKernel& k : problem_.kernels)
          m.config.push_back(k.config);
        m.config_count = std::max(problem_.run.num_config,
                                  *std::max_element(m.config.begin(), m.config.end()) + 1);
      }
      std::map<int64_t, std::vector<size_t>> groups;
      for (const size_t k : graph_.order())
        groups[m.config[k]].push_back(k);
      for (const auto& [c, members] : groups) {
        const int64_t index = c;
        const ConfigTiming t =
            terms.config(members, [&](size_t k) { return m.config[k] == index; });
        if (!t.fits) return std::nullopt;
        ii += t.ii_ns;
      }
    } else {
      const Fusion f = fuse_kernels(problem_, graph_, terms, problem_.run.num_config);
      if (!f.found) return std::nullopt;
      m.config = f.config;
      m.config_count = f.config_count;
      ii = f.all_config_ii_ns;
    }
    const PipelineTiming pipeline = pipeline_timing(problem_, graph_, m);
    if (dram_footprint_bytes(problem_, graph_, terms, m.config, pipeline.layers_per_stage) >
        problem_.system.dram_bytes)
      return std::nullopt;
    const double t = pipeline.iteration_ns(ii);
    return RankedMapping{std::move(m), t, ii, std::nullopt};
  }

 private:
  const DataflowProblem& problem_;
  const DataflowGraph& graph_;
  const ShardingPlan& plan_;
  ModelOptions options_;
  bool pins_;
};

// A candidate's place in the enumeration, for deterministic tie-breaking.
using Key = std::array<size_t, 3>;  // layout, micro-batch, style

struct Ranked {
  RankedMapping r;
  Key key;
  bool operator<(const Ranked& o) const {
    return r.final_ns != o.r.final_ns ? r.final_ns < o.r.final_ns : key < o.key;
  }
};

void keep_best(std::vector<Ranked>& top, Ranked candidate, size_t k) {
  const auto at = std::upper_bound(top.begin(), top.end(), candidate);
  if (static_cast<size_t>(at - top.begin()) >= k) return;
  top.insert(at, std::move(candidate));
  if (top.size() > k) top.pop_back();
}

// The pins of a DATAFLOW file (kernels with config >= 0) against what a mapping needs:
// configurations 0 to C - 1 (C = num_config, or one per kernel when it is 0); forward kernels in
// the first half and backward ones in the second when the graph has both (DFModel's split, as
// the fusion program applies it); and no kernel pinned to an earlier configuration than a
// kernel it depends on, through free kernels too (configurations run in order).
void check_pins(const DataflowProblem& p, const DataflowGraph& g) {
  const size_t n = p.kernels.size();
  const int64_t configs = p.run.num_config > 0 ? p.run.num_config : static_cast<int64_t>(n);
  const std::string numbers =
      configs == 1 ? "configuration 0" : fmt::format("configurations 0 to {}", configs - 1);
  const std::string range = p.run.num_config > 0
                                ? fmt::format("num_config {}: {}", configs, numbers)
                                : "num_config 0: at most one per kernel, " + numbers;
  bool any_forward = false;
  for (const DataflowKernel& k : p.kernels)
    any_forward = any_forward || !k.backward;
  const bool split = any_forward && g.has_backward();
  const int64_t forward_last = (configs + 1) / 2 - 1, backward_first = configs / 2;
  const auto name = [](const DataflowKernel& k) {
    return fmt::format("kernel '{}' (id {})", k.name, k.id);
  };
  for (const DataflowKernel& k : p.kernels) {
    if (k.config < 0) continue;
    const SourceLocation at{p.source, k.line};
    if (k.config >= configs)
      throw InputError(at, fmt::format("{}: expected config below {} ({}), found {}", name(k),
                                       configs, range, k.config));
    if (split && !k.backward && k.config > forward_last)
      throw InputError(
          at, fmt::format("{} is a forward kernel pinned to configuration {}, but "
                          "DATAFLOW runs forward kernels in configurations 0 to {} "
                          "and backward ones in {} to {} ({})",
                          name(k), k.config, forward_last, backward_first, configs - 1, range));
    if (split && k.backward && k.config < backward_first)
      throw InputError(
          at, fmt::format("{} is a backward kernel pinned to configuration {}, but "
                          "DATAFLOW runs backward kernels in configurations {} to {} "
                          "and forward ones in 0 to {} ({})",
                          name(k), k.config, backward_first, configs - 1, forward_last, range));
  }
  // The latest pin each kernel depends on, and whose it is.
  std::vector<int64_t> earliest(n, -1);
  std::vector<size_t> because(n, 0);
  for (const size_t k : g.order()) {
    const DataflowKernel& kernel = p.kernels[k];
    if (kernel.config >= 0 && earliest[k] > kernel.config)
      throw InputError(
          {p.source, kernel.line},
          fmt::format("{} is pinned to configuration {}, but it depends on {}, "
                      "pinned to configuration {}; configurations run in order",
                      name(kernel), kernel.config, name(p.kernels[because[k]]), earliest[k]));
    const int64_t here = kernel.config >= 0 ? kernel.config : earliest[k];
    const size_t source = kernel.config >= 0 ? k : because[k];
    for (const size_t e : g.out_edges(k)) {
      const size_t to = g.edges()[e].to;
      if (here > earliest[to]) {
        earliest[to] = here;
        because[to] = source;
      }
    }
  }
}

// Where the file carries DFModel's stage-2 output (shards, edge tile bytes, kernel-by-kernel
// configurations), says in one warning each if the mapping evaluated differs from it.
void compare_stage2_outputs(const DataflowProblem& p, const Evaluation& ev,
                            Diagnostics& diagnostics) {
  const auto report = [&](const std::string& field, int64_t count, int64_t line,
                          const std::string& first) {
    if (count == 0) return;
    diagnostics.warn({p.source, line},
                     field + ": " + first +
                         (count > 1 ? fmt::format(" (and {} more)", count - 1) : "") +
                         "; the file's stage-2 output is not the mapping evaluated");
  };
  int64_t shards = 0, configs = 0, line = 0, config_line = 0;
  std::string first, first_config;
  for (size_t k = 0; k < p.kernels.size(); ++k) {
    const DataflowKernel& kernel = p.kernels[k];
    const KernelShard& s = ev.shards[k];
    const bool given = kernel.shard_outer_m > 0 || kernel.shard_n > 0;
    const bool k_differs = kernel.variant != KernelVariant::Elementwise &&
                           kernel.variant != KernelVariant::ElementwiseInputInput &&
                           kernel.shard_k != s.k;
    if (given && (kernel.shard_outer_m != s.m || kernel.shard_n != s.n || k_differs) &&
        shards++ == 0) {
      line = kernel.line;
      first =
          fmt::format("kernel '{}' has {} x {} x {}, the mapping gives {} x {} x {}", kernel.name,
                      kernel.shard_outer_m, kernel.shard_k, kernel.shard_n, s.m, s.k, s.n);
    }
    if (p.run.style == ExecutionStyle::KernelByKernel &&
        ev.mapping.style == ExecutionStyle::KernelByKernel && kernel.config >= 0 &&
        kernel.config != ev.mapping.config[k] && configs++ == 0) {
      config_line = kernel.line;
      first_config = fmt::format("kernel '{}' has config {}, kernel-by-kernel runs it in {}",
                                 kernel.name, kernel.config, ev.mapping.config[k]);
    }
  }
  report("shard_outer_M/shard_K/shard_N", shards, line, first);
  report("config", configs, config_line, first_config);
  int64_t edges = 0, edge_line = 0;
  std::string first_edge;
  for (size_t e = 0; e < p.edges.size(); ++e) {
    const double given = p.edges[e].shard_tensor_bytes;
    if (given > 0 && static_cast<float>(given) != static_cast<float>(ev.edge_tile_bytes[e]) &&
        edges++ == 0) {
      edge_line = p.edges[e].line;
      first_edge = fmt::format("connection {} has {:g} bytes, the mapping gives {:g}",
                               p.edges[e].id, given, ev.edge_tile_bytes[e]);
    }
  }
  report("shard_tensor_size", edges, edge_line, first_edge);
}

// The search's time limit (0: none), the file's gurobi block's or --time-limit, with where it
// comes from for its messages.
struct TimeLimit {
  double seconds = 0;
  SourceLocation at;
  std::string name;
};

TimeLimit time_limit(const DataflowProblem& problem, const SearchOptions& options) {
  TimeLimit limit;
  limit.at = options.time_limit_s
                 ? SourceLocation{problem.source, 0}
                 : SourceLocation{problem.source,
                                  problem.limits.line > 0 ? problem.limits.line : problem.run.line};
  limit.name = options.time_limit_s ? "--time-limit" : "gurobi.time";
  limit.seconds = options.time_limit_s.value_or(static_cast<double>(problem.limits.time_limit_s));
  if (!(limit.seconds >= 0))  // only the flag can be NaN: the file's time is an integer
    throw InputError(
        fmt::format("expected {} >= 0 seconds (0: none), found {}", limit.name, limit.seconds));
  // A limit beyond a year stops nothing a search does; it is no limit (and keeps the deadline
  // arithmetic of the clock in range).
  constexpr double kLongestLimit = 365.0 * 24 * 3600;
  if (limit.seconds > kLongestLimit) limit.seconds = 0;
  return limit;
}

// KERNEL_BY_KERNEL runs kernels in file order, so every connection must go forward in the file.
void check_file_order(const DataflowProblem& problem, const DataflowGraph& graph) {
  if (graph.file_order_is_topological()) return;
  for (size_t e = 0; e < graph.edges().size(); ++e)
    if (graph.edges()[e].from > graph.edges()[e].to)
      throw InputError({problem.source, problem.edges[e].line},
                       "connection " + std::to_string(problem.edges[e].id) +
                           ": KERNEL_BY_KERNEL runs kernels in file order, but this connection "
                           "goes from a later kernel to an earlier one");
}

// The tile sizes to search, and where they come from.
std::vector<int64_t> tiles_of(const DataflowProblem& problem, std::string& source) {
  const LlmShape& llm = *problem.run.llm;
  if (llm.tile_size > 0) {
    source = "tile_size in the file";
    return {llm.tile_size};
  }
  if (const auto t = tile_from_shards(problem)) {
    source = "the file's stage-2 shard sizes";
    return {*t};
  }
  source = "searched over the divisors of seq_len";
  return divisors(llm.seq_len);
}

// The candidates: per layout, the micro-batches it can run; each with every tile and style.
struct SearchSpace {
  std::vector<Layout> layouts;
  std::vector<std::vector<int64_t>> batches;  // per layout
  std::vector<int64_t> tiles;
  std::vector<ExecutionStyle> styles;
  size_t candidates = 0;
};

void count_candidates(SearchSpace& space, const LlmShape& llm) {
  space.batches.assign(space.layouts.size(), {});
  for (size_t i = 0; i < space.layouts.size(); ++i) {
    const int64_t per_replica = llm.global_batch / space.layouts[i].dp;
    if (llm.micro_batch > 0) {
      if (per_replica % llm.micro_batch == 0) space.batches[i] = {llm.micro_batch};
    } else {
      space.batches[i] = divisors(per_replica);
    }
    space.candidates += space.batches[i].size() * space.tiles.size() * space.styles.size();
  }
}

// The workers: --threads or gurobi.thread (0: every CPU), at most one per layout.
size_t thread_count(const DataflowProblem& problem, const SearchOptions& options,
                    const SearchSpace& space) {
  const int64_t wanted = options.threads.value_or(problem.limits.threads);
  const auto hardware = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<size_t>(std::clamp<int64_t>(wanted > 0 ? std::min(wanted, hardware) : hardware,
                                                 1, static_cast<int64_t>(space.layouts.size())));
}

// What the workers found: the best candidates, ranked, and the counts.
struct SearchRun {
  std::vector<Ranked> top;
  int64_t evaluated = 0, fitting = 0;
  bool timed_out = false;
};

// Scores every candidate of `space` on a pool of threads (layouts shared out one at a time), each
// layout's tiles reduced to their best, until `deadline`; keeps the best `options.top_k`.
SearchRun run_search(const SearchSpace& space, const Scorer& scorer, const SearchOptions& options,
                     size_t thread_count, Clock::time_point start, double limit_s) {
  const auto deadline = limit_s > 0 ? start + std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(limit_s))
                                    : Clock::time_point::max();
  const std::vector<Layout>& layouts = space.layouts;
  SearchRun run;
  std::atomic<size_t> next{0};
  std::atomic<bool> timed_out{false};
  std::mutex merge;
  const size_t keep = std::max<size_t>(options.top_k, 1);
  const auto report = [&] {
    double done = static_cast<double>(std::min(next.load(), layouts.size())) /
                  static_cast<double>(layouts.size());
    if (limit_s > 0)
      done = std::max(done, std::chrono::duration<double>(Clock::now() - start).count() / limit_s);
    options.progress(std::min(done, 1.0));
  };
  const auto work = [&](bool reporting) {
    std::vector<Ranked> local;
    int64_t evaluated = 0, fitting = 0;
    for (size_t i = next++; i < layouts.size(); i = next++) {
      if (reporting) report();
      const Layout& l = layouts[i];
      for (size_t b = 0; b < space.batches[i].size(); ++b) {
        if (Clock::now() > deadline) {
          timed_out = true;
          break;
        }
        for (size_t s = 0; s < space.styles.size(); ++s) {
          std::optional<RankedMapping> best;
          for (const int64_t tile : space.tiles) {
            ++evaluated;
            auto scored = scorer.score(l.mapping(space.batches[i][b], tile, space.styles[s]));
            if (!scored) continue;
            ++fitting;
            if (!best || scored->final_ns < best->final_ns) best = std::move(scored);
          }
          if (best) keep_best(local, {std::move(*best), {i, b, s}}, keep);
        }
      }
    }
    const std::lock_guard<std::mutex> lock(merge);
    run.evaluated += evaluated;
    run.fitting += fitting;
    for (Ranked& r : local)
      keep_best(run.top, std::move(r), keep);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < thread_count; ++t)
    pool.emplace_back(work, false);
  work(static_cast<bool>(options.progress));
  for (std::thread& t : pool)
    t.join();
  run.timed_out = timed_out;
  return run;
}

// The one fixed candidate of a file that leaves nothing free, when it does not fit: evaluated
// anyway (the caller says why DFModel would not).
Ranked fixed_candidate(const DataflowProblem& problem, const SearchSpace& space) {
  size_t i = 0;
  while (space.batches[i].empty())
    ++i;
  Mapping m =
      space.layouts[i].mapping(space.batches[i].front(), space.tiles.front(), space.styles.front());
  const size_t n = problem.kernels.size();
  for (size_t k = 0; k < n; ++k)
    m.config.push_back(m.style == ExecutionStyle::KernelByKernel ? static_cast<int64_t>(k)
                                                                 : problem.kernels[k].config);
  m.config_count = static_cast<int64_t>(n);
  return {{m, 0, 0, std::nullopt}, {0, 0, 0}};
}

// One warning for the configurations that do not fit (often every one, for the same reason), one
// for DRAM.
void warn_misfits(const Evaluation& best, const SourceLocation& system_at,
                  Diagnostics& diagnostics) {
  const auto& misfits = best.misfits;
  const auto configs_end = std::find_if(misfits.begin(), misfits.end(), [](const std::string& why) {
    return !why.starts_with("configuration");
  });
  const auto count = configs_end - misfits.begin();
  if (count > 0)
    diagnostics.warn(system_at, "the mapping does not fit, so DFModel's solver would reject it: " +
                                    misfits.front() +
                                    (count > 1 ? fmt::format(" (and {} more configurations of {})",
                                                             count - 1, best.configs.size())
                                               : ""));
  for (auto it = configs_end; it != misfits.end(); ++it)
    diagnostics.warn(system_at,
                     "the mapping does not fit, so DFModel's solver would reject it: " + *it);
}

// What the closed-form search covered and proved.
std::string closed_form_statement(const SearchOutcome& o) {
  std::string s = fmt::format("searched {} candidate mapping{} ({} fit)", o.evaluated,
                              o.evaluated == 1 ? "" : "s", o.fitting);
  if (!o.exhaustive)
    return s + "; stopped at the time limit, so the best found is not proven optimal";
  if (o.fusion_restricted)
    return s +
           "; exhaustive, with DATAFLOW fusion optimal among contiguous runs of the kernel "
           "order (DFModel also considers non-contiguous groupings), so not proven optimal over "
           "DFModel's space";
  return s + "; exhaustive, so the best is proven optimal";
}

}  // namespace

std::string SearchOutcome::statement() const {
  if (!searched) return "fixed mapping: the file leaves nothing to search";
  const std::string s = closed_form_statement(*this);
  if (event_ranked)
    return s + fmt::format(
                   " by DFModel's closed form; ranked by Orrery's event mode among the {} best "
                   "by the closed form, so the answer is the fastest of those {} only",
                   rechecked, rechecked);
  if (rechecked > 0)
    return s +
           fmt::format("; the {} best also simulated in event mode (not ranked by it)", rechecked);
  return s;
}

SearchOutcome solve_dataflow(const DataflowProblem& problem, const DataflowGraph& graph,
                             const SearchOptions& options, Diagnostics& diagnostics) {
  const LlmShape& llm = *problem.run.llm;
  const SourceLocation system_at{problem.source, problem.system.line},
      run_at{problem.source, problem.run.line};
  const auto start = Clock::now();
  const TimeLimit limit = time_limit(problem, options);

  SearchSpace space;
  space.layouts = layouts_of(problem);
  space.styles = options.styles;
  if (space.styles.empty()) space.styles.push_back(problem.run.style);
  const auto has_style = [&](ExecutionStyle style) {
    return std::find(space.styles.begin(), space.styles.end(), style) != space.styles.end();
  };
  if (has_style(ExecutionStyle::KernelByKernel)) check_file_order(problem, graph);
  const bool any_pinned = std::any_of(problem.kernels.begin(), problem.kernels.end(),
                                      [](const DataflowKernel& k) { return k.config >= 0; });
  // Pins apply to DATAFLOW files only (a kernel-by-kernel file's configs are its own output).
  const bool all_pinned = problem.run.style == ExecutionStyle::Dataflow &&
                          std::all_of(problem.kernels.begin(), problem.kernels.end(),
                                      [](const DataflowKernel& k) { return k.config >= 0; });
  if (problem.run.style == ExecutionStyle::Dataflow && any_pinned) check_pins(problem, graph);
  DataflowProblem unpinned;
  const DataflowProblem* scored_problem = &problem;
  if (problem.run.style != ExecutionStyle::Dataflow && any_pinned) {
    unpinned = problem;
    for (DataflowKernel& k : unpinned.kernels)
      k.config = -1;
    scored_problem = &unpinned;
  }

  SearchOutcome out;
  space.tiles = tiles_of(problem, out.tile_source);
  // Stage 1 when some kernel has no sharding and some layout splits tensors.
  bool unsharded = false;
  for (const DataflowKernel& k : problem.kernels)
    unsharded = unsharded || !k.sharding;
  const bool any_tp = std::any_of(space.layouts.begin(), space.layouts.end(),
                                  [](const Layout& l) { return l.tp > 1; });
  out.sharding = unsharded && any_tp ? choose_sharding(problem, graph, limit.seconds)
                                     : sharding_from_file(problem);

  count_candidates(space, llm);
  if (space.candidates == 0)
    throw InputError(run_at, "micro_batch_size " + std::to_string(llm.micro_batch) +
                                 " does not divide global_batch_size / DP for any layout");
  if (space.candidates > 10'000'000 && limit.seconds <= 0)
    diagnostics.warn(run_at, fmt::format("{} candidate mappings and no time limit: the search "
                                         "may take long (set gurobi.time or --time-limit)",
                                         space.candidates));
  const bool free_fusion = has_style(ExecutionStyle::Dataflow) && !all_pinned;
  // The fusion program keeps every contiguous run of kernels: n^2 of them per candidate.
  constexpr size_t kMostFusedKernels = 1024;
  if (free_fusion && problem.kernels.size() > kMostFusedKernels)
    throw InputError({problem.source, problem.graph_line},
                     fmt::format("DATAFLOW fusion of {} kernels: expected at most {} (the fusion "
                                 "program is quadratic in kernels; one layer has tens)",
                                 problem.kernels.size(), kMostFusedKernels));
  out.searched = space.candidates > 1 || free_fusion || out.sharding.chosen;
  out.fusion_restricted = free_fusion;

  const Scorer scorer(*scored_problem, graph, out.sharding, options.model, all_pinned);
  SearchRun run = run_search(space, scorer, options, thread_count(problem, options, space), start,
                             limit.seconds);
  out.evaluated = run.evaluated;
  out.fitting = run.fitting;
  out.exhaustive = !run.timed_out;

  if (run.top.empty()) {
    if (run.timed_out)
      throw InputError(limit.at, fmt::format("the search's time limit ({} {:g} s) ran out before "
                                             "any mapping was found; raise it",
                                             limit.name, limit.seconds));
    if (space.candidates != 1 || free_fusion)
      throw InputError(system_at, std::string("no mapping fits the system (SRAM, cores or DRAM "
                                              "capacity)") +
                                      (any_pinned && problem.run.style == ExecutionStyle::Dataflow
                                           ? " with the file's pinned configurations"
                                           : ""));
    // One fixed candidate that does not fit: evaluate it anyway, and say why DFModel would not.
    run.top.push_back(fixed_candidate(problem, space));
  }
  for (const Ranked& r : run.top)
    out.ranked.push_back(r.r);
  out.best =
      evaluate(*scored_problem, graph, out.sharding, out.ranked.front().mapping, options.model);
  out.ranked.front().final_ns = out.best.final_ns;
  out.ranked.front().all_config_ii_ns = out.best.all_config_ii_ns;
  // Results are reported on Orrery's clock: signed 64-bit picoseconds, about 106 days.
  constexpr double kClockNs = 9.2e15;
  if (!(out.best.final_ns < kClockNs))
    throw InputError({problem.source, 0},
                     fmt::format("the time per iteration ({:.3g} s) is beyond what Orrery's "
                                 "picosecond clock holds (about 106 days); check the system's "
                                 "rates and sizes (dram_bw, link_bw, freq, compute_util)",
                                 out.best.final_ns / 1e9));
  std::erase_if(out.ranked, [&](const RankedMapping& r) { return !(r.final_ns < kClockNs); });
  compare_stage2_outputs(problem, out.best, diagnostics);
  warn_misfits(out.best, system_at, diagnostics);
  return out;
}

}  // namespace orrery
