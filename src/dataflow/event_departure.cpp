#include "dataflow/event_departure.h"

#include <cmath>

#include <fmt/format.h>

#include "dataflow/cost_terms.h"

namespace orrery {
namespace {

std::string_view overlap_name(OverlapStyle o) {
  return o == OverlapStyle::Perfect ? "perfect overlap" : "compute-memory overlap";
}

// Samples per replica times layers per stage: what turns one sample of one layer (DFModel's
// per-configuration unit) into an iteration, before the pipeline factor.
double iteration_scale(const Evaluation& ev) {
  return static_cast<double>(ev.pipeline.layers_per_stage) * ev.pipeline.samples_per_replica;
}

// Tensor-parallel collective time per iteration that overlap hides in DFModel's II (ns).
double hidden_tensor_ns(const Evaluation& ev) {
  double total = 0;
  for (const ConfigEvaluation& c : ev.configs)
    total += c.timing.tp_network_ns;
  return std::max(0.0, total * iteration_scale(ev) - ev.tp_comm_ns);
}

std::string bubble_reason(const Evaluation& ev) {
  const int64_t layers = ev.pipeline.layers_per_stage;
  if (layers >= 3)
    return fmt::format(
        "DFModel's pipeline factor divides the bubble by L_s - 1 = {} ({} layers per stage), "
        "while a 1F1B schedule idles PP - 1 = {} times a whole stage's work",
        layers - 1, layers, ev.mapping.pp - 1);
  return fmt::format(
      "DFModel's bubble is (PP - 1) / n_mb = {} / {} of II; the schedule's fill and drain also "
      "wait for stage-to-stage transfers and exposed collectives",
      ev.mapping.pp - 1, ev.pipeline.micro_batches);
}

}  // namespace

std::vector<std::string> expected_event_departures(const DataflowProblem& problem,
                                                   const Evaluation& ev) {
  std::vector<std::string> out;
  const double final_s = ev.final_ns / 1e9;
  const int64_t layers = ev.pipeline.layers_per_stage;
  if (ev.mapping.pp > 1 && layers >= 3) {
    const double bubble_s = ev.bubble_ns / 1e9;
    const double schedule_s = bubble_s * static_cast<double>(layers - 1);
    if (schedule_s - bubble_s > 0.01 * final_s)
      out.push_back(fmt::format(
          "the event simulator's pipeline bubble will be about {} times DFModel's: DFModel's "
          "pipeline factor divides the bubble by L_s - 1 = {} ({} layers per stage), {:.3g} s, "
          "while a pipeline schedule idles PP - 1 = {} times a whole stage's work, about {:.3g} s "
          "at DFModel's II (DFModel's iteration: {:.4g} s)",
          layers - 1, layers - 1, layers, bubble_s, ev.mapping.pp - 1, schedule_s, final_s));
  }
  if (problem.run.overlap != OverlapStyle::None) {
    const double hidden_s = hidden_tensor_ns(ev) / 1e9;
    if (hidden_s > 0.01 * final_s)
      out.push_back(fmt::format(
          "with {} DFModel hides {:.3g} s of tensor-parallel collectives per iteration under "
          "compute (II_c = max(C, M, N)); the event simulator runs each phase's collective after "
          "its compute, so its answer will be longer (DFModel's iteration: {:.4g} s)",
          overlap_name(problem.run.overlap), hidden_s, final_s));
  }
  return out;
}

std::optional<std::string> event_departure(const DataflowProblem& problem, const Evaluation& ev,
                                           const Result& event) {
  const double dfmodel_s = ev.final_ns / 1e9;
  const double event_s = event.iteration_time.seconds();
  const double departure = (event_s - dfmodel_s) / dfmodel_s;
  if (!(std::fabs(departure) > kMaterialDeparture)) return std::nullopt;

  const Breakdown& b = event.breakdown;
  const auto group = [&](CommGroup g) {
    const auto it = b.exposed_comm.find(g);
    return it == b.exposed_comm.end() ? 0.0 : it->second.seconds();
  };
  const LlmShape& llm = *problem.run.llm;
  const double boundary_bytes = static_cast<double>(llm.hidden) * static_cast<double>(llm.seq_len) *
                                static_cast<double>(problem.run.word_bytes) *
                                static_cast<double>(ev.mapping.micro_batch);
  const RoleLink pp_link = role_link(problem.system, ev.mapping, ParallelRole::Pipeline);

  struct Part {
    const char* name;
    double event_s, dfmodel_s;
    std::string why;
  };
  const std::vector<Part> parts = {
      {"pipeline bubble", b.bubble.seconds(), ev.bubble_ns / 1e9, bubble_reason(ev)},
      {"tensor-parallel collectives", group(CommGroup::Tensor), ev.tp_comm_ns / 1e9,
       problem.run.overlap != OverlapStyle::None
           ? fmt::format("with {} DFModel hides them under compute (II_c = max(C, M, N)), the "
                         "event simulator runs each phase's collective after its compute",
                         overlap_name(problem.run.overlap))
           : std::string("the event simulator prices them with its network model, DFModel "
                         "with its per-byte ratios")},
      {"data-parallel all-reduce", group(CommGroup::Data) + group(CommGroup::ExpertData),
       ev.dp_comm_ns / 1e9,
       "DFModel prices it per sample inside II (so the pipeline factor scales it), the event "
       "simulator once per iteration, bucketed behind the last backward pass"},
      {"stage-to-stage transfers", b.p2p.seconds() + group(CommGroup::Pipeline),
       ev.pipeline.p2p_ns / 1e9,
       pp_link.gbps > 0
           ? fmt::format("DFModel adds 2 h S w L / beta once per iteration, the event simulator "
                         "sends h S w b = {:.4g} bytes each way per micro-batch ({:.3g} ms at "
                         "{:g} GB/s) and counts the waits its schedule exposes",
                         boundary_bytes, boundary_bytes / pp_link.gbps / 1e6, pp_link.gbps)
           : std::string("DFModel adds 2 h S w L / beta once per iteration, the event simulator "
                         "sends each micro-batch's activations and gradients")},
      {"compute and memory", b.compute.seconds(), ev.compute_ns / 1e9,
       "the event rows carry each configuration's compute and memory time per micro-batch, "
       "DFModel's share is II minus its exposed collectives"},
  };
  std::string reasons;
  for (const Part& p : parts) {
    if (!(std::fabs(p.event_s - p.dfmodel_s) > 0.01 * dfmodel_s)) continue;
    reasons += fmt::format("{}{} {:.4g} s against DFModel's {:.4g} s: {}",
                           reasons.empty() ? "" : "; ", p.name, p.event_s, p.dfmodel_s, p.why);
  }
  return fmt::format(
      "the event simulation departs from DFModel's formula by {:+.1f} % ({:.4g} s against "
      "{:.4g} s per iteration){}{}; DFModel's own answer is `orrery simulate` without --mode "
      "(docs/dfmodel.md, section 5)",
      100 * departure, event_s, dfmodel_s, reasons.empty() ? "" : ": ", reasons);
}

}  // namespace orrery
