// `orrery convert FILE --to workload`: a DFModel dataflow problem (evaluated or searched as
// `orrery simulate` would) written as Orrery's training IR in its text form (SimAI/AICB
// layer-wise text), and optionally the equivalent two-tier cluster as YAML, so that
// `orrery simulate OUT.txt --cluster CLUSTER.yaml` runs it in the event simulator.
// `orrery convert --model M (plan flags) --to simai`: the iteration generated from a model
// description, priced on the cluster's GPU, written as SimAI/AICB text (what the format cannot
// hold is named in warnings; models/aicb_export.h).
// `orrery convert (FILE | --model M plan...) --to chakra -o DIR`: any workload the event mode runs,
// as Chakra execution traces, one file per rank and the process groups (docs/chakra.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/dataflow_options.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "cli/plan_options.h"
#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "dataflow/event_departure.h"
#include "dataflow/workload_conversion.h"
#include "formats/chakra_et_writer.h"
#include "formats/simai_text_writer.h"
#include "formats/workload_reader.h"
#include "models/aicb_export.h"
#include "scenario/scenario.h"
#include "workload/parallelism.h"

namespace orrery {
namespace {

struct ConvertArgs {
  std::string input;
  std::string model;
  PlanArgs plan;
  std::string cluster = kModelCluster;
  std::string device;
  std::optional<int64_t> gpus, ep;
  std::string to = "workload";
  std::string output;
  std::string cluster_output;
  DataflowArgs dataflow;
};

void write_cluster_yaml(std::ostream& out, const EquivalentNetwork& n, const std::string& name,
                        const std::string& source) {
  out << fmt::format(
      "# Two-tier equivalent of the DFModel system of {} (docs/dfmodel.md): a server is the\n"
      "# tensor-parallel group; every chip has one NIC at the data-parallel dimension's link\n"
      "# bandwidth (the pipeline dimension's when there is no data parallelism).\n"
      "name: {}\n"
      "description: two-tier equivalent of a DFModel system\n"
      "gpu: dataflow chip\n"
      "network:\n"
      "  - name: TP dimension\n"
      "    kind: switch\n"
      "    size: {}\n"
      "    bandwidth: {} GB/s\n"
      "  - name: DP/PP dimension\n"
      "    kind: fat-tree\n"
      "    size: 0\n"
      "    rails: {}\n"
      "    bandwidth: {} GB/s\n"
      "placement: [tp, ep, dp, pp]\n",
      source, name, n.chips_per_server, n.scale_up_gbps, n.chips_per_server, n.scale_out_gbps);
  for (const std::string& caveat : n.caveats)
    out << "# approximate: " << caveat << "\n";
}

// The model's generated iteration as SimAI/AICB text.
int convert_model(const ConvertArgs& a) {
  if (!a.input.empty())
    throw InputError("--model replaces the DFModel input file; give one or the other");
  if (a.to != "simai" && a.to != "workload")
    throw InputError("--to " + a.to + ": a model converts to simai");
  if (!a.cluster_output.empty())
    throw InputError("--cluster-out applies to DFModel input (the model runs on --cluster)");
  for (const std::string* input : {&a.cluster, &a.device, &a.model})
    protect_input_file(*input);
  check_distinct_outputs({{"-o", a.output == "-" ? "" : a.output}});
  PlanNotes notes;
  const auto model = model_scenario(a.model, a.plan, a.ep, a.gpus, notes);
  for (const std::string& w : notes.warnings)
    std::cerr << "orrery: warning: " << w << "\n";
  const PricedModel priced = priced_model(*model, load_cluster(a.cluster), a.device);
  const AicbExport exported = aicb_workload(priced.training.workload);
  const auto workload = [&](std::ostream& out) {
    try {
      write_simai_text(out, exported.workload);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("--to simai: ") + e.what());
    }
  };
  if (a.output.empty() || a.output == "-")
    workload(std::cout);
  else
    write_file(a.output, workload);
  for (const std::string& lost : exported.lost)
    std::cerr << "orrery: warning: SimAI text cannot hold " << lost << "\n";
  return 0;
}

// Every rank's task graph as Chakra traces in the directory -o.
int convert_to_chakra(const ConvertArgs& a) {
  if (a.output.empty() || a.output == "-")
    throw InputError("--to chakra: expected -o DIR, the directory for the trace files");
  if (!a.cluster_output.empty())
    throw InputError("--cluster-out applies to DFModel input (the workload runs on --cluster)");
  if (a.plan.given && a.model.empty())
    throw InputError(a.plan.given_flag + " describes a parallel plan for --model");
  Scenario s;
  if (!a.model.empty()) {
    if (!a.input.empty())
      throw InputError("--model replaces the workload file; give one or the other");
    PlanNotes notes;
    s.model = model_scenario(a.model, a.plan, a.ep, a.gpus, notes);
    for (const std::string& w : notes.warnings)
      std::cerr << "orrery: warning: " << w << "\n";
    if (notes.overlap) s.options.overlap = *notes.overlap;
    if (a.plan.tp_comm_overlap)
      std::cerr << "orrery: warning: --tp-comm-overlap: each tensor-parallel collective run "
                   "beside its GEMM is written inside that GEMM's compute node (its time "
                   "included), not as a communication node of its own\n";
  } else {
    if (a.input.empty())
      throw InputError("expected a workload file or --model NAME|FILE to convert");
    s.workload_files = {a.input};
    s.gpus = a.gpus;
    s.reader_ep = a.ep;
  }
  s.cluster = load_cluster(a.cluster);
  s.device = a.device;
  Diagnostics diagnostics;
  const ExportedGraph exported = export_graph(s, diagnostics);
  write_chakra_traces(exported.graph, a.output, exported.name);
  for (const Warning& w : diagnostics.warnings())
    std::cerr << "orrery: warning: " << w.to_string() << "\n";
  return 0;
}

int run_convert(const ConvertArgs& a) {
  if (a.to == "chakra") return convert_to_chakra(a);
  if (!a.model.empty()) return convert_model(a);
  if (a.input.empty()) throw InputError("expected a DFModel file or --model NAME|FILE to convert");
  if (a.plan.given) throw InputError(a.plan.given_flag + " describes a parallel plan for --model");
  if (a.to == "simai")
    throw InputError("--to simai: a DFModel file converts to workload (SimAI text already)");
  Diagnostics diagnostics;
  protect_input_file(a.input);
  check_distinct_outputs(
      {{"-o", a.output == "-" ? "" : a.output}, {"--cluster-out", a.cluster_output}});
  const std::string content = read_workload_content(a.input);
  if (detect_workload_format(content) != WorkloadFormat::Dfmodel)
    throw InputError({a.input, 1}, "expected a DFModel file (protobuf text or binary) to convert");
  const SolvedDataflow solved = solve_dataflow_file(a.input, content, a.dataflow, diagnostics);
  const ConvertedWorkload converted =
      to_workload(solved.problem, solved.graph, solved.outcome.sharding, solved.outcome.best);
  for (const std::string& departure :
       expected_event_departures(solved.problem, solved.outcome.best))
    diagnostics.warn({a.input, 0}, departure);
  const auto workload = [&](std::ostream& out) { write_simai_text(out, converted.workload); };
  if (a.output.empty() || a.output == "-")
    workload(std::cout);
  else
    write_file(a.output, workload);
  if (!a.cluster_output.empty())
    write_file(a.cluster_output, [&](std::ostream& out) {
      write_cluster_yaml(out, converted.network, solved.problem.name + "-equivalent", a.input);
    });
  for (const Warning& w : diagnostics.warnings())
    std::cerr << "orrery: warning: " << w.to_string() << "\n";
  return 0;
}

}  // namespace

