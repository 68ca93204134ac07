#include "compat/simai_analytical.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>

#include "compat/simai_ratio_tables.h"
#include "core/text.h"

namespace orrery::simai {
namespace {

constexpr double kGiB = 1073741824.0;

// SimAI's communicator classes. NONE: an unrecognised suffix (costed only if small).
enum class Group { TP, EP, DP, DP_EP, NONE };

struct CommType {
  std::optional<CollectiveKind> kind;  // absent: no communication
  Group group = Group::NONE;
};

enum class Column { Fwd, Ig, Wg };

// Prefix match in SimAI's order; ALLREDUCEALLTOALL is caught by ALLREDUCE with group NONE.
CommType parse_comm_type(std::string_view type, Column column) {
  static constexpr std::array<std::pair<std::string_view, CollectiveKind>, 4> kPrefixes = {{
      {"ALLREDUCE", CollectiveKind::AllReduce},
      {"ALLTOALL", CollectiveKind::AllToAll},
      {"ALLGATHER", CollectiveKind::AllGather},
      {"REDUCESCATTER", CollectiveKind::ReduceScatter},
  }};
  for (const auto& [prefix, kind] : kPrefixes) {
    if (!type.starts_with(prefix)) continue;
    const std::string_view suffix = type.substr(prefix.size());
    if (suffix.empty()) return {kind, column == Column::Wg ? Group::DP : Group::TP};
    if (suffix == "_EP") return {kind, Group::EP};
    if (suffix == "_DP_EP") return {kind, Group::DP_EP};
    return {kind, Group::NONE};
  }
  return {};
}

double bus_factor(CollectiveKind kind, int64_t n) {
  const double ranks = static_cast<double>(n);
  return kind == CollectiveKind::AllReduce ? 2 * (ranks - 1) / ranks : (ranks - 1) / ranks;
}

// Constant cost (us) SimAI charges any collective of 2 B .. 1 MiB, by group size.
int64_t small_message_us(int64_t n) {
  switch (n) {
    case 2:
      return 10;
    case 4:
      return 12;
    case 8:
      return 15;
    case 16:
      return 66;
    case 32:
      return 135;
    case 64:
      return 200;
    case 128:
      return 320;
    default:
      return 0;
  }
}

class Model {
 public:
  Model(const Workload& workload, const Options& options)
      : options_(options),
        tp_(workload.parallelism.tp),
        ep_(workload.parallelism.ep),
        dp_(options.gpus / (workload.parallelism.tp * workload.parallelism.pp)),
        gps_(options.gpus_per_server),
        nps_(options.nics_per_server) {}

  int64_t dp() const { return dp_; }

  int64_t ranks(const CommType& type, Column column) const {
    if (column == Column::Wg) return type.group == Group::DP_EP ? dp_ / ep_ : dp_;
    return type.group == Group::EP ? ep_ : tp_;
  }

  // Cost in integer ns of one collective; `where` locates errors.
  int64_t cost(const CommType& type, int64_t n, Bytes size, const SourceLocation& where) const {
    if (!type.kind) return 0;
    if (size > 1 && size < 1048576) return small_message_us(n) * 1000;
    if (type.group == Group::NONE || (type.group != Group::TP && n <= 1)) return 0;

    const Placement p = place(type.group, n);
    if (p.nodes > 1 && p.nics < 1)
      throw InputError(where, "SimAI's bandwidth model gives a group spanning " +
                                  std::to_string(p.nodes) +
                                  " nodes less than one NIC per node (nics-per-server " +
                                  std::to_string(nps_) + "); its result would be garbage");
    double nvlink_share = 0;
    const auto given = options_.busbw.find(busbw_key(type.group, *type.kind));
    const double busbw =
        given != options_.busbw.end() ? given->second : bus_bandwidth(*type.kind, p, nvlink_share);
    const double r = given != options_.busbw.end()
                         ? 1.0
                         : ratio(*type.kind, type.group, p, nvlink_share, size, where);
    const float effective = static_cast<float>(r * busbw);
    const double ns = static_cast<double>(size) / kGiB / static_cast<double>(effective) * 1e9 *
                      bus_factor(*type.kind, n);
    return static_cast<int64_t>(ns);
  }

 private:
  struct Placement {
    int64_t nodes = 1;
    int64_t gpus_per_node = 1;
    int64_t nics = 1;  // NICs per node available to the group
  };

