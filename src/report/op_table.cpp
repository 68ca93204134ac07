#include "report/op_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "report/csv_field.h"

#include "report/text_summary.h"

namespace orrery {
namespace {

double flop_of(const Phase& phase) {
  double flop = 0;
  for (const ComputeDemand& k : phase.kernels)
    flop += k.flop;
  return flop;
}

Bytes bytes_of(const Phase& phase) {
  Bytes bytes = 0;
  for (const ComputeDemand& k : phase.kernels)
    bytes += k.bytes;
  return bytes;
}

// "91.0 G", "1.31 T": FLOP counts with an SI prefix.
std::string si(double value) {
  static constexpr std::pair<double, const char*> kPrefixes[] = {
      {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
  for (const auto& [scale, prefix] : kPrefixes)
    if (value >= scale) return fmt::format("{:.3g} {}", value / scale, prefix);
  return fmt::format("{:.3g} ", value);
}

}  // namespace

bool has_operator_rows(const Workload& workload) {
  return std::any_of(workload.program.layers.begin(), workload.program.layers.end(),
                     [](const Layer& l) { return !l.op.empty(); });
}

void write_op_csv(std::ostream& out, const Workload& workload, const Result& result) {
  out << "op,kind";
  for (const char* p : {"fwd", "ig", "wg"})
    out << fmt::format(",{0}_us,{0}_flop,{0}_bytes", p);
  out << ",comm,comm_group,comm_ranks,comm_bytes,comm_us\n";
  const auto& layers = workload.program.layers;
  for (size_t i = 0; i < layers.size() && i < result.layers.size(); ++i) {
    const Layer& layer = layers[i];
    const LayerTiming& timing = result.layers[i];
    out << csv_field(layer.name) << ',' << csv_field(layer.op);
    const std::pair<const Phase*, const PhaseTiming*> phases[] = {
        {&layer.forward, &timing.forward},
        {&layer.input_grad, &timing.input_grad},
        {&layer.weight_grad, &timing.weight_grad}};
    const CommTiming* comm = nullptr;
    for (const auto& [phase, t] : phases) {
      out << fmt::format(",{:.3f}", t->compute.microseconds());
      if (phase->kernels.empty())
        out << ",,";
      else
        out << fmt::format(",{:.0f},{}", flop_of(*phase), bytes_of(*phase));
      if (!comm && t->comm) comm = &*t->comm;
    }
    if (comm)
      out << fmt::format(",{},{},{},{},{:.3f}\n", to_string(comm->comm.kind),
                         to_string(comm->comm.group), comm->ranks, comm->comm.bytes,
                         comm->cost.microseconds());
    else
      out << ",,,,,\n";
  }
}

void write_op_kind_table(std::ostream& out, const Workload& workload, const Result& result) {
  struct Kind {
    int64_t count = 0;
    Time forward, backward;
    double forward_flop = 0;
  };
  std::map<std::string, Kind> kinds;
  Time total;
  const auto& layers = workload.program.layers;
  for (size_t i = 0; i < layers.size() && i < result.layers.size(); ++i) {
    const LayerTiming& t = result.layers[i];
    Kind& k = kinds[layers[i].op.empty() ? "(other)" : layers[i].op];
    ++k.count;
    k.forward += t.forward.compute;
    k.backward += t.input_grad.compute + t.weight_grad.compute;
    k.forward_flop += flop_of(layers[i].forward);
    total += t.forward.compute + t.input_grad.compute + t.weight_grad.compute;
  }
  std::vector<std::pair<std::string, Kind>> rows(kinds.begin(), kinds.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second.forward + a.second.backward > b.second.forward + b.second.backward;
  });
  const bool flops = std::any_of(rows.begin(), rows.end(),
                                 [](const auto& row) { return row.second.forward_flop > 0; });
  out << fmt::format("\n  per operator kind, one execution each ({} rows):\n", layers.size());
  out << fmt::format("    {:<22}{:>7}{:>12}{:>12}{:>13}{:>9}\n", "kind", "count", "forward",
                     "backward", flops ? "fwd FLOP" : "", "share");
  for (const auto& [name, k] : rows) {
    const Time busy = k.forward + k.backward;
    out << fmt::format("    {:<22}{:>7}{:>12}{:>12}{:>13}{:>8.1f}%\n", name, k.count,
                       format_duration(k.forward), format_duration(k.backward),
                       !flops               ? ""
                       : k.forward_flop > 0 ? si(k.forward_flop)
                                            : "-",
                       total > Time::zero() ? 100.0 * (busy / total) : 0.0);
  }
}

void write_op_table(std::ostream& out, const Workload& workload, const Result& result) {
  struct Row {
    size_t index = 0;
    Time forward, backward, comm;
  };
  const auto& layers = workload.program.layers;
  std::vector<Row> rows;
  Time total;
  for (size_t i = 0; i < layers.size() && i < result.layers.size(); ++i) {
    const LayerTiming& t = result.layers[i];
    Row row;
    row.index = i;
    row.forward = t.forward.compute;
    row.backward = t.input_grad.compute + t.weight_grad.compute;
    for (const PhaseTiming* p : {&t.forward, &t.input_grad, &t.weight_grad})
      if (p->comm) row.comm += p->comm->cost;
    total += row.forward + row.backward;
    rows.push_back(row);
  }
  const size_t all = rows.size();
  if (all > kOpTableRows) {  // the largest compute, shown in execution order
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.forward + a.backward > b.forward + b.backward;
    });
    rows.resize(kOpTableRows);
    std::sort(rows.begin(), rows.end(),
              [](const Row& a, const Row& b) { return a.index < b.index; });
  }
  size_t width = 8;
  for (const Row& r : rows)
    width = std::max(width, std::min<size_t>(layers[r.index].name.size(), 60));
  out << (all > kOpTableRows ? fmt::format("\n  per operator, the {} largest of {} (all: --csv), "
                                           "one execution each:\n",
                                           rows.size(), all)
                             : fmt::format("\n  per operator, one execution each:\n"));
  out << fmt::format("    {:<{}}  {:<16}{:>12}{:>12}{:>12}{:>9}\n", "operator", width, "kind",
                     "forward", "backward", "comm", "share");
  for (const Row& r : rows) {
    std::string name = layers[r.index].name;
    if (name.size() > width) name = name.substr(0, width - 3) + "...";
    const Time busy = r.forward + r.backward;
    out << fmt::format("    {:<{}}  {:<16}{:>12}{:>12}{:>12}{:>8.1f}%\n", name, width,
                       layers[r.index].op, format_duration(r.forward), format_duration(r.backward),
                       r.comm > Time::zero() ? format_duration(r.comm) : "-",
                       total > Time::zero() ? 100.0 * (busy / total) : 0.0);
  }
}

}  // namespace orrery
