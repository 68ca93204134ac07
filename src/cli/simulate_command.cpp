#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/dataflow_options.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "cli/plan_options.h"
#include "cli/run_provenance.h"
#include "cli/simulate_dataflow.h"
#include "cli/visual_outputs.h"
#include "cluster/cluster.h"
#include "compat/simai_analytical.h"
#include "core/diagnostics.h"
#include "core/progress_bar.h"
#include "formats/chakra_et_reader.h"
#include "formats/workload_reader.h"
#include "report/json_report.h"
#include "report/layer_csv.h"
#include "report/op_table.h"
#include "report/text_summary.h"
#include "scenario/scenario.h"
#include "workload/parallelism.h"

namespace orrery {
namespace {

struct SimulateArgs {
  std::vector<std::string> workloads;
  std::string model;
  PlanArgs plan;
  std::string format;
  ClusterArgs cluster;
  std::optional<int64_t> gpus;
  std::string mode;  // empty: analytical with --compat, else event
  std::string compat;
  std::string schedule = "auto";
  bool no_overlap = false;
  std::string algorithm = "auto";
  std::optional<double> dp_overlap, tp_overlap, ep_overlap, pp_overlap;
  std::string run_name;
  // Operator-level formats.
  std::string device;
  std::optional<int64_t> dp, ep, layers;
  std::string graph_config;
  std::string comm_groups;  // Chakra traces
  std::optional<double> backward_ratio;
  std::string comm_dtype;
  bool json = false;
  std::string csv;
  std::string output_dir;
  DataflowArgs dataflow;
  std::string rank_by = "analytical";  // DFModel search: the mode that picks the answer
  std::optional<int64_t> recheck;      // DFModel search: best mappings re-run in event mode
  VisualArgs visual;
  // SimAI's own invocation (`-w FILE`): SimAI-compatible analytical mode, SimAI's outputs.
  bool simai_invocation = false;
  std::string busbw;                        // SimAI's -busbw FILE
  std::vector<std::string> dataflow_flags;  // DFModel-only flags given
  std::vector<std::string> reader_flags;    // workload-format flags given (--layers, ...)
};

bool simai_run(const SimulateArgs& a) {
  return a.compat == "simai" || a.simai_invocation;
}

// The cluster the run uses: --cluster and its overrides; by default hgx-h100, or SimAI's
// defaults for a SimAI-compatible run.
EffectiveCluster cluster_for(const SimulateArgs& a) {
  return effective_cluster(a.cluster, simai_run(a) ? kSimaiCluster : kDefaultCluster);
}

ReaderOptions reader_options(const SimulateArgs& a) {
  ReaderOptions o;
  o.layers = a.layers;
  if (!a.comm_dtype.empty()) o.comm_dtype = parse_dtype(a.comm_dtype);
  o.graph_config = a.graph_config;
  o.comm_groups = a.comm_groups;
  return o;
}

// What the run was given, for the report's inputs table (`mode`: the mode that runs).
std::vector<std::pair<std::string, std::string>> report_inputs(const SimulateArgs& a,
                                                               const std::string& mode,
                                                               const std::string& cluster) {
  std::vector<std::pair<std::string, std::string>> rows;
  const auto add = [&](const std::string& name, const std::string& value) {
    if (!value.empty()) rows.emplace_back(name, value);
  };
  for (const std::string& w : a.workloads)
    add("workload", w);
  add("model", a.model);
  add("plan", a.plan.plan_file);
  add("format", a.format);
  add("cluster", cluster);
  if (a.gpus) add("GPUs", std::to_string(*a.gpus));
  add("mode", mode);
  add("compat", a.compat);
  add("schedule", a.schedule);
  add("overlap", a.no_overlap ? "off (--no-overlap)" : "on");
  add("collective algorithm", a.algorithm);
  add("placement", a.cluster.placement);
  add("device", a.device);
  for (const std::string& term : a.plan.without)
    add("without", term);
  return rows;
}

int run_simulate(const SimulateArgs& a) {
  for (const std::string& input : a.workloads)
    protect_input_file(input);
  for (const std::string* input :
       {&a.cluster.cluster, &a.device, &a.graph_config, &a.comm_groups, &a.model, &a.busbw})
    protect_input_file(*input);
  if (a.csv == "-" && a.json)
    throw InputError("--csv - and --json both write to standard output; give one");
  std::optional<WorkloadFormat> format;
  if (!a.format.empty()) format = parse_workload_format(a.format);
  if (a.workloads.size() == 1 && format != WorkloadFormat::Chakra &&
      !is_chakra_trace_path(a.workloads.front())) {
    const std::string& path = a.workloads.front();
    const std::string content = read_workload_content(path);
    if (format.value_or(detect_workload_format(content).value_or(WorkloadFormat::SimaiText)) ==
        WorkloadFormat::Dfmodel) {
      if (!a.compat.empty())
        throw InputError("--compat " + a.compat +
                         " applies to layer-wise workloads; a DFModel file is evaluated with "
                         "DFModel's own model by default");
      DataflowSimulation d;
      d.path = path;
      d.content = content;
      d.dataflow = a.dataflow;
      d.rank_by = a.rank_by;
      if (a.recheck) d.recheck = static_cast<size_t>(*a.recheck);
      if (a.rank_by == "event" && a.recheck == 0)
        throw InputError(
            "--recheck: expected at least 1 with --rank-by event (the mappings "
            "simulated in event mode, of which the fastest is the answer)");
      d.mode = a.mode;
      d.json = a.json;
      d.csv = a.csv;
      d.output_dir = a.output_dir;
      d.visual = a.visual;
      d.progress = !a.visual.quiet && ProgressBar::stderr_is_terminal();
      if (a.gpus) throw InputError("--gpus: a DFModel file's num_chip sets the chips");
      if (!a.cluster.cluster.empty() || a.cluster.overridden()) d.cluster = cluster_for(a);
      d.inputs = report_inputs(a, a.mode.empty() ? "DFModel's model" : a.mode,
                               d.cluster ? d.cluster->cluster.name : "the file's system");
      for (const std::string& flag : a.reader_flags)
        d.ignored.push_back(flag +
                            " applies to layer-wise and operator-level workloads, not "
                            "DFModel files; ignored");
      d.options.schedule = *parse_schedule(a.schedule);
      d.options.overlap = !a.no_overlap;
      d.options.algorithm = *parse_algorithm(a.algorithm);
      return simulate_dataflow(d);
    }
  }
  // SimAI's -r is a path prefix (results/test- writes results/test-EndToEnd.csv).
  if (!a.run_name.empty() && !a.simai_invocation) check_file_name(a.run_name, "--run-name");
  const std::string simai_csv =
      a.simai_invocation && !a.run_name.empty() ? a.run_name + "EndToEnd.csv" : std::string();
  std::vector<std::pair<std::string, std::filesystem::path>> outputs = {
      {"--csv", a.csv == "-" ? std::string() : a.csv}, {"-o", a.output_dir}, {"-r", simai_csv}};
  for (auto& named : visual_output_paths(a.visual, a.output_dir))
    outputs.push_back(std::move(named));
  check_distinct_outputs(outputs);
  const bool simai = simai_run(a);
  if (a.workloads.size() > 1 && !a.csv.empty())
    throw InputError("several workloads: --csv takes one workload (use -o DIR)");

  Scenario scenario;
  scenario.workload_files = a.workloads;
  scenario.format = format;
  scenario.reader = reader_options(a);
  scenario.backward_ratio = a.backward_ratio;
  PlanNotes notes;
  scenario.model = model_scenario(a.model, a.plan, a.ep, a.gpus, notes);
  if (!scenario.model) scenario.reader_ep = a.ep;
  // A model needs a GPU to price its compute; the SimAI-default cluster names none.
  EffectiveCluster cluster = cluster_for(a);
  scenario.options.algorithm = run_algorithm(a.algorithm, cluster);
  scenario.input_warnings = notes.warnings;
  scenario.input_warnings.insert(scenario.input_warnings.end(), cluster.warnings.begin(),
                                 cluster.warnings.end());
  scenario.cluster = cluster.cluster;
  scenario.device = a.device;
  scenario.dp = a.dp;
  if (!scenario.model) scenario.gpus = a.gpus;
  if (!a.mode.empty()) scenario.mode = parse_simulation_mode(a.mode);
  scenario.compat = simai ? "simai" : a.compat;
  scenario.simai = {a.dp_overlap, a.tp_overlap, a.ep_overlap, a.pp_overlap};
  scenario.simai_busbw = a.busbw;
  scenario.options.schedule = *parse_schedule(a.schedule);
  scenario.options.overlap = !a.no_overlap && notes.overlap.value_or(true);
  if (a.no_overlap && notes.overlap.value_or(false))
    scenario.input_warnings.push_back("--no-overlap overrides " + a.plan.plan_file +
                                      "'s data_par_overlap");
  for (const std::string& term : a.plan.without)
    if (term == "sm-contention") scenario.options.sm_contention = false;
  const std::string mode = !a.mode.empty() ? a.mode : simai ? "analytical" : "event";
  apply_visual_args(a.visual,
                    simai                  ? "SimAI's analytical mode (--compat simai)"
                    : mode == "analytical" ? "the analytical mode"
                                           : mode,
                    scenario.options);
  Prediction prediction = [&] {
    // The bar erases itself before anything is printed.
    ProgressBar progress("simulating (" + mode + " mode)",
                         !a.visual.quiet && ProgressBar::stderr_is_terminal());
    scenario.options.progress = [&progress](double done) { progress.update(done); };
    Prediction p = predict(scenario);
    scenario.options.progress = nullptr;
    return p;
  }();
  std::vector<std::string> ignored;
  if (!simai && !a.run_name.empty())
    ignored.push_back(
        "--run-name names SimAI's EndToEnd.csv rows; it applies only with --compat simai");
  for (const std::string& flag : a.dataflow_flags)
    ignored.push_back(flag + " applies to DFModel files only; ignored");
  for (auto it = ignored.rbegin(); it != ignored.rend(); ++it) {
    Warning unused;
    unused.message = *it;
    for (Result& r : prediction.results)
      r.warnings.insert(r.warnings.begin(), unused);
  }
  const std::vector<Workload>& workloads = prediction.workloads;
  std::vector<Result>& results = prediction.results;
  const std::optional<simai::Report>& simai_report = prediction.simai_report;
  const bool several = workloads.size() > 1;

  const std::string run_name = a.run_name.empty() ? workloads.front().name + "-" : a.run_name;
  // Operator-level workloads: a per-operator CSV and a table per operator kind in the summary.
  const auto operators = [&](size_t k) { return has_operator_rows(workloads[k]); };
  const auto write_table = [&](std::ostream& out, size_t k) {
    if (simai_report)
      simai::write_end_to_end_csv(out, *simai_report, run_name);
    else if (operators(k))
      write_op_csv(out, workloads[k], results[k]);
    else
      write_layer_csv(out, results[k]);
  };
  const auto write_summary = [&](std::ostream& out) {
    for (size_t k = 0; k < results.size(); ++k) {
      if (k) out << "\n";
      if (several)
        out << fmt::format("Job {} of {}: {}, GPUs {} to {}{}\n", k + 1, results.size(),
                           workloads[k].name, results[k].first_gpu,
                           results[k].first_gpu + results[k].parallelism.world_size - 1,
                           mode == "flow" ? " (sharing the network with the other jobs)"
                                          : " (run alone; only --mode flow shares the network)");
      std::ostringstream details;
      if (k < workloads.size() && operators(k)) {
        write_op_kind_table(details, workloads[k], results[k]);
        write_op_table(details, workloads[k], results[k]);
      }
      write_text_summary(out, results[k], details.str());
    }
  };

  std::vector<std::string> devices;
  for (const Result& r : results)
    devices.push_back(r.device);
  const Provenance provenance = run_provenance(&cluster, devices);
  if (!a.csv.empty()) write_file(a.csv, [&](std::ostream& out) { write_table(out, 0); });
  if (!simai_csv.empty())
    write_file(simai_csv, [&](std::ostream& out) {
      simai::write_end_to_end_csv(out, *simai_report, a.run_name);
    });
  if (!a.output_dir.empty()) {
    const std::filesystem::path dir(a.output_dir);
    ensure_output_directory(dir);
    write_file(dir / "result.json",
               [&](std::ostream& out) { write_json(out, results, &provenance); });
    write_file(dir / "summary.txt", write_summary);
    if (simai_report) {
      const std::string prefix = std::filesystem::path(run_name).filename().string();
      write_file(dir / (prefix + "EndToEnd.csv"), [&](std::ostream& out) {
        simai::write_end_to_end_csv(out, *simai_report, run_name);
      });
    } else {
      for (size_t k = 0; k < results.size(); ++k) {
        const std::string table = operators(k) ? "ops" : "layers";
        write_file(
            dir / (several ? table + "-" + std::to_string(k + 1) + "-" + workloads[k].name + ".csv"
                           : table + ".csv"),
            [&](std::ostream& out) { write_table(out, k); });
      }
    }
  }
  write_visual_outputs(a.visual, a.output_dir, results,
                       report_inputs(a, mode, cluster.cluster.name));
  if (a.json)
    write_json(std::cout, results, &provenance);
  else if (a.csv != "-")  // --csv - takes standard output
    write_summary(std::cout);
  return 0;
}

}  // namespace

std::function<int()> add_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd =
      app.add_subcommand("simulate", "Simulate one training iteration of a workload on a cluster");
  cmd->footer(
      "Examples:\n"
      "  orrery simulate examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt --cluster dgx-a100\n"
      "  orrery simulate W.txt --mode analytical --compat simai --csv EndToEnd.csv\n"
      "  orrery simulate W.txt --json\n"
      "  orrery simulate examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt --csv configs.csv\n"
      "  orrery simulate examples/torchviz/moe_qformer_b4_s45.dot --cluster dgx-a100 --dp 8\n"
      "  orrery simulate examples/neusight/gpt2_large_block_b16_s1024.txt --layers 36 --dp 4\n"
      "  orrery simulate examples/chakra/all_reduce_8npus_1MB --cluster "
      "examples/chakra/ring_8npus.yaml\n\n"
      "SimAI's own flag spellings are accepted too: -g, -nv, -nic, -n_p_s, -g_p_s, -dp_o, -tp_o,\n"
      "-ep_o, -pp_o, -r. Exit status: 0 success, 2 bad input or flags.");
  cmd->add_option("workloads", args->workloads,
                  "Workload file; several share one cluster (in flow mode, one network: job k on "
                  "the GPUs after job k-1's). Or --model with a parallel plan");
  std::vector<CLI::Option*> plan_flags = add_plan_options(*cmd, args->model, args->plan);
  std::vector<std::string> formats;
  for (const auto name : workload_format_names())
    formats.emplace_back(name);
  cmd->add_option("--format", args->format,
                  "Workload format, detected from the content if omitted: " +
                      CLI::detail::join(formats, ", "))
      ->check(CLI::IsMember(formats));
  add_cluster_options(*cmd, args->cluster,
                      "Cluster preset name (see `orrery presets`) or YAML file (default: "
                      "hgx-h100; simai-default with --compat simai or SimAI's -w)",
                      true);
  cmd->add_option(
         "-g,--gpus", args->gpus,
         "World size (GPUs); default: the workload's all_gpus (--model: tp x pp x cp, dp 1)")
      ->check(integer_in(1, kMaxWorldSize));
  cmd->add_option("--mode", args->mode,
                  "event: discrete-event simulation with real pipeline schedules, one rank per "
                  "stage (the default); flow: every rank explicit, collectives as flows sharing "
                  "links max-min fairly; analytical: closed form (the default with --compat). "
                  "DFModel files: DFModel's model by default; event and flow simulate the "
                  "converted workload")
      ->check(CLI::IsMember({"event", "flow", "analytical"}));
  cmd->add_option("--compat", args->compat,
                  "Reproduce a peer's numbers exactly: simai (SimAI 1.7 SimAI_analytical; implies "
                  "--mode analytical)")
      ->check(CLI::IsMember({"simai"}));
  cmd->add_option(
         "--schedule", args->schedule,
         "Pipeline schedule: auto (interleaved if vpp > 1, else 1f1b), gpipe, 1f1b, interleaved")
      ->check(CLI::IsMember({"auto", "gpipe", "1f1b", "interleaved"}))
      ->capture_default_str();
  cmd->add_flag("--no-overlap", args->no_overlap,
                "Every collective blocks compute: no gradient-reduction overlap with the backward "
                "pass, no input-gradient collective behind weight-gradient compute");
  std::vector<std::string> algorithms = {"auto"};
  for (const Algorithm a : all_algorithms())
    algorithms.emplace_back(to_string(a));
  cmd->add_option("--algo", args->algorithm,
                  "Collective algorithm: auto (the fastest for each collective, as NCCL's tuner "
                  "picks), or force one of: " +
                      CLI::detail::join(algorithms, ", ") +
                      " (where it cannot run, the fastest that can; flow mode has no tree)")
      ->check(CLI::IsMember(algorithms))
      ->capture_default_str();
  cmd->add_option("--dp-overlap", args->dp_overlap,
                  "SimAI mode: fraction of data-parallel comm hidden (default 0)")
      ->check(number_in(0, 1));
  cmd->add_option("--tp-overlap", args->tp_overlap,
                  "SimAI mode: fraction of tensor-parallel comm hidden (default 0)")
      ->check(number_in(0, 1));
  cmd->add_option("--ep-overlap", args->ep_overlap,
                  "SimAI mode: fraction of expert-parallel comm hidden (default 0)")
      ->check(number_in(0, 1));
  cmd->add_option("--pp-overlap", args->pp_overlap,
                  "SimAI mode: SimAI's PP-comm ratio (default 1, which makes it 0)")
      ->check(number_in(0, 1));
  cmd->add_option("--run-name", args->run_name,
                  "SimAI mode: the 'File name' column of EndToEnd.csv (default: workload name + "
                  "'-'); with SimAI's -w invocation, -r PREFIX also writes PREFIXEndToEnd.csv");
  cmd->add_flag("--simai-invocation", args->simai_invocation,
                "Set by SimAI's `-w FILE`: SimAI-compatible analytical mode, SimAI's defaults "
                "and outputs (EndToEnd.csv only where -r says)")
      ->group("");
  cmd->add_option("--busbw", args->busbw,
                  "SimAI mode (SimAI's -busbw): a busbw.yaml giving the bus bandwidth of each "
                  "group's collectives (docs/simai-compat.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--device", args->device,
                  "Device that prices compute given as FLOPs and bytes (torchviz graphs): a preset "
                  "(see `orrery presets`) or a YAML file; default: the cluster's gpu")
      ->check(not_empty("a preset name or a YAML file"));
  cmd->add_option("--dp", args->dp,
                  "Data-parallel degree (world size = dp x tp x pp); for workloads that do not "
                  "give their GPU count (torchviz, neusight) the default is one server")
      ->check(integer_in(1, kMaxWorldSize));
  cmd->add_option("--ep", args->ep,
                  "Expert-parallel degree: with --model, experts spread over this many "
                  "data-parallel ranks; torchviz: shard experts.<k> parameters over as many")
      ->check(integer_in(1, kMaxWorldSize));
  cmd->add_option("--graph-config", args->graph_config,
                  "torchviz: YAML with what the graph lacks (batch, text_tokens, external_tokens, "
                  "heads, beams, dtype, bucket_size, optimizer)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--comm-groups", args->comm_groups,
                  "chakra: process-group JSON {\"id\": [ranks...]} (default: comm_group.json "
                  "beside the traces)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--layers", args->layers,
                  "neusight: transformer blocks of the model (the table lists one)")
      ->check(integer_in(1, 10000));
  cmd->add_option("--backward-ratio", args->backward_ratio,
                  "neusight: backward / forward time when the table has no backward (default 2)")
      ->check(number_in(0, 100, true));
  cmd->add_option("--comm-dtype", args->comm_dtype,
                  "neusight: element type of communication sizes (default fp32)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16", "fp8", "fp64"}));
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the summary");
  cmd->add_option("--csv", args->csv,
                  "Write the per-layer table here (per-operator for torchviz and neusight; in "
                  "SimAI mode: SimAI's EndToEnd.csv layout)")
      ->check(not_empty("a file to write"));
  cmd->add_option("-o,--output-dir", args->output_dir,
                  "Write result.json, summary.txt and the per-layer (layers.csv) or per-operator "
                  "(ops.csv) CSV into this directory")
      ->check(not_empty("a directory to write into"));
  add_dataflow_options(*cmd, args->dataflow);
  cmd->add_option("--rank-by", args->rank_by,
                  "DFModel search: the mode that picks the answer, analytical (DFModel's closed "
                  "form) or event (the fastest in event mode of the best --recheck by the closed "
                  "form)")
      ->check(CLI::IsMember({"analytical", "event"}))
      ->capture_default_str()
      ->group("DFModel files");
  cmd->add_option("--recheck", args->recheck,
                  fmt::format("DFModel search: best mappings by the closed form also simulated in "
                              "event mode (default: {} with --rank-by event, else 0)",
                              kDefaultRecheck))
      ->check(integer_in(0, 1000))
      ->group("DFModel files");
  add_visual_options(*cmd, args->visual);
  return [args, cmd, plan_flags]() {
    note_given_plan_flags(plan_flags, args->plan);
    const auto given = [&](const char* flag) { return cmd->get_option(flag)->count() > 0; };
    for (const char* flag : {"--execution", "--allreduce-factor", "--staging-buffers", "--top",
                             "--threads", "--time-limit", "--rank-by", "--recheck"})
      if (given(flag)) args->dataflow_flags.emplace_back(flag);
    for (const char* flag :
         {"--layers", "--backward-ratio", "--comm-dtype", "--graph-config", "--dp", "--ep",
          "--device", "--dp-overlap", "--tp-overlap", "--ep-overlap", "--pp-overlap", "--run-name",
          "--busbw", "--comm-groups"})
      if (given(flag)) args->reader_flags.emplace_back(flag);
    if (args->workloads.empty() && args->model.empty())
      throw InputError(
          "expected a workload file or --model NAME|FILE (see orrery simulate --help)");
    return run_simulate(*args);
  };
}

}  // namespace orrery
