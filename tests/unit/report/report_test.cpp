#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "report/json_report.h"
#include "report/layer_csv.h"
#include "report/op_table.h"
#include "report/text_summary.h"

namespace orrery {
namespace {

Result sample() {
  Result r;
  r.mode = "event";
  r.schedule = "1f1b";
  r.workload = "w";
  r.cluster = "c";
  r.parallelism = {8, 2, 1, 1, 4, 32};
  r.breakdown.compute = Time::from_us(700);
  r.breakdown.exposed_comm[CommGroup::Tensor] = Time::from_us(100);
  r.breakdown.bubble = Time::from_us(150);
  r.breakdown.p2p = Time::from_us(50);
  r.iteration_time = r.breakdown.total();
  r.stages = {{0, r.iteration_time, r.breakdown}};
  LayerTiming l;
  l.name = "attention,row";
  l.line = 9;
  l.executions = 1;
  l.forward = {
      Time::from_ns(1500),
      CommTiming{{CollectiveKind::AllGather, CommGroup::Tensor, 4096}, 8, Time::from_ns(2500)}};
  r.layers.push_back(l);
  Diagnostics d;
  d.warn({"w.txt", 1}, "header has no 'vpp:'");
  r.warnings = d.warnings();
  return r;
}

TEST(TextSummary, DurationsCarryUnits) {
  EXPECT_EQ(format_duration(Time::from_seconds(14.7723)), "14.77 s");
  EXPECT_EQ(format_duration(Time::from_us(290'054)), "290.1 ms");
  EXPECT_EQ(format_duration(Time::from_ns(15'000)), "15.00 us");
  EXPECT_EQ(format_duration(Time::from_ns(2)), "2.000 ns");
  EXPECT_EQ(format_duration(Time::zero()), "0 s");
}

TEST(TextSummary, ShowsBreakdownSharesAndWarnings) {
  std::ostringstream out;
  write_text_summary(out, sample());
  const std::string text = out.str();
  // Each figure on its own line, with its unit and its share of the iteration.
  const auto line_of = [&](const std::string& label) {
    const size_t at = text.find(label);
    return at == std::string::npos ? std::string() : text.substr(at, text.find('\n', at) - at);
  };
  EXPECT_TRUE(line_of("iteration time").ends_with(" 1.000 ms")) << text;
  EXPECT_TRUE(line_of("compute").ends_with(" 700.0 us   70.00 %")) << text;
  EXPECT_TRUE(line_of("exposed tp comm").ends_with(" 100.0 us   10.00 %")) << text;
  EXPECT_TRUE(line_of("pipeline bubble").ends_with(" 150.0 us   15.00 %")) << text;
  EXPECT_TRUE(line_of("stage-to-stage transfers").ends_with(" 50.00 us    5.00 %")) << text;
  EXPECT_NE(text.find("w.txt:1: header has no 'vpp:'"), std::string::npos);
}

TEST(JsonReport, HasTheDocumentedKeysInSeconds) {
  std::ostringstream out;
  write_json(out, sample());
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_DOUBLE_EQ(j["iteration_time_s"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(j["breakdown_s"]["compute"].get<double>(), 700e-6);
  EXPECT_DOUBLE_EQ(j["breakdown_s"]["exposed_comm"]["tp"].get<double>(), 100e-6);
  EXPECT_DOUBLE_EQ(j["breakdown_s"]["exposed_comm"]["dp"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["breakdown_s"]["bubble"].get<double>(), 150e-6);
  EXPECT_DOUBLE_EQ(j["breakdown_s"]["p2p"].get<double>(), 50e-6);
  EXPECT_EQ(j["parallelism"]["dp"].get<int>(), 2);
  EXPECT_DOUBLE_EQ(j["stages"][0]["busy_fraction"].get<double>(), 0.7);
  EXPECT_EQ(j["warnings"][0].get<std::string>(), "w.txt:1: header has no 'vpp:'");
  EXPECT_FALSE(j.contains("simai"));
  EXPECT_FALSE(j.contains("model"));
  EXPECT_FALSE(j.contains("device"));
}

TEST(JsonReport, NamesThatAreNotUtf8AreReplacedNotRefused) {
  // A name is user data: a byte that is not UTF-8 (0xff) becomes U+FFFD, and the JSON parses.
  Result r = sample();
  r.workload = "layer\xff name";
  std::ostringstream out;
  EXPECT_NO_THROW(write_json(out, r));
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["workload"].get<std::string>(), "layer\xef\xbf\xbd name");
}

TEST(JsonReport, ModelAndDeviceForModelLevelFormats) {
  Result r = sample();
  r.device = "A100-SXM4-80GB";
  r.model = ModelSummary{242'361'344, 12, 91.2e9};
  std::ostringstream out;
  write_json(out, r);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["device"], "A100-SXM4-80GB");
  EXPECT_EQ(j["model"]["parameters"].get<int64_t>(), 242'361'344);
  EXPECT_EQ(j["model"]["layers"].get<int64_t>(), 12);
  EXPECT_DOUBLE_EQ(j["model"]["forward_flop"].get<double>(), 91.2e9);
  r.model->forward_flop.reset();  // a table of times: FLOPs unknown
  std::ostringstream again;
  write_json(again, r);
  EXPECT_TRUE(nlohmann::json::parse(again.str())["model"]["forward_flop"].is_null());

  std::ostringstream text;
  write_text_summary(text, r, "  [details]\n");
  EXPECT_NE(text.str().find("  device     A100-SXM4-80GB\n"), std::string::npos);
  EXPECT_NE(text.str().find("  model      242.4 M parameters, 12 layers\n"), std::string::npos);
  // Details come before the warnings.
  EXPECT_LT(text.str().find("[details]"), text.str().find("warnings ("));
}

// Two operators: a GEMM of 2 GFLOP (forward 1 ms, input grad 0.5 ms, weight grad 0.5 ms) with a
// data-parallel all-reduce, and a softmax (forward 0.25 ms, backward 0.25 ms).
std::pair<Workload, Result> operators() {
  Workload w;
  Layer gemm;
  gemm.name = "fc1:addmm";
  gemm.op = "addmm";
  ComputeDemand k;
  k.kind = KernelClass::Gemm;
  k.flop = 2e9;
  k.bytes = 3000;
  gemm.forward.kernels = {k, k};
  Layer softmax;
  softmax.name = "softmax.0";
  softmax.op = "softmax";
  w.program.layers = {gemm, softmax};
  Result r;
  LayerTiming g;
  g.forward.compute = Time::from_us(1000);
  g.input_grad.compute = Time::from_us(500);
  g.weight_grad.compute = Time::from_us(500);
  g.weight_grad.comm =
      CommTiming{{CollectiveKind::AllReduce, CommGroup::Data, 4096}, 8, Time::from_us(7)};
  LayerTiming s;
  s.forward.compute = Time::from_us(250);
  s.input_grad.compute = Time::from_us(250);
  r.layers = {g, s};
  return {w, r};
}

TEST(OpTable, CsvRowPerOperatorWithWorkAndTimes) {
  const auto [w, r] = operators();
  EXPECT_TRUE(has_operator_rows(w));
  std::ostringstream out;
  write_op_csv(out, w, r);
  std::istringstream lines(out.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(header,
            "op,kind,fwd_us,fwd_flop,fwd_bytes,ig_us,ig_flop,ig_bytes,wg_us,wg_flop,wg_bytes,"
            "comm,comm_group,comm_ranks,comm_bytes,comm_us");
  EXPECT_EQ(first,
            "fc1:addmm,addmm,1000.000,4000000000,6000,500.000,,,500.000,,,all-reduce,dp,8,"
            "4096,7.000");
  EXPECT_EQ(second, "softmax.0,softmax,250.000,,,250.000,,,0.000,,,,,,,");
}

TEST(OpTable, KindsSortedByTimeWithShares) {
  const auto [w, r] = operators();
  std::ostringstream out;
  write_op_kind_table(out, w, r);
  const std::string text = out.str();
  // addmm: 2 ms of the 2.5 ms of compute (80 %), 4 GFLOP forward; softmax 20 %.
  const size_t addmm = text.find("addmm"), softmax = text.find("softmax");
  ASSERT_NE(addmm, std::string::npos);
  ASSERT_NE(softmax, std::string::npos);
  EXPECT_LT(addmm, softmax);
  const std::string addmm_line = text.substr(addmm, text.find('\n', addmm) - addmm);
  EXPECT_NE(addmm_line.find("1.000 ms"), std::string::npos) << addmm_line;
  EXPECT_NE(addmm_line.find("4 G"), std::string::npos) << addmm_line;
  EXPECT_TRUE(addmm_line.ends_with("80.0%")) << addmm_line;
  EXPECT_FALSE(has_operator_rows(Workload{}));
}

TEST(OpTable, PerOperatorRowsInExecutionOrder) {
  const auto [w, r] = operators();
  std::ostringstream out;
  write_op_table(out, w, r);
  const std::string text = out.str();
  EXPECT_NE(text.find("per operator, one execution each:"), std::string::npos) << text;
  // fc1: 1 ms forward, 0.5 + 0.5 ms backward, its 7 us all-reduce, 2 of the 2.5 ms of compute.
  const size_t fc1 = text.find("fc1:addmm"), softmax = text.find("softmax.0");
  ASSERT_NE(fc1, std::string::npos);
  ASSERT_LT(fc1, softmax);
  const std::string fc1_line = text.substr(fc1, text.find('\n', fc1) - fc1);
  EXPECT_NE(fc1_line.find("1.000 ms    1.000 ms    7.000 us    80.0%"), std::string::npos)
      << fc1_line;

  // More operators than the table holds: the largest kOpTableRows, in execution order.
  Workload many;
  Result timed;
  for (size_t i = 0; i < kOpTableRows + 10; ++i) {
    Layer l;
    l.name = "op" + std::to_string(i);
    l.op = "gelu";
    many.program.layers.push_back(l);
    LayerTiming t;
    t.forward.compute = Time::from_us(i < 10 ? 1 : 100);  // the first ten are the smallest
    timed.layers.push_back(t);
  }
  std::ostringstream big;
  write_op_table(big, many, timed);
  EXPECT_NE(big.str().find("the 40 largest of 50 (all: --csv)"), std::string::npos) << big.str();
  EXPECT_EQ(big.str().find("op9 "), std::string::npos);
  EXPECT_LT(big.str().find("op10 "), big.str().find("op49 "));
}

TEST(TextSummary, SmallModelsAndSingleCounts) {
  Result r = sample();
  r.parallelism.micro_batches = 1;
  r.parallelism.world_size = 1;
  r.parallelism.tp = r.parallelism.pp = 1;
  r.model = ModelSummary{68, 0, 1024.0};
  std::ostringstream text;
  write_text_summary(text, r, "");
  EXPECT_NE(text.str().find("(1 GPU), EP 1, VPP 1, 1 micro-batch\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("  model      68 parameters, 1.024 kFLOP per forward pass\n"),
            std::string::npos)
      << text.str();
  r.model = ModelSummary{1'500'000'000, 1, 2.5e12};
  std::ostringstream big;
  write_text_summary(big, r, "");
  EXPECT_NE(big.str().find("  model      1.5 B parameters, 1 layer, 2.5 TFLOP per forward pass\n"),
            std::string::npos)
      << big.str();
}

TEST(LayerCsv, OneRowPerLayerInMicroseconds) {
  std::ostringstream out;
  write_layer_csv(out, sample());
  std::istringstream lines(out.str());
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(header,
            "layer,line,executions,recomputes,fwd_compute_us,fwd_comm,fwd_group,fwd_ranks,"
            "fwd_bytes,fwd_comm_us,ig_compute_us,ig_comm,ig_group,ig_ranks,ig_bytes,ig_comm_us,"
            "wg_compute_us,wg_comm,wg_group,wg_ranks,wg_bytes,wg_comm_us");
  EXPECT_EQ(row, "\"attention,row\",9,1,0,1.500,all-gather,tp,8,4096,2.500,0.000,,,,,,0.000,,,,,");
}

}  // namespace
}  // namespace orrery
