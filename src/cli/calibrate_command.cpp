// `orrery calibrate`: fits a cluster's network to the user's own nccl-tests logs and writes the
// calibrated cluster file (docs/network.md, "Calibrating from your own measurements").
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "cluster/calibration.h"
#include "cluster/cluster.h"
#include "cluster/cluster_writer.h"
#include "core/diagnostics.h"
#include "core/text.h"
#include "formats/nccl_tests_log.h"

namespace orrery {
namespace {

struct CalibrateArgs {
  std::vector<std::string> logs;
  std::string cluster;
  std::string output;
  bool json = false;
};

constexpr std::string_view kModelled =
    "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, "
    "reduce_perf or sendrecv_perf";

NcclTestsLog read_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw InputError({path, 0}, std::string("cannot read the nccl-tests log: ") +
                                    (std::filesystem::is_directory(path) ? "a directory"
                                                                         : std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string content = buffer.str();
  if (trim(content).empty())
    throw InputError({path, 0}, "expected nccl-tests output, found an empty file");
  NcclTestsLog log = read_nccl_tests_log(path, content);
  if (!log.kind)
    throw InputError({path, std::max<int64_t>(log.op_line, 1)},
                     "'" + log.op + "_perf' is not a collective Orrery models; expected " +
                         std::string(kModelled));
  return log;
}

std::string percent(double v, bool sign = false) {
  return sign ? fmt::format("{:+.1f} %", v) : fmt::format("{:.1f} %", v);
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// "efficiency 0.9 -> 0.85, latency 3.42 us -> 5.13 us, base_latency 8.46 us -> 12.69 us (x 1.5)",
// with ", rendezvous_latency 7 us -> 10.5 us" before the factor where the dimension has one.
std::string fitted_values(const DimensionFit& f) {
  const std::string rendezvous =
      f.rendezvous_latency_before == Time::zero()
          ? std::string()
          : fmt::format(", rendezvous_latency {} -> {}",
                        format_duration_exact(f.rendezvous_latency_before),
                        format_duration_exact(f.rendezvous_latency_after));
  return fmt::format(
      "efficiency {} -> {}, latency {} -> {}, base_latency {} -> {}{} (x {})", f.efficiency_before,
      f.efficiency_after, format_duration_exact(f.latency_before),
      format_duration_exact(f.latency_after), format_duration_exact(f.base_latency_before),
      format_duration_exact(f.base_latency_after), rendezvous, f.latency_scale);
}

nlohmann::ordered_json stats_json(const ErrorStats& e) {
  return {{"mape_pct", e.mape_pct}, {"bias_pct", e.bias_pct}};
}

nlohmann::ordered_json range_json(const RangeStats& r) {
  return {{"range", r.range},
          {"points", r.before.points},
          {"before", stats_json(r.before)},
          {"after", stats_json(r.after)}};
}

int run_calibrate(const CalibrateArgs& a) {
  if (a.output.empty())
    throw InputError(
        "-o: expected the calibrated cluster file to write (e.g. -o my-cluster-calibrated.yaml)");
  if (a.cluster.empty())
    throw InputError("--cluster: expected the cluster to calibrate (a preset or a YAML file)");
  const Cluster cluster = load_cluster(a.cluster);
  protect_input_file(a.cluster);

  std::vector<NcclTestsLog> logs;
  std::vector<MeasuredSeries> series;
  for (const std::string& path : a.logs) {
    protect_input_file(path);
    logs.push_back(read_log(path));
    const NcclTestsLog& log = logs.back();
    MeasuredSeries s{file_name(path), {path, log.gpus_line}, *log.kind, log.gpus, {}};
    for (const NcclTestsRow& row : log.rows)
      if (row.bytes > 0) s.points.push_back({row.bytes, Time::from_seconds(row.time_us * 1e-6)});
    series.push_back(std::move(s));
  }
  const Calibration c = calibrate(cluster, series);
  // A fit that misses by more than a factor of two on average, either way (too slow: over
  // +100 %; too fast: a bias under -50 %), is no calibration: the log's figures are not what the
  // model prices (other units, another GPU count, a broken run).
  for (size_t i = 0; i < logs.size(); ++i)
    if (const RangeStats& all = c.series[i].ranges.back();
        all.after.mape_pct > 100 || all.after.bias_pct < -50)
      throw InputError({a.logs[i], 0},
                       "expected measurements the collective model can follow: the fit still "
                       "misses them by more than a factor of two (MAPE " +
                           percent(all.after.mape_pct) + ", bias " +
                           percent(all.after.bias_pct, true) + " over " +
                           std::to_string(all.after.points) +
                           " points; are the times microseconds and the GPU count right?); no "
                           "cluster file written");

  Cluster out = c.cluster;
  out.name = cluster.name + "-calibrated";
  out.aliases.clear();
  out.description = (cluster.description.empty() ? cluster.name : cluster.description) +
                    "; calibrated by orrery calibrate on " + std::to_string(logs.size()) +
                    " nccl-tests log" + (logs.size() == 1 ? "" : "s");
  std::vector<std::string> header = {
      fmt::format("Calibrated by `orrery calibrate` from cluster {} on {} nccl-tests log{}, {} "
                  "points:",
                  cluster.name, logs.size(), logs.size() == 1 ? "" : "s", c.overall.before.points)};
  for (size_t i = 0; i < logs.size(); ++i) {
    const RangeStats& all = c.series[i].ranges.back();
    header.push_back(fmt::format("  {}: {}, {} GPUs, {} points, MAPE {} -> {}",
                                 file_name(a.logs[i]), logs[i].op, logs[i].gpus, all.before.points,
                                 percent(all.before.mape_pct), percent(all.after.mape_pct)));
  }
  header.push_back(
      fmt::format("All points: MAPE {} -> {}, bias {} -> {}", percent(c.overall.before.mape_pct),
                  percent(c.overall.after.mape_pct), percent(c.overall.before.bias_pct, true),
                  percent(c.overall.after.bias_pct, true)));
  header.push_back("Fitted (docs/network.md, \"Calibrating from your own measurements\"):");
  for (const DimensionFit& f : c.dimensions)
    header.push_back(
        "  " + f.name + ": " +
        (f.fitted ? fitted_values(f) + (f.note.empty() ? "" : "; " + f.note) : f.note));
  write_file(a.output, [&](std::ostream& os) { os << cluster_yaml(out, header); });

  if (a.json) {
    nlohmann::ordered_json dims = nlohmann::ordered_json::array();
    for (const DimensionFit& f : c.dimensions)
      dims.push_back(
          {{"name", f.name},
           {"index", f.dimension},
           {"fitted", f.fitted},
           {"note", f.note},
           {"logs", f.series},
           {"points", f.points},
           {"iterations", f.iterations},
           {"efficiency_fitted", f.efficiency_fitted},
           {"latency_fitted", f.latency_fitted},
           {"efficiency", {{"before", f.efficiency_before}, {"after", f.efficiency_after}}},
           {"latency_scale", f.latency_scale},
           {"latency_s",
            {{"before", f.latency_before.seconds()}, {"after", f.latency_after.seconds()}}},
           {"base_latency_s",
            {{"before", f.base_latency_before.seconds()},
             {"after", f.base_latency_after.seconds()}}},
           {"rendezvous_latency_s",
            {{"before", f.rendezvous_latency_before.seconds()},
             {"after", f.rendezvous_latency_after.seconds()}}}});
    nlohmann::ordered_json log_rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < logs.size(); ++i) {
      nlohmann::ordered_json ranges = nlohmann::ordered_json::array();
      for (const RangeStats& r : c.series[i].ranges)
        ranges.push_back(range_json(r));
      log_rows.push_back({{"file", a.logs[i]},
                          {"op", logs[i].op},
                          {"gpus", logs[i].gpus},
                          {"points", c.series[i].ranges.back().before.points},
                          {"dimension", c.dimensions[c.series[i].dimension].name},
                          {"ranges", ranges}});
    }
    const nlohmann::ordered_json result = {
        {"cluster", cluster.name}, {"calibrated_cluster", out.name},
        {"output", a.output},      {"dimensions", dims},
        {"logs", log_rows},        {"overall", range_json(c.overall)},
        {"notes", c.notes}};
    std::cout << result.dump(2) << "\n";
    return 0;
  }

  std::ostringstream text;
  text << fmt::format("orrery calibrate: {} on {} nccl-tests log{}, {} points\n\n", cluster.name,
                      logs.size(), logs.size() == 1 ? "" : "s", c.overall.before.points);
  text << "fitted\n";
  for (const DimensionFit& f : c.dimensions) {
    if (f.fitted)
      text << fmt::format("  {:<12} {}\n  {:<12} ({} log{}, {} points, {} iterations{})\n", f.name,
                          fitted_values(f), "", f.series, f.series == 1 ? "" : "s", f.points,
                          f.iterations, f.note.empty() ? "" : "; " + f.note);
    else
      text << fmt::format("  {:<12} {}\n", f.name, f.note);
  }
  size_t width = 8;  // "all logs"
  for (const SeriesReport& s : c.series)
    width = std::max(width, s.name.size());
  const auto row = [&](const std::string& name, const std::string& op, const std::string& gpus,
                       const std::string& range, const std::string& points,
                       const std::array<std::string, 4>& figures) {
    text << fmt::format("  {:<{}}  {:<14} {:>5}  {:<9} {:>6}  {:>11} {:>11}  {:>10} {:>10}\n", name,
                        width, op, gpus, range, points, figures[0], figures[1], figures[2],
                        figures[3]);
  };
  text << "\n";
  row("log", "op", "GPUs", "range", "points",
      {"MAPE before", "bias before", "MAPE after", "bias after"});
  const auto stats_row = [&](const std::string& name, const std::string& op,
                             const std::string& gpus, const RangeStats& r) {
    row(name, op, gpus, r.range, std::to_string(r.before.points),
        {percent(r.before.mape_pct), percent(r.before.bias_pct, true), percent(r.after.mape_pct),
         percent(r.after.bias_pct, true)});
  };
  for (size_t i = 0; i < logs.size(); ++i) {
    bool first = true;
    for (const RangeStats& r : c.series[i].ranges) {
      stats_row(first ? c.series[i].name : "", first ? logs[i].op : "",
                first ? std::to_string(logs[i].gpus) : "", r);
      first = false;
    }
  }
  stats_row("all logs", "", "", c.overall);
  text << fmt::format("\nwrote {} (cluster {}; use it with --cluster {})\n", a.output, out.name,
                      a.output);
  std::cout << text.str();
  return 0;
}

}  // namespace

std::function<int()> add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit a cluster's network to your own nccl-tests logs and write the calibrated cluster");
  cmd->footer(
      "Examples:\n"
      "  orrery calibrate all_reduce_perf.log all_gather_perf.log --cluster hgx-h100 \\\n"
      "      -o hgx-h100-calibrated.yaml\n"
      "  orrery simulate WORKLOAD --cluster hgx-h100-calibrated.yaml\n\n"
      "Each log is the output of one nccl-tests binary (all_reduce_perf, all_gather_perf,\n"
      "reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf) on the\n"
      "first N GPUs of the cluster; its out-of-place times are fitted. Dimensions are fitted\n"
      "innermost first: single-server logs fit the NVSwitch, multi-server logs the fabric.");
  cmd->add_option("NCCL_TESTS_LOG", args->logs, "nccl-tests output files")->required();
  cmd->add_option("--cluster", args->cluster, "Cluster preset or YAML file to calibrate")
      ->check(not_empty("a preset name or a YAML file"));
  cmd->add_option("-o,--output", args->output, "Calibrated cluster YAML file to write")
      ->check(not_empty("a file to write"));
  cmd->add_flag("--json", args->json,
                "Print the fitted values and the errors before and after as JSON");
  return [args]() { return run_calibrate(*args); };
}

}  // namespace orrery
