// The pictures a run may ask for: --trace FILE.json (Chrome/Perfetto trace of the simulated
// iteration), --report FILE.html (self-contained report), --trace-ranks (flow mode: the ranks the
// timeline shows) and, with -o DIR, their copies DIR/trace.json and DIR/report.html. Also --quiet,
// which silences the progress bar.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "training/simulation_options.h"
#include "workload/result.h"

namespace orrery {

struct VisualArgs {
  std::string trace;   // empty: no trace
  std::string report;  // empty: no report
  std::vector<int64_t> trace_ranks;
  bool quiet = false;

  bool wants_timeline() const { return !trace.empty() || !report.empty(); }
};

void add_visual_options(CLI::App& cmd, VisualArgs& args);

// The output paths these flags name (with -o DIR, its trace.json and report.html), for
// check_distinct_outputs.
std::vector<std::pair<std::string, std::filesystem::path>> visual_output_paths(
    const VisualArgs& args, const std::string& output_dir);

// Throws InputError when --trace asks a mode without a timeline or --trace-ranks is misplaced;
// else sets what `options` must record. `mode`: "event", "flow" or, for modes without a timeline,
// what the error calls them (e.g. "the analytical mode").
void apply_visual_args(const VisualArgs& args, const std::string& mode, SimulationOptions& options);

// Writes the trace and the report asked for (and their copies in `output_dir`, if given).
void write_visual_outputs(const VisualArgs& args, const std::string& output_dir,
                          const std::vector<Result>& results,
                          const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace orrery
