// SimAI 1.7 "SimAI_analytical", reproduced bit for bit: its collective cost model (bus bandwidth
// by group placement, efficiency tables, small-message constants, integer-ns truncation) and its
// closed-form report (comm serial with compute, bubble = pre-bubble * (PP-1) / (GA * vpp)).
// Quirks are SimAI's on purpose; Orrery's own models live elsewhere. See docs/simai-compat.md.
//
// Units as SimAI prints them: times in microseconds (double), bandwidths in GiB/s.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery::simai {

// SimAI_analytical's command line.
struct Options {
  int64_t gpus = 0;             // -g: world size; DP = floor(gpus / (TP * PP))
  double nvlink_busbw = 360;    // -nv: intra-node bus bandwidth, GiB/s
  double nic_busbw = 48.5;      // -nic: per-NIC bandwidth, GiB/s
  int64_t nics_per_server = 8;  // -n_p_s
  int64_t gpus_per_server = 8;  // -g_p_s
  double dp_overlap = 0;        // -dp_o: fraction of weight-gradient comm hidden
  double tp_overlap = 0;        // -tp_o
  double ep_overlap = 0;        // -ep_o
  double pp_overlap = 1;        // -pp_o (1 makes SimAI's PP term 0)
  // -busbw FILE: bus bandwidths given per group and collective ("TP/allreduce", "DP/allgather",
  // "EP/alltoall", ...), which replace the ones SimAI computes from -nv and -nic (and its
  // efficiency tables) for that group's collective. EP's all-gather and reduce-scatter are the
  // expert-data-parallel (DP_EP) ones, as SimAI's README says.
  std::map<std::string, double> busbw;
};

// SimAI's busbw.yaml: a first line (a name, skipped as SimAI skips it), then sections TP, DP, EP
// and PP of `collective,: value` lines (value a number or null). Throws InputError naming the
// line for a value that is no positive number; keys Orrery does not use are warned about by name.
std::map<std::string, double> read_busbw_file(const std::string& path, std::string_view content,
                                              Diagnostics& diagnostics);

// The three columns SimAI prints for one collective of a layer, plus the exposed share.
struct CommColumns {
  int64_t ranks = 0;       // group size SimAI costs it for
  int64_t total_ns = 0;    // cost before overlap scaling
  int64_t exposed_ns = 0;  // after overlap scaling
  double algbw = 0;        // GiB/s, as printed (may be inf or NaN)
  double busbw = 0;        // GiB/s, as printed
};

struct LayerRow {
  std::string name;
  int64_t fwd_compute_ns = 0, wg_compute_ns = 0, ig_compute_ns = 0;  // recompute included
  CommColumns fwd, wg, ig;
};

// The summary line of EndToEnd.csv, in microseconds.
struct Summary {
  double expose_dp = 0, expose_dp_ep = 0, expose_tp = 0, expose_ep = 0, expose_pp = 0;
  double bubble = 0, compute = 0, exposed = 0, total = 0;
};

struct Report {
  Summary summary;
  std::vector<LayerRow> layers;
};

// Throws InputError where SimAI would crash or print garbage (a message beyond its efficiency
// tables, fewer than one NIC per node for a group, pp_overlap of 0, fewer GPUs than TP * PP).
Report run_analytical(const Workload& workload, const Options& options, Diagnostics& diagnostics);

// SimAI's results/<run_name>EndToEnd.csv, byte for byte.
void write_end_to_end_csv(std::ostream& out, const Report& report, std::string_view run_name);

// The report as an Orrery Result (breakdown, per-layer costs, and the "simai" peer figures).
Result to_result(const Workload& workload, const Options& options, const Report& report);

}  // namespace orrery::simai