  // The busbw.yaml entry of a group's collective ("TP/allreduce"); EP's all-gather and
  // reduce-scatter are the DP_EP group's.
  static std::string busbw_key(Group group, CollectiveKind kind) {
    std::string section = group == Group::TP ? "TP" : group == Group::DP ? "DP" : "EP";
    const char* op = kind == CollectiveKind::AllReduce       ? "allreduce"
                     : kind == CollectiveKind::AllGather     ? "allgather"
                     : kind == CollectiveKind::ReduceScatter ? "reducescatter"
                     : kind == CollectiveKind::AllToAll      ? "alltoall"
                                                             : "other";
    return section + "/" + op;
  }

  Placement place(Group group, int64_t n) const {
    switch (group) {
      case Group::TP:
        return tp_ <= gps_ ? Placement{1, tp_, nps_} : Placement{tp_ / gps_, gps_, nps_};
      case Group::EP:
        if (tp_ * n <= gps_) return {1, gps_ / tp_, nps_};
        return {tp_ * n / gps_, std::max<int64_t>(gps_ / tp_, 1),
                tp_ > gps_ ? nps_ / gps_ : nps_ / tp_};
      case Group::DP:
        return tp_ <= gps_ ? Placement{n, gps_ / tp_, nps_ / tp_} : Placement{n, 1, nps_ / gps_};
      case Group::DP_EP:
        if (tp_ * ep_ <= gps_) return {n, gps_ / (tp_ * ep_), nps_ / (tp_ * ep_)};
        return {n, 1, nps_ / gps_};
      case Group::NONE:
        break;
    }
    return {};
  }

  // Bus bandwidth in GiB/s. `nvlink_bound` is set when a multi-node ring is limited by NVLink.
  double bus_bandwidth(CollectiveKind kind, const Placement& p, double& nvlink_bound) const {
    const double nv = options_.nvlink_busbw;
    const double nic_total = options_.nic_busbw * static_cast<double>(p.nics);
    const double gpn = static_cast<double>(p.gpus_per_node);
    if (p.nodes == 1) return nv;
    if (kind == CollectiveKind::AllToAll) {
      const double r = static_cast<double>(p.nodes) * gpn;
      return nic_total / gpn * (r - 1) / (static_cast<double>(p.nodes - 1) * gpn);
    }
    if (p.gpus_per_node == 1) return nic_total;
    const double nv_term = nic_total > nv ? nv * gpn / (gpn - 1) : nv;
    nvlink_bound = nv_term < nic_total ? 1 : 0;
    return std::min(nv_term, nic_total);
  }

  double ratio(CollectiveKind kind, Group group, const Placement& p, double nvlink_bound,
               Bytes size, const SourceLocation& where) const {
    std::optional<double> r = 1.0;
    const bool gather_or_scatter =
        kind == CollectiveKind::AllGather || kind == CollectiveKind::ReduceScatter;
    if (gather_or_scatter && group == Group::TP) {
      const auto table = p.nodes > 1 && nvlink_bound > 0 ? RatioTable::NvLink : RatioTable::Nic;
      r = efficiency_ratio(table, tp_ < gps_ ? 0 : ratio_column_for_nodes(tp_ / gps_), size);
    } else if (kind == CollectiveKind::AllToAll && group == Group::EP) {
      const int column = tp_ * ep_ <= gps_ ? 0
                         : tp_ >= gps_     ? kMulti16Column
                                           : ratio_column_for_nodes(tp_ * ep_ / gps_);
      r = efficiency_ratio(RatioTable::AllToAll, column, size);
    } else if (kind == CollectiveKind::AllToAll && group == Group::TP) {
      r = efficiency_ratio(RatioTable::AllToAll,
                           tp_ <= gps_ ? 0 : ratio_column_for_nodes(tp_ / gps_), size);
    }
    if (!r)
      throw InputError(where, "message of " + std::to_string(size) +
                                  " B is beyond SimAI's efficiency tables (16 GiB); SimAI aborts "
                                  "with 'Data size out of range'");
    return *r;
  }

