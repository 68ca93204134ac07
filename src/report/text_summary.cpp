#include "report/text_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace orrery {

std::string format_duration(Time t) {
  const int64_t ps = t.ps() < 0 ? -t.ps() : t.ps();
  if (ps == 0) return "0 s";
  static constexpr std::pair<int64_t, const char*> kUnits[] = {
      {1'000'000'000'000, "s"}, {1'000'000'000, "ms"}, {1'000'000, "us"}, {1'000, "ns"}};
  for (const auto& [scale, unit] : kUnits) {
    if (ps < scale && scale != 1'000) continue;
    const double v = static_cast<double>(t.ps()) / static_cast<double>(scale);
    const double a = v < 0 ? -v : v;
    return fmt::format("{:.{}f} {}", v, a >= 100 ? 1 : a >= 10 ? 2 : 3, unit);
  }
  return "0 s";
}

namespace {

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:.2f} MB", bytes / 1e6);
  return fmt::format("{:.0f} B", bytes);
}

// "116", "9999", "242.4 M", "1.3 B": a count of parameters.
std::string format_count(int64_t n) {
  const auto v = static_cast<double>(n);
  if (n < 10'000) return std::to_string(n);
  if (n < 1'000'000'000) return fmt::format("{:.4g} M", v / 1e6);
  return fmt::format("{:.4g} B", v / 1e9);
}

// "1024 FLOP", "91.21 GFLOP", "1.3 TFLOP".
std::string format_flop(double flop) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kPrefixes)
    if (flop >= scale) return fmt::format("{:.4g} {}FLOP", flop / scale, prefix);
  return fmt::format("{:.4g} FLOP", flop);
}

std::string share(Time part, Time total) {
  return total > Time::zero() ? fmt::format("{:6.2f} %", 100.0 * (part / total)) : "";
}

void write_training(std::ostream& out, const TrainingFigures& f) {
  out << fmt::format(
      "\n  throughput {:.4g} tokens/s; per GPU {:.1f} TFLOP/s model (MFU {:.1f} %), "
      "{:.1f} TFLOP/s hardware (HFU {:.1f} %) of {:.0f} {} peak\n",
      f.tokens_per_s, f.model_tflops_per_gpu, 100 * f.mfu, f.hardware_tflops_per_gpu, 100 * f.hfu,
      f.peak_tflops_per_gpu, f.dtype);
  if (f.slowest_gpu_pace < 1)
    out << fmt::format(
        "  pace       the slowest of {} GPUs: {:.1f} % of a typical GPU's matrix rate (spread "
        "{:.1f} %)\n",
        f.gpus, 100 * f.slowest_gpu_pace, 100 * f.rate_spread);
  out << fmt::format("  validated  {}\n", f.error_band);
  if (f.train_tokens && f.time_to_train_s) {
    out << fmt::format(
        "  to train on {:.3g} tokens (ideal: no failures or checkpoints): {:.1f} "
        "days, {:.4g} GPU-hours",
        *f.train_tokens, *f.time_to_train_s / 86400, *f.gpu_hours);
    if (f.cost_usd) out << fmt::format(", ${:.4g}", *f.cost_usd);
    if (f.energy_j) out << fmt::format(", {:.4g} MWh", *f.energy_j / 3.6e9);
    out << "\n";
  }
}

void write_memory(std::ostream& out, const MemoryEstimate& m) {
  const StageMemory* peak = nullptr;
  for (const StageMemory& s : m.stages)
    if (!peak || s.peak_bytes() > peak->peak_bytes()) peak = &s;
  if (!peak) return;
  out << fmt::format(
      "  memory     stage {} peaks at {} of {} ({}): weights {}, gradients {}, optimizer {}, "
      "activations {}, logits {}\n",
      peak->stage, format_bytes(peak->peak_bytes()), format_bytes(m.capacity_bytes),
      m.fits() ? "fits" : "does not fit", format_bytes(peak->weights_bytes),
      format_bytes(peak->gradients_bytes), format_bytes(peak->optimizer_bytes),
      format_bytes(peak->activations_bytes), format_bytes(peak->logits_bytes));
}

}  // namespace

