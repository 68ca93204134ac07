// `orrery simulate` on a DFModel file: DFModel's model (the default) or, with --mode event or
// flow, that simulator on the converted workload and the equivalent (or the given) cluster.
#pragma once

#include <optional>
#include <string>

#include "cli/cluster_options.h"
#include "cli/dataflow_options.h"
#include "cli/visual_outputs.h"
#include "cluster/cluster.h"
#include "training/simulation_options.h"

namespace orrery {

struct DataflowSimulation {
  std::string path;
  std::string content;
  DataflowArgs dataflow;
  std::string mode;  // "", "analytical" (DFModel's model), "event" or "flow"
  // --rank-by: "analytical" (the default, DFModel's closed form) or "event" (the best --recheck
  // by the closed form re-run in event mode, the fastest there the answer).
  std::string rank_by = "analytical";
  std::optional<size_t> recheck;  // default: kDefaultRecheck with event ranking, else none
  bool json = false;
  std::string csv;
  std::string output_dir;
  std::optional<EffectiveCluster> cluster;  // --cluster, for event mode; default: the equivalent
  SimulationOptions options;                // event mode
  VisualArgs visual;                        // --trace, --report
  bool progress = false;  // a progress bar on stderr for long searches and simulations
  std::vector<std::pair<std::string, std::string>> inputs;  // for the report
  std::vector<std::string> ignored;  // warnings for flags that do not apply to DFModel files
};

// Mappings re-checked by --rank-by event when --recheck is not given.
constexpr size_t kDefaultRecheck = 10;

// Prints the summary or JSON, writes the requested files; returns the exit status.
int simulate_dataflow(const DataflowSimulation& request);

}  // namespace orrery
