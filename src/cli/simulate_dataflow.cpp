#include "cli/simulate_dataflow.h"

#include <algorithm>
#include <iostream>

#include "cli/output_files.h"
#include "cli/run_provenance.h"
#include "core/progress_bar.h"
#include "core/time.h"
#include "dataflow/dataflow_result.h"
#include "dataflow/event_departure.h"
#include "dataflow/workload_conversion.h"
#include "explore/dataflow_ranking.h"
#include "network/collective_flows.h"
#include "report/config_csv.h"
#include "report/dataflow_summary.h"
#include "report/json_report.h"
#include "report/layer_csv.h"
#include "report/text_summary.h"
#include "training/event_simulator.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

size_t recheck_count(const DataflowSimulation& r) {
  return r.recheck.value_or(r.rank_by == "event" ? kDefaultRecheck : 0);
}

// --rank-by event, --recheck K: the best K by DFModel's closed form re-run in event mode.
void recheck(const DataflowSimulation& r, SolvedDataflow& solved, Diagnostics& diagnostics) {
  if (recheck_count(r) == 0) return;
  if (!solved.outcome.searched) {
    diagnostics.warn({r.path, 0},
                     std::string(r.rank_by == "event" ? "--rank-by event" : "--recheck") +
                         ": the file fixes its mapping, so there is nothing to rank "
                         "or re-check; ignored");
    return;
  }
  EventRecheck recheck;
  recheck.count = recheck_count(r);
  recheck.rank = r.rank_by == "event";
  recheck.cluster = r.cluster ? &r.cluster->cluster : nullptr;
  recheck.options = r.options;
  ProgressBar bar("re-checking mappings (event mode)", r.progress);
  recheck.progress = [&bar](double done) { bar.update(done); };
  recheck_in_event_mode(solved.problem, solved.graph, solved.model, recheck, solved.outcome,
                        diagnostics);
}

}  // namespace

int simulate_dataflow(const DataflowSimulation& r) {
  const bool event = r.mode == "event" || r.mode == "flow";
  std::vector<std::pair<std::string, std::filesystem::path>> outputs = {{"--csv", r.csv},
                                                                        {"-o", r.output_dir}};
  for (auto& named : visual_output_paths(r.visual, r.output_dir))
    outputs.push_back(std::move(named));
  check_distinct_outputs(outputs);
  SimulationOptions options = r.options;
  apply_visual_args(r.visual, event ? r.mode : "DFModel's model", options);
  Diagnostics diagnostics;
  for (const std::string& message : r.ignored)
    diagnostics.warn({}, message);
  SolvedDataflow solved = [&] {
    ProgressBar bar("searching mappings", r.progress);
    DataflowArgs args = r.dataflow;
    args.top = std::max(args.top, recheck_count(r));  // the search keeps those re-checked
    return solve_dataflow_file(r.path, r.content, args, diagnostics,
                               [&bar](double done) { bar.update(done); });
  }();
  recheck(r, solved, diagnostics);
  Result result;
  std::optional<EffectiveCluster> ran_on = r.cluster;
  if (event) {
    const ConvertedWorkload converted =
        to_workload(solved.problem, solved.graph, solved.outcome.sharding, solved.outcome.best);
    if (!r.cluster) {
      EffectiveCluster equivalent;
      equivalent.cluster =
          equivalent_cluster(converted.network, solved.problem.name + "-equivalent");
      equivalent.source = "the DFModel file's system";
      ran_on = std::move(equivalent);
    }
    const Cluster& cluster = ran_on->cluster;
    if (!r.cluster)
      for (const std::string& caveat : converted.network.caveats)
        diagnostics.warn({r.path, 0}, "equivalent cluster: " + caveat);
    // A time out of range or a flow-mode limit met on the way names the file, as in
    // scenario.cpp for the other formats.
    try {
      if (r.mode == "flow") {
        ProgressBar bar("simulating (flow mode)", r.progress);
        options.progress = [&bar](double done) { bar.update(done); };
        result = FlowSimulator().simulate(converted.workload, cluster, options, diagnostics);
        options.progress = nullptr;
      } else {
        result = EventSimulator().simulate(converted.workload, cluster, options, diagnostics);
      }
    } catch (const TimeOverflow& e) {
      throw InputError({r.path, 0}, e.what());
    } catch (const FlowBudgetError& e) {
      throw InputError({r.path, 0}, e.what());
    }
    if (const auto departure = event_departure(solved.problem, solved.outcome.best, result))
      diagnostics.warn({r.path, 0}, *departure);
  } else {
    result = dataflow_result(solved.problem, solved.outcome);
  }
  result.warnings = diagnostics.warnings();
  const Provenance provenance = run_provenance(event && ran_on ? &*ran_on : nullptr,
                                               {event ? result.device : "DFModel's cost tables"});

  const auto summary = [&](std::ostream& out) {
    if (event)
      write_text_summary(out, result);
    else
      write_dataflow_summary(out, result);
  };
  const auto table = [&](std::ostream& out) {
    if (event)
      write_layer_csv(out, result);
    else
      write_config_csv(out, result);
  };
  if (!r.csv.empty()) write_file(r.csv, table);
  if (!r.output_dir.empty()) {
    const std::filesystem::path dir(r.output_dir);
    ensure_output_directory(dir);
    write_file(dir / "result.json",
               [&](std::ostream& out) { write_json(out, result, &provenance); });
    write_file(dir / "summary.txt", summary);
    write_file(dir / (event ? "layers.csv" : "configs.csv"), table);
  }
  write_visual_outputs(r.visual, r.output_dir, {result}, r.inputs);
  if (r.json)
    write_json(std::cout, result, &provenance);
  else if (r.csv != "-")  // --csv - takes stdout
    summary(std::cout);
  return 0;
}

}  // namespace orrery