  const Options& options_;
  int64_t tp_, ep_, dp_, gps_, nps_;
};

// Costs one collective and fills its columns. algbw / busbw as SimAI computes them: sizes of
// 1..4095 B count as 4096 B, a zero time gives inf or NaN, and busbw stays 0 without a collective.
void price(const Model& model, const CommType& type, Column column, const Phase& phase,
           const SourceLocation& where, CommColumns& c) {
  const Bytes size = phase.source_comm_bytes;
  c.ranks = model.ranks(type, column);
  c.total_ns = model.cost(type, c.ranks, size, where);
  const Bytes shown = size > 0 && size < 4096 ? 4096 : size;
  const double seconds = static_cast<double>(c.total_ns) / 1e9;
  c.algbw = static_cast<double>(shown) / kGiB / seconds;
  c.busbw = type.kind ? c.algbw * bus_factor(*type.kind, c.ranks) : 0.0;
}

int64_t scaled(int64_t ns, double overlap) {
  return static_cast<int64_t>(static_cast<double>(ns) * (1 - overlap));
}

// Extra forward executions per layer from activation recompute, as SimAI runs it: its header
// parser reads the first listed index k times, so only the first checkpoint and the first trigger
// count; the forward re-runs from that checkpoint up to (not including) the trigger.
std::vector<int64_t> recompute_counts(const Workload& workload, Diagnostics& diagnostics) {
  std::vector<int64_t> extra(workload.program.layers.size(), 0);
  const auto& rc = workload.recompute;
  const auto varied = [](const std::vector<int64_t>& list) {
    return std::adjacent_find(list.begin(), list.end(), std::not_equal_to<>()) != list.end();
  };
  if (varied(rc.checkpoints) || varied(rc.triggers))
    diagnostics.warn({workload.source, 1},
                     "SimAI reads only the first index of 'checkpoints:' and "
                     "'checkpoint_initiates:' (k times); the SimAI-compatible mode does too");
  if (rc.checkpoints.empty() || rc.triggers.empty()) return extra;
  const int64_t checkpoint = rc.checkpoints.front();
  const int64_t trigger = rc.triggers.front();
  if (checkpoint > trigger) {
    diagnostics.warn({workload.source, 1}, "no checkpoint at or before recompute trigger layer " +
                                               std::to_string(trigger) +
                                               "; SimAI would read out of bounds; no "
                                               "recompute counted");
    return extra;
  }
  for (int64_t i = checkpoint; i < trigger; ++i)
    extra[i] = 1;
  return extra;
}

}  // namespace

Report run_analytical(const Workload& workload, const Options& options, Diagnostics& diagnostics) {
  const Parallelism& par = workload.parallelism;
  const SourceLocation header{workload.source, 1};
  if (options.gpus < par.tp * par.pp)
    throw InputError(header, "--gpus " + std::to_string(options.gpus) +
                                 " is smaller than TP * PP = " + std::to_string(par.tp * par.pp) +
                                 "; SimAI's data-parallel size would be 0");
  if (options.pp_overlap == 0)
    throw InputError(
        "--pp-overlap 0 divides by zero in SimAI's PP-comm formula; use a value in (0, 1]");
  if (options.gpus % (par.tp * par.pp) != 0)
    diagnostics.warn(header, "--gpus " + std::to_string(options.gpus) +
                                 " is not a multiple of TP * PP; SimAI rounds DP down");
  if (options.gpus != par.world_size)
    diagnostics.warn(header, "all_gpus in the header is " + std::to_string(par.world_size) +
                                 " but --gpus is " + std::to_string(options.gpus) +
                                 "; DP follows --gpus, as in SimAI");

  const Model model(workload, options);
  const std::vector<int64_t> recompute = recompute_counts(workload, diagnostics);
  Report report;
  Summary& s = report.summary;
  double pre_bubble = 0;
  for (size_t i = 0; i < workload.program.layers.size(); ++i) {
    const Layer& layer = workload.program.layers[i];
    const SourceLocation where{workload.source, layer.line};
    LayerRow row;
    row.name = layer.name;
    row.fwd_compute_ns = layer.forward.compute.ps() / 1000 * (1 + recompute[i]);
    row.ig_compute_ns = layer.input_grad.compute.ps() / 1000;
    row.wg_compute_ns = layer.weight_grad.compute.ps() / 1000;

    const CommType fwd = parse_comm_type(layer.forward.source_comm_type, Column::Fwd);
    const CommType ig = parse_comm_type(layer.input_grad.source_comm_type, Column::Ig);
    const CommType wg = parse_comm_type(layer.weight_grad.source_comm_type, Column::Wg);
    price(model, fwd, Column::Fwd, layer.forward, where, row.fwd);
    price(model, ig, Column::Ig, layer.input_grad, where, row.ig);
    price(model, wg, Column::Wg, layer.weight_grad, where, row.wg);

    if (layer.name != "embedding_layer")
      pre_bubble += static_cast<double>(row.fwd.total_ns + row.fwd_compute_ns + row.wg_compute_ns +
                                        row.ig_compute_ns + row.ig.total_ns) /
                    1000;
    row.wg.exposed_ns = scaled(row.wg.total_ns, options.dp_overlap);
    (wg.group == Group::DP_EP ? s.expose_dp_ep : s.expose_dp) += row.wg.exposed_ns / 1000.0;
    const bool expert = fwd.group == Group::EP;
    const double overlap = expert ? options.ep_overlap : options.tp_overlap;
    row.fwd.exposed_ns = scaled(row.fwd.total_ns, overlap);
    row.ig.exposed_ns = scaled(row.ig.total_ns, overlap);
    (expert ? s.expose_ep : s.expose_tp) += (row.fwd.exposed_ns + row.ig.exposed_ns) / 1000.0;
    s.compute +=
        row.fwd_compute_ns / 1000.0 + row.wg_compute_ns / 1000.0 + row.ig_compute_ns / 1000.0;
    s.exposed +=
        row.fwd.exposed_ns / 1000.0 + row.wg.exposed_ns / 1000.0 + row.ig.exposed_ns / 1000.0;
    report.layers.push_back(std::move(row));
  }

  s.bubble = pre_bubble * static_cast<double>(par.pp - 1) /
             static_cast<double>(par.micro_batches * par.vpp);
  // SimAI keeps pp_comm in 32 bits and divides by the PP overlap ratio where a bandwidth belongs.
  const auto pp_comm = static_cast<uint32_t>(workload.stage_boundary_bytes.value_or(0));
  const double pp_us = std::trunc(2.0 * static_cast<double>(par.vpp * par.micro_batches) *
                                  (pp_comm / kGiB / options.pp_overlap * 1e9) / 1000);
  s.expose_pp = std::trunc(pp_us * (1 - options.pp_overlap));
  s.total = s.compute + s.exposed + s.bubble + s.expose_pp;
  return report;
}

namespace {

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "-nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, v);
  return buffer;
}

std::string with_share(double v, double total) {
  const double share = v / total * 100;
  if (!std::isfinite(v) || !std::isfinite(share)) return "NaN or Inf";
  return fixed(v, 0) + " (" + fixed(share, 2) + "%)";
}

std::string us(int64_t ns) {
  return fixed(static_cast<double>(ns) / 1000, 0);
}

}  // namespace