std::function<int()> add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a DFModel dataflow problem into Orrery's training workload (IR), or any workload "
      "into Chakra execution traces");
  cmd->footer(
      "Example:\n"
      "  orrery convert examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt --to workload \\\n"
      "      -o gpt1t.txt --cluster-out gpt1t-cluster.yaml\n"
      "  orrery simulate gpt1t.txt --cluster gpt1t-cluster.yaml\n\n"
      "  orrery convert --model gpt3-1.3b --gpus 8 --tp 2 --gbs 16 --to simai -o gpt3.txt\n\n"
      "  orrery convert examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt --cluster dgx-a100 \\\n"
      "      --to chakra -o gpt-chakra/\n"
      "  orrery simulate gpt-chakra/ --cluster dgx-a100\n\n"
      "The workload is written as SimAI/AICB layer-wise text (the IR's text form); see\n"
      "docs/dfmodel.md for how its event-mode answer relates to DFModel's, and docs/models.md\n"
      "for what a model's file keeps.");
  cmd->add_option("input", args->input,
                  "DFModel file (dse.txt, dse_final.txt or .pb); with --to chakra, any workload "
                  "file");
  cmd->add_option("--to", args->to,
                  "What to produce: workload (Orrery's training IR as SimAI text), simai "
                  "(the same, for --model), or chakra (Chakra ET traces of every rank, in -o DIR, "
                  "priced on --cluster)")
      ->check(CLI::IsMember({"workload", "simai", "chakra"}))
      ->capture_default_str();
  std::vector<CLI::Option*> plan_flags = add_plan_options(*cmd, args->model, args->plan);
  cmd->add_option(
         "--cluster", args->cluster,
         "--model, --to chakra: the cluster that prices the workload (preset or YAML file)")
      ->check(not_empty("a preset name or a YAML file"))
      ->capture_default_str();
  cmd->add_option("--device", args->device, "--model: the device that prices compute instead")
      ->check(not_empty("a preset name or a YAML file"));
  cmd->add_option("-g,--gpus", args->gpus, "--model: GPUs (default tp x pp x cp)")
      ->check(integer_in(1, kMaxWorldSize));
  cmd->add_option("--ep", args->ep, "--model: expert-parallel degree")
      ->check(integer_in(1, kMaxWorldSize));
  cmd->add_option("-o,--output", args->output,
                  "Workload file to write (default: stdout); --to chakra: the directory")
      ->check(not_empty("a file or directory to write"));
  cmd->add_option("--cluster-out", args->cluster_output,
                  "Also write the equivalent two-tier cluster as YAML here")
      ->check(not_empty("a file to write"));
  add_dataflow_options(*cmd, args->dataflow);
  return [args, plan_flags]() {
    note_given_plan_flags(plan_flags, args->plan);
    return run_convert(*args);
  };
}

}  // namespace orrery
