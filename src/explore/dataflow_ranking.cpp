#include "explore/dataflow_ranking.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "training/event_simulator.h"

namespace orrery {
namespace {

// One mapping's iteration time in event mode, or nothing when the simulator refuses it (`why`
// says why). Its simulation's warnings are dropped: they are about a candidate, not the answer
// (the answer's own run, if asked, warns again).
std::optional<Time> event_time(const DataflowProblem& problem, const DataflowGraph& graph,
                               const ShardingPlan& sharding, const Evaluation& evaluation,
                               const EventRecheck& recheck, std::string& why) {
  try {
    const ConvertedWorkload converted = to_workload(problem, graph, sharding, evaluation);
    const Cluster cluster =
        recheck.cluster ? *recheck.cluster
                        : equivalent_cluster(converted.network, problem.name + "-equivalent");
    Diagnostics candidate;
    return EventSimulator()
        .simulate(converted.workload, cluster, recheck.options, candidate)
        .iteration_time;
  } catch (const InputError& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::string describe(const Mapping& m) {
  return fmt::format("TP {} x PP {} x DP {}, micro-batch {}", m.tp, m.pp, m.dp, m.micro_batch);
}

// Simulated mappings first, by event time; the others after, in the closed form's order.
bool faster_in_event_mode(const RankedMapping& a, const RankedMapping& b) {
  if (!a.event_time || !b.event_time) return a.event_time && !b.event_time;
  return *a.event_time < *b.event_time;
}

}  // namespace

void recheck_in_event_mode(const DataflowProblem& problem, const DataflowGraph& graph,
                           const ModelOptions& model, const EventRecheck& recheck,
                           SearchOutcome& outcome, Diagnostics& diagnostics) {
  const size_t count = std::min(recheck.count, outcome.ranked.size());
  size_t refused = 0;
  std::string first_refusal;
  for (size_t i = 0; i < count; ++i) {
    RankedMapping& r = outcome.ranked[i];
    const Evaluation evaluation = evaluate(problem, graph, outcome.sharding, r.mapping, model);
    std::string why;
    r.event_time = event_time(problem, graph, outcome.sharding, evaluation, recheck, why);
    if (!r.event_time && refused++ == 0) first_refusal = describe(r.mapping) + ": " + why;
    if (recheck.progress) recheck.progress(static_cast<double>(i + 1) / static_cast<double>(count));
  }
  outcome.rechecked = count;
  if (refused == count && recheck.rank)
    throw InputError(
        fmt::format("--rank-by event: the event simulator can run none of the {} "
                    "best mappings (first: {})",
                    count, first_refusal));
  if (refused > 0)
    diagnostics.warn({problem.source, 0},
                     fmt::format("{} of the {} re-checked mappings could not be simulated in event "
                                 "mode, so have no event time (first: {})",
                                 refused, count, first_refusal));
  if (!recheck.rank) return;
  const auto first = outcome.ranked.begin();
  std::stable_sort(first, first + static_cast<std::ptrdiff_t>(count), faster_in_event_mode);
  outcome.best = evaluate(problem, graph, outcome.sharding, first->mapping, model);
  outcome.event_ranked = true;
}

Cluster equivalent_cluster(const EquivalentNetwork& n, const std::string& name) {
  Cluster c;
  c.name = name;
  c.description = "two-tier equivalent of a DFModel system: a server is the TP group";
  c.source = "dfmodel";
  c.gpu = "dataflow chip";
  Dimension server, network;
  server.name = "TP dimension";
  server.kind = DimensionKind::Switch;
  server.size = n.chips_per_server;
  server.link_bandwidth = Bandwidth::gb_per_second(n.scale_up_gbps);
  network.name = "DP/PP dimension";
  network.kind = DimensionKind::FatTree;
  network.size = 0;
  network.rails = n.chips_per_server;
  network.link_bandwidth = Bandwidth::gb_per_second(n.scale_out_gbps);
  c.network = Topology({server, network});
  c.placement = {"tp", "ep", "dp", "pp"};
  return c;
}

}  // namespace orrery