void write_end_to_end_csv(std::ostream& out, const Report& report, std::string_view run_name) {
  const Summary& s = report.summary;
  out << "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, "
         "Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n";
  out << run_name;
  for (const double v : {s.expose_dp, s.expose_dp_ep, s.expose_tp, s.expose_ep, s.expose_pp,
                         s.bubble, s.compute, s.exposed})
    out << ", " << with_share(v, s.total);
  out << ", " << (std::isfinite(s.total) ? fixed(s.total, 0) : "NaN or Inf") << "\n";
  out << "layer_name,Analytical_test,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed "
         "comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total "
         "comm,algbw,busbw\n";
  for (const LayerRow& r : report.layers) {
    out << r.name << ",Analytical_test," << us(r.fwd_compute_ns) << ',' << us(r.wg_compute_ns)
        << ',' << us(r.ig_compute_ns) << ',' << us(r.fwd.exposed_ns) << ',' << us(r.wg.exposed_ns)
        << ',' << us(r.ig.exposed_ns);
    for (const CommColumns* c : {&r.fwd, &r.wg, &r.ig})
      out << ',' << us(c->total_ns) << ',' << fixed(c->algbw, 2) << ',' << fixed(c->busbw, 2);
    out << '\n';
  }
}

std::map<std::string, double> read_busbw_file(const std::string& path, std::string_view content,
                                              Diagnostics& diagnostics) {
  std::map<std::string, double> out;
  std::string section;
  int64_t number = 0;
  size_t start = 0;
  while (start <= content.size()) {
    const size_t end = std::min(content.find('\n', start), content.size());
    const std::string line(trim(content.substr(start, end - start)));
    start = end + 1;
    ++number;
    if (number == 1 || line.empty() || line[0] == '#') continue;  // SimAI skips the first line
    const std::string body(trim(line.substr(0, line.find('#'))));
    const size_t colon = body.find(':');
    if (colon == std::string::npos)
      throw InputError({path, number},
                       "expected a section (TP:, DP:, EP:, PP:) or 'collective,: "
                       "busbw', found '" +
                           line + "'");
    std::string key(trim(body.substr(0, colon)));
    const std::string value(trim(body.substr(colon + 1)));
    if (value.empty()) {
      section = key;
      if (section != "TP" && section != "DP" && section != "EP" && section != "PP")
        diagnostics.warn({path, number}, "unknown section '" + section +
                                             "' (SimAI reads TP, DP, EP and PP); its keys are "
                                             "ignored");
      continue;
    }
    if (!key.empty() && key.back() == ',') key.pop_back();
    if (value == "null") continue;
    const auto bw = parse_double(value);
    if (!bw || !(*bw > 0) || !std::isfinite(*bw))
      throw InputError({path, number}, "expected a positive bus bandwidth or null for '" + key +
                                           "', found '" + value + "'");
    const bool collective =
        key == "allreduce" || key == "allgather" || key == "reducescatter" || key == "alltoall";
    if (section == "PP" && key == "busbw") {
      diagnostics.warn({path, number},
                       "PP busbw: SimAI's analytical pipeline term uses no "
                       "bandwidth (docs/simai-compat.md); ignored");
    } else if ((section == "TP" || section == "DP" || section == "EP") && collective) {
      out[section + "/" + key] = *bw;
    } else if (section == "TP" || section == "DP" || section == "EP" || section == "PP") {
      diagnostics.warn({path, number}, "unknown key '" + key + "' in section " + section +
                                           " (expected allreduce, allgather, reducescatter or "
                                           "alltoall; PP: busbw); ignored");
    }
  }
  return out;
}

