#include "cli/visual_outputs.h"

#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "core/diagnostics.h"
#include "report/html_report.h"
#include "report/trace_writer.h"

namespace orrery {

void add_visual_options(CLI::App& cmd, VisualArgs& args) {
  cmd.add_option("--trace", args.trace,
                 "Write the simulated iteration as a Chrome/Perfetto trace (JSON; open in "
                 "ui.perfetto.dev or chrome://tracing); event and flow modes. With -o DIR also "
                 "DIR/trace.json")
      ->check(not_empty("a file to write"));
  cmd.add_option("--trace-ranks", args.trace_ranks,
                 "Flow mode: the ranks the trace and report show (default: per stage the rank "
                 "that finishes last)")
      ->delimiter(',');
  cmd.add_option("--report", args.report,
                 "Write a self-contained HTML report (breakdown, timeline, per-layer table, "
                 "memory, links). With -o DIR also DIR/report.html")
      ->check(not_empty("a file to write"));
  cmd.add_flag("--quiet", args.quiet, "No progress bar on stderr for long runs");
}

std::vector<std::pair<std::string, std::filesystem::path>> visual_output_paths(
    const VisualArgs& args, const std::string& output_dir) {
  std::vector<std::pair<std::string, std::filesystem::path>> paths = {{"--trace", args.trace},
                                                                      {"--report", args.report}};
  if (!output_dir.empty()) {
    if (!args.trace.empty())
      paths.emplace_back("-o (trace.json)", std::filesystem::path(output_dir) / "trace.json");
    if (!args.report.empty())
      paths.emplace_back("-o (report.html)", std::filesystem::path(output_dir) / "report.html");
  }
  return paths;
}

void apply_visual_args(const VisualArgs& args, const std::string& mode,
                       SimulationOptions& options) {
  const bool timeline = mode == "event" || mode == "flow";
  if (!args.trace.empty() && !timeline)
    throw InputError("--trace: " + mode + " has no timeline; use --mode event or --mode flow");
  if (!args.trace_ranks.empty() && mode != "flow")
    throw InputError(
        "--trace-ranks applies to --mode flow (event mode simulates one rank per "
        "stage)");
  if (!args.trace_ranks.empty() && !args.wants_timeline())
    throw InputError("--trace-ranks: give --trace or --report as well");
  options.record_timeline = timeline && args.wants_timeline();
  options.timeline_ranks = args.trace_ranks;
}

void write_visual_outputs(const VisualArgs& args, const std::string& output_dir,
                          const std::vector<Result>& results,
                          const std::vector<std::pair<std::string, std::string>>& inputs) {
  const auto trace = [&](std::ostream& out) { write_trace(out, results); };
  const auto report = [&](std::ostream& out) { write_html_report(out, results, inputs); };
  if (!args.trace.empty()) write_file(args.trace, trace);
  if (!args.report.empty()) write_file(args.report, report);
  if (output_dir.empty()) return;
  const std::filesystem::path dir(output_dir);
  if (!args.trace.empty()) write_file(dir / "trace.json", trace);
  if (!args.report.empty()) write_file(dir / "report.html", report);
}

}  // namespace orrery
