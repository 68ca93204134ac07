#include "compat/simai_analytical.h"

#include <gtest/gtest.h>

#include <sstream>

namespace orrery::simai {
namespace {

// SimAI's defaults (-nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8) on a TP 8, EP 4, PP 4 job of 128 GPUs
// (DP = 4), as in seed 003.
Options defaults() {
  Options o;
  o.gpus = 128;
  return o;
}

Workload one_row(const std::string& column, const std::string& type, Bytes size,
                 const std::string& name = "layer") {
  Workload w;
  w.source = "w.txt";
  w.parallelism = {8, 4, 4, 8, 1, 128};
  Layer l;
  l.name = name;
  Phase& p = column == "fwd" ? l.forward : column == "ig" ? l.input_grad : l.weight_grad;
  p.source_comm_type = type;
  p.source_comm_bytes = size;
  w.program.layers.push_back(l);
  return w;
}

int64_t cost_ns(const std::string& column, const std::string& type, Bytes size) {
  Diagnostics d;
  const Report r = run_analytical(one_row(column, type, size), defaults(), d);
  const LayerRow& row = r.layers.at(0);
  return column == "fwd" ? row.fwd.total_ns : column == "ig" ? row.ig.total_ns : row.wg.total_ns;
}

// Worked examples of SimAI's collective cost (docs/simai-compat.md), derived by hand:
// T = trunc(size / 2^30 / (r * busbw) * 1e9 * f).
TEST(SimaiAnalytical, WorkedExamplesOfTheCollectiveModel) {
  // DP all-gather, 4 nodes x 1 NIC: 175484928 / 2^30 / 48.5 * 1e9 * 3/4.
  EXPECT_EQ(cost_ns("wg", "ALLGATHER", 175484928), 2527315);
  EXPECT_EQ(cost_ns("wg", "REDUCESCATTER", 350969856), 5054631);
  // TP all-reduce of 3 MiB inside a node: 3 MiB / 2^30 / 360 * 1e9 * 7/4.
  EXPECT_EQ(cost_ns("ig", "ALLREDUCE", 3145728), 14241);
  // TP all-gather of 3 MiB uses the 1-node nic ratio, clamped to 16 MiB: r = .45 / .81.
  EXPECT_EQ(cost_ns("fwd", "ALLGATHER", 3145728), 12817);
  // Messages between 2 B and 1 MiB cost the constant for n = 8: 15 us.
  EXPECT_EQ(cost_ns("fwd", "ALLGATHER", 98304), 15000);
  EXPECT_EQ(cost_ns("fwd", "ALLREDUCE", 1024), 15000);
  // EP all-to-all of 6 MiB, 4 nodes x 1 GPU x 1 NIC, Multi-16 ratio .86 / .96, f = 3/4.
  EXPECT_EQ(cost_ns("fwd", "ALLTOALL_EP", 6291456), 101144);
  // TP all-to-all (bare ALLTOALL is TP in the fwd column), ata ratio .44 / .78.
  EXPECT_EQ(cost_ns("fwd", "ALLTOALL", 1572864), 6311);
  // DP_EP with DP / EP = 1 rank: free.
  EXPECT_EQ(cost_ns("wg", "ALLGATHER_DP_EP", 1207959552), 0);
  // Unknown suffix: group NONE, free unless small.
  EXPECT_EQ(cost_ns("fwd", "ALLREDUCE_ASYNC", 8 << 20), 0);
  EXPECT_EQ(cost_ns("fwd", "ALLREDUCE_ASYNC", 4096), 15000);
}

TEST(SimaiAnalytical, ReportAccountingAndBubble) {
  // One row, fwd compute 1000 ns + TP all-reduce 3 MiB (14241 ns), wg compute 2000 ns:
  // pre-bubble = (14241 + 1000 + 2000 + 0 + 0) / 1000 us; bubble = pre * (PP-1)/(GA*vpp) = * 3/8.
  Workload w = one_row("fwd", "ALLREDUCE", 3145728, "attention");
  w.program.layers[0].forward.compute = Time::from_ns(1000);
  w.program.layers[0].weight_grad.compute = Time::from_ns(2000);
  Diagnostics d;
  const Report r = run_analytical(w, defaults(), d);
  EXPECT_DOUBLE_EQ(r.summary.compute, 3.0);
  EXPECT_DOUBLE_EQ(r.summary.expose_tp, 14.241);
  EXPECT_DOUBLE_EQ(r.summary.bubble, 17.241 * 3 / 8);
  EXPECT_DOUBLE_EQ(r.summary.total, 3.0 + 14.241 + 17.241 * 3 / 8);
  // A row named exactly embedding_layer stays out of the bubble.
  w.program.layers[0].name = "embedding_layer";
  EXPECT_DOUBLE_EQ(run_analytical(w, defaults(), d).summary.bubble, 0.0);
}

TEST(SimaiAnalytical, OverlapRatiosScaleExposureAfterTruncation) {
  Workload w = one_row("wg", "REDUCESCATTER", 350969856);
  Options o = defaults();
  o.dp_overlap = 0.25;
  Diagnostics d;
  const Report r = run_analytical(w, o, d);
  EXPECT_EQ(r.layers[0].wg.total_ns, 5054631);
  EXPECT_EQ(r.layers[0].wg.exposed_ns, 3790973);  // trunc(5054631 * 0.75)
  EXPECT_DOUBLE_EQ(r.summary.expose_dp, 3790.973);
}

TEST(SimaiAnalytical, PipelineTermUsesTheOverlapRatioAsABandwidth) {
  // SimAI's pipeline term: with pp_o = 0.5, seed 003 (pp_comm 48 MiB, vpp 8, GA 1) gets 750000 us.
  Workload w = one_row("fwd", "NONE", 0);
  w.stage_boundary_bytes = 50331648;
  Options o = defaults();
  o.pp_overlap = 0.5;
  Diagnostics d;
  EXPECT_DOUBLE_EQ(run_analytical(w, o, d).summary.expose_pp, 750000);
  o.pp_overlap = 1;
  EXPECT_DOUBLE_EQ(run_analytical(w, o, d).summary.expose_pp, 0);
}

TEST(SimaiAnalytical, CrashesOfSimaiBecomeErrors) {
  Diagnostics d;
  Options o = defaults();
  EXPECT_THROW(run_analytical(one_row("fwd", "ALLGATHER", 17179869185ull), o, d), InputError);
  o.pp_overlap = 0;
  EXPECT_THROW(run_analytical(one_row("fwd", "NONE", 0), o, d), InputError);
  o = defaults();
  o.gpus = 16;  // < TP * PP = 32
  EXPECT_THROW(run_analytical(one_row("fwd", "NONE", 0), o, d), InputError);
}

TEST(SimaiAnalytical, CsvPrintsNanInfLikeGlibc) {
  Workload w = one_row("wg", "ALLGATHER_DP_EP", 1207959552);
  Diagnostics d;
  std::ostringstream out;
  write_end_to_end_csv(out, run_analytical(w, defaults(), d), "x-");
  // Time 0 with a non-zero size: algbw inf, busbw inf * 0 = NaN; no fwd comm: -nan and 0.00.
  EXPECT_NE(
      out.str().find("layer,Analytical_test,0,0,0,0,0,0,0,-nan,0.00,0,inf,-nan,0,-nan,0.00\n"),
      std::string::npos);
}

}  // namespace
}  // namespace orrery::simai