void write_text_summary(std::ostream& out, const Result& r, std::string_view details) {
  const Parallelism& p = r.parallelism;
  out << fmt::format("Orrery {} simulation{}\n", r.mode,
                     r.schedule.empty() ? "" : ", " + r.schedule + " pipeline schedule");
  out << fmt::format("  workload   {}\n", r.workload);
  out << fmt::format(
      "  parallel   TP {} x {}PP {} x DP {} ({} GPU{}), EP {}, VPP {}, {} micro-batch{}\n", p.tp,
      p.cp > 1 ? fmt::format("CP {} x ", p.cp) : "", p.pp, p.dp(), p.world_size,
      p.world_size == 1 ? "" : "s", p.ep, p.vpp, p.micro_batches, p.micro_batches == 1 ? "" : "es");
  if (!r.cluster.empty()) out << fmt::format("  cluster    {}\n", r.cluster);
  if (!r.device.empty()) out << fmt::format("  device     {}\n", r.device);
  if (!r.compute_source.empty()) out << fmt::format("  compute    {}\n", r.compute_source);
  if (r.model) {
    out << fmt::format("  model      {} parameter{}", format_count(r.model->parameters),
                       r.model->parameters == 1 ? "" : "s");
    if (r.model->layers > 0)
      out << fmt::format(", {} layer{}", r.model->layers, r.model->layers == 1 ? "" : "s");
    if (r.model->forward_flop)
      out << fmt::format(", {} per forward pass", format_flop(*r.model->forward_flop));
    out << "\n";
  }
  out << "\n";

  const Breakdown& b = r.breakdown;
  const Time total = r.iteration_time;
  const auto line = [&](const std::string& label, Time t) {
    out << fmt::format("  {:<26}{:>12}  {}\n", label, format_duration(t), share(t, total));
  };
  out << fmt::format("  {:<26}{:>12}\n", "iteration time", format_duration(total));
  line("  compute", b.compute);
  for (const auto& [group, time] : b.exposed_comm)
    if (time > Time::zero()) line(fmt::format("  exposed {} comm", to_string(group)), time);
  if (b.bubble > Time::zero() || p.pp > 1) line("  pipeline bubble", b.bubble);
  if (b.p2p > Time::zero()) line("  stage-to-stage transfers", b.p2p);

  if (r.stages.size() > 1) {
    const auto busy = [&](const StageTiming& s) { return s.breakdown.compute / total; };
    const auto [lo, hi] = std::minmax_element(
        r.stages.begin(), r.stages.end(),
        [&](const StageTiming& a, const StageTiming& c) { return busy(a) < busy(c); });
    out << fmt::format(
        "\n  critical stage {} of {}; compute busy {:.1f} % at least (stage {}), {:.1f} % at most "
        "(stage {})\n",
        r.critical_stage, r.stages.size(), 100 * busy(*lo), lo->stage, 100 * busy(*hi), hi->stage);
  }
  if (r.training) write_training(out, *r.training);
  if (r.memory) write_memory(out, *r.memory);
  if (r.peer) {
    out << fmt::format("\n  {} figures:\n", r.peer->peer);
    for (const auto& [name, value] : r.peer->values)
      out << fmt::format("    {:<20}{:>14.0f}\n", name, value);
  }
  if (!r.hottest_links.empty()) {
    out << "\n  busiest links (bytes carried, time busy, peak utilisation):\n";
    for (size_t i = 0; i < r.hottest_links.size() && i < 5; ++i) {
      const LinkUsage& l = r.hottest_links[i];
      out << fmt::format("    {:<40}{:>12}{:>12}{:>8.0f} %\n", l.name, format_bytes(l.bytes),
                         format_duration(l.busy), 100 * l.peak_utilization);
    }
  }
  if (r.simulated_tasks > 0)
    out << fmt::format("\n  {} tasks simulated{}\n", r.simulated_tasks,
                       r.flows > 0 ? fmt::format(", {} flows", r.flows) : std::string());
  out << details;
  if (!r.warnings.empty()) {
    out << fmt::format("\nwarnings ({}):\n", r.warnings.size());
    for (const Warning& w : r.warnings)
      out << "  " << w.to_string() << "\n";
  }
}

}  // namespace orrery
