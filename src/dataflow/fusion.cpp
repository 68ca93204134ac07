#include "dataflow/fusion.h"

#include <cmath>
#include <limits>
#include <set>

namespace orrery {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kNoPin = -1, kConflict = -2;

// A contiguous run of the order: its cost and what restricts the configuration it can take.
struct Run {
  double ii_ns = kInf;  // infinite when it does not fit
  int64_t pin = kNoPin;
  bool forward = false, backward = false;
};

}  // namespace

Fusion fuse_kernels(const DataflowProblem& problem, const DataflowGraph& graph,
                    const CostTerms& terms, int64_t num_config) {
  const std::vector<size_t>& order = graph.order();
  const size_t n = order.size();
  const int64_t configs_total = num_config > 0 ? num_config : static_cast<int64_t>(n);
  std::vector<size_t> position(n);
  for (size_t i = 0; i < n; ++i)
    position[order[i]] = i;
  bool any_forward = false;
  for (const DataflowKernel& k : problem.kernels)
    any_forward = any_forward || !k.backward;
  const bool split = any_forward && graph.has_backward();
  const int64_t forward_last = (configs_total + 1) / 2 - 1, backward_first = configs_total / 2;

  // The configuration numbers the program tries (`slots`): every one, except that where more
  // than n lie between two numbers that matter (a pin, the last forward and first backward
  // configuration, the ends) only the first n of them are kept. Runs take increasing numbers,
  // at most n of them, and numbers between the same two landmarks are interchangeable, so
  // this changes no optimum; it keeps a huge num_config from costing memory and time.
  std::set<int64_t> landmarks = {configs_total};
  if (split) landmarks.insert({forward_last, backward_first});
  for (const DataflowKernel& k : problem.kernels)
    if (k.config >= 0 && k.config < configs_total) landmarks.insert(k.config);
  std::vector<int64_t> slot;
  int64_t from_value = 0;
  for (const int64_t landmark : landmarks) {
    for (int64_t v = from_value; v < landmark && v < from_value + static_cast<int64_t>(n); ++v)
      slot.push_back(v);
    if (landmark < configs_total) slot.push_back(landmark);
    from_value = landmark + 1;
  }
  const size_t configs = slot.size();

  // Costs of every run [i, j), grown one kernel at a time.
  std::vector<Run> runs((n + 1) * (n + 1));
  const auto run = [&](size_t i, size_t j) -> Run& { return runs[i * (n + 1) + j]; };
  for (size_t i = 0; i < n; ++i) {
    CostTerms::Sums sums;
    std::vector<size_t> members;
    Run r;
    for (size_t j = i + 1; j <= n; ++j) {
      const size_t k = order[j - 1];
      const DataflowKernel& kernel = problem.kernels[k];
      const KernelTerms& t = terms.kernel(k);
      members.push_back(k);
      sums.compute_ns += t.compute_ns;
      sums.tp_network_ns += t.tp_network_ns;
      sums.dp_network_ns += t.dp_network_ns;
      sums.memory_extra_bytes += t.memory_extra_bytes;
      ++sums.kernels;
      if (t.weight_bytes > 0) ++sums.weighted;
      for (const size_t e : graph.in_edges(k)) {
        const EdgeTerms& et = terms.edge(e);
        if (position[graph.edges()[e].from] >= i) {  // producer inside: the edge is now fused
          sums.staged_tile_bytes -= et.tile_bytes;
          sums.fused_sram_bytes += et.tile_bytes * static_cast<double>(et.buffer_depth);
        } else {
          sums.staged_tile_bytes += et.tile_bytes;
        }
      }
      for (const size_t e : graph.out_edges(k)) {
        sums.staged_tile_bytes += terms.edge(e).tile_bytes;  // consumer after k: outside for now
        sums.tp_network_ns += terms.edge(e).tp_network_ns;
      }
      if (kernel.config >= 0)
        r.pin = r.pin == kNoPin || r.pin == kernel.config ? kernel.config : kConflict;
      (kernel.backward ? r.backward : r.forward) = true;
      const ConfigTiming timing = terms.finish(sums, members);
      r.ii_ns = timing.fits ? timing.ii_ns : kInf;
      run(i, j) = r;
      // Longer runs need at least these cycles, and at least these cores: when the cores do
      // not suffice they stay infeasible (their Run keeps its infinite time).
      sums.cycles_at_least = timing.cycles_per_tile;
      if (!timing.cores_fit) break;
    }
  }

  const auto allowed = [&](const Run& r, size_t c) {
    const int64_t value = slot[c];
    if (std::isinf(r.ii_ns) || r.pin == kConflict) return false;
    if (r.pin != kNoPin && r.pin != value) return false;
    if (split && r.forward && value > forward_last) return false;
    if (split && r.backward && value < backward_first) return false;
    return true;
  };

  // best[j][c]: least total for order[0, j) whose last run takes configuration c.
  std::vector<double> best((n + 1) * configs, kInf);
  std::vector<size_t> from((n + 1) * configs, 0);
  // below[j][c] = min over c' <= c of best[j][c'] (and its argmin), for the previous run.
  std::vector<double> below((n + 1) * configs, kInf);
  std::vector<size_t> below_arg((n + 1) * configs, 0);
  const auto at = [&](size_t j, size_t c) { return j * configs + c; };
  for (size_t j = 1; j <= n; ++j) {
    for (size_t c = 0; c < configs; ++c) {
      for (size_t i = 0; i < j; ++i) {
        const Run& r = run(i, j);
        if (!allowed(r, c)) continue;
        const double before = i == 0 ? 0.0 : c == 0 ? kInf : below[at(i, c - 1)];
        if (before + r.ii_ns < best[at(j, c)]) {
          best[at(j, c)] = before + r.ii_ns;
          from[at(j, c)] = i;
        }
      }
      const bool better = c == 0 || best[at(j, c)] < below[at(j, c - 1)];
      below[at(j, c)] = better ? best[at(j, c)] : below[at(j, c - 1)];
      below_arg[at(j, c)] = better ? c : below_arg[at(j, c - 1)];
    }
  }

  Fusion f;
  f.config_count = configs_total;
  const size_t last = below_arg[at(n, configs - 1)];
  if (std::isinf(best[at(n, last)])) return f;
  f.found = true;
  f.all_config_ii_ns = best[at(n, last)];
  f.config.assign(n, 0);
  size_t j = n, c = last;
  while (j > 0) {
    const size_t i = from[at(j, c)];
    for (size_t p = i; p < j; ++p)
      f.config[order[p]] = slot[c];
    j = i;
    if (j > 0) c = below_arg[at(j, c - 1)];
  }
  return f;
}

}  // namespace orrery
