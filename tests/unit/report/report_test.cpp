#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "report/json_report.h"
#include "report/layer_csv.h"
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
