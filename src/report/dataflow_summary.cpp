#include "report/dataflow_summary.h"

#include <fmt/format.h>

#include <ostream>

#include "report/text_summary.h"

namespace orrery {
namespace {

// 76628480 -> "76,628,480".
std::string grouped(double value) {
  const std::string digits = fmt::format("{:.0f}", value);
  std::string out;
  const size_t lead = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > lead && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The search's best mappings, one row each; with an event-mode re-check, a column of the event
// simulator's time beside DFModel's ("-" for a mapping not re-checked).
void write_alternatives(std::ostream& out, const DataflowFigures& f) {
  const bool event = !f.ranked_by.empty();
  out << fmt::format("  {:<4}{:<16}{:<16}{:>5}{:>6}{:>6}{:>7}{:>7}  {:<18}{:>12}", "#", "shape",
                     "parallelism", "TP", "PP", "DP", "batch", "tile", "execution",
                     event ? "DFModel" : "time");
  out << (event ? fmt::format("{:>12}\n", "event") : "\n");
  for (size_t i = 0; i < f.alternatives.size(); ++i) {
    const DataflowMappingRow& a = f.alternatives[i];
    out << fmt::format("  {:<4}{:<16}{:<16}{:>5}{:>6}{:>6}{:>7}{:>7}  {:<18}{:>12}", i + 1, a.shape,
                       a.roles, a.tp, a.pp, a.dp, a.micro_batch, a.tile_size, a.execution,
                       format_duration(a.iteration_time));
    if (event) out << fmt::format("{:>12}", a.event_time ? format_duration(*a.event_time) : "-");
    out << "\n";
  }
}

}  // namespace

void write_dataflow_summary(std::ostream& out, const Result& r) {
  const DataflowFigures& f = *r.dataflow;
  const Parallelism& p = r.parallelism;
  out << fmt::format("Orrery {}\n", r.mode);
  out << fmt::format("  workload   {}\n", r.workload);
  out << fmt::format("  system     {}\n", f.system);
  out << fmt::format(
      "  parallel   TP {} x PP {} x DP {} ({} chips), {} micro-batches per "
      "pipeline\n",
      p.tp, p.pp, p.dp(), p.world_size, p.micro_batches);
  out << fmt::format("  mapping    {}\n\n", f.mapping);

  const Breakdown& b = r.breakdown;
  const Time total = r.iteration_time;
  const auto line = [&](const std::string& label, Time t) {
    out << fmt::format("  {:<28}{:>12}  {:6.2f} %\n", label, format_duration(t),
                       total > Time::zero() ? 100.0 * (t / total) : 0.0);
  };
  out << fmt::format("  {:<28}{:>12}\n", "time per iteration", format_duration(total));
  line("  compute and memory", b.compute);
  for (const auto& [group, time] : b.exposed_comm)
    if (time > Time::zero()) line(fmt::format("  exposed {} comm", to_string(group)), time);
  if (b.bubble > Time::zero()) line("  pipeline bubble", b.bubble);
  if (b.p2p > Time::zero()) line("  stage-to-stage transfers", b.p2p);
  out << "\n";
  out << fmt::format("  {:<28}{:>16} tokens/s\n", "throughput", grouped(f.tokens_per_second));
  out << fmt::format("  {:<28}{:>16.2f} %   ({:.4g} FLOP per iteration)\n", "FLOPS utilization",
                     100 * f.utilization, f.flop);
  out << fmt::format("  {:<28}{:>16} $\n", "system cost", grouped(f.cost_usd));
  out << fmt::format("  {:<28}{:>16} W\n", "system power", grouped(f.power_w));

  if (r.peer) {
    out << fmt::format("\n  {} figures:\n", r.peer->peer);
    for (const auto& [name, value] : r.peer->values)
      out << fmt::format("    {:<30}{}\n", name, value);
  }
  out << fmt::format("\n  search: {}\n", f.search);
  if (f.alternatives.size() > 1 || !f.ranked_by.empty()) write_alternatives(out, f);
  out << fmt::format("\n  {} configurations; per-configuration times: --csv FILE\n",
                     f.configs.size());
  if (!r.warnings.empty()) {
    out << fmt::format("\nwarnings ({}):\n", r.warnings.size());
    for (const Warning& w : r.warnings)
      out << "  " << w.to_string() << "\n";
  }
}

}  // namespace orrery