Result to_result(const Workload& workload, const Options& options, const Report& report) {
  const Summary& s = report.summary;
  const auto time = [](double microseconds) { return Time::from_seconds(microseconds * 1e-6); };
  Result result;
  result.mode = "analytical (SimAI 1.7 compatible)";
  result.workload = workload.name;
  result.parallelism = workload.parallelism;
  result.parallelism.world_size = options.gpus;
  Breakdown& b = result.breakdown;
  b.compute = time(s.compute);
  b.exposed_comm[CommGroup::Data] = time(s.expose_dp);
  b.exposed_comm[CommGroup::ExpertData] = time(s.expose_dp_ep);
  b.exposed_comm[CommGroup::Tensor] = time(s.expose_tp);
  b.exposed_comm[CommGroup::Expert] = time(s.expose_ep);
  b.bubble = time(s.bubble);
  b.p2p = time(s.expose_pp);
  result.iteration_time = b.total();

  for (size_t i = 0; i < report.layers.size(); ++i) {
    const LayerRow& row = report.layers[i];
    const Layer& layer = workload.program.layers[i];
    LayerTiming t;
    t.name = row.name;
    t.line = layer.line;
    t.executions = 1;
    const auto phase = [](const Phase& p, int64_t compute_ns, const CommColumns& c) {
      PhaseTiming timing{Time::from_ns(compute_ns), std::nullopt};
      if (p.comm) timing.comm = CommTiming{*p.comm, c.ranks, Time::from_ns(c.total_ns)};
      return timing;
    };
    t.forward = phase(layer.forward, row.fwd_compute_ns, row.fwd);
    t.input_grad = phase(layer.input_grad, row.ig_compute_ns, row.ig);
    t.weight_grad = phase(layer.weight_grad, row.wg_compute_ns, row.wg);
    result.layers.push_back(std::move(t));
  }

  // The summary columns as SimAI prints them: whole microseconds (its fixed(v, 0)).
  const auto printed = [](double us) { return std::isfinite(us) ? std::nearbyint(us) : us; };
  result.peer = PeerFigures{"simai",
                            {{"total_us", printed(s.total)},
                             {"expose_dp_us", printed(s.expose_dp)},
                             {"expose_dp_ep_us", printed(s.expose_dp_ep)},
                             {"expose_tp_us", printed(s.expose_tp)},
                             {"expose_ep_us", printed(s.expose_ep)},
                             {"expose_pp_us", printed(s.expose_pp)},
                             {"bubble_us", printed(s.bubble)},
                             {"total_comp_us", printed(s.compute)},
                             {"total_exposed_us", printed(s.exposed)}}};
  return result;
}

}  // namespace orrery::simai
