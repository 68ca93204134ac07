// End-to-end tests of --trace, --report, --trace-ranks and -o DIR's trace.json / report.html.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using orrery::e2e::orrery;
using orrery::e2e::read_file;
using orrery::e2e::TempDir;

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kSeed001 = kSource + "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";
const std::string kDfmodel = kSource + "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

size_t count_lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(VisualCli, ModesWithoutATimelineRefuseTraceInOneLine) {
  TempDir dir;
  const std::string trace = (dir.path() / "t.json").string();
  for (const std::string flags :
       {"--mode analytical", "--compat simai", "--mode analytical --compat simai"}) {
    const auto run = orrery("simulate " + kSeed003 + " " + flags + " --trace " + trace);
    EXPECT_EQ(run.status, 2) << flags;
    EXPECT_EQ(count_lines(run.err), 1u) << run.err;
    EXPECT_NE(run.err.find("--trace"), std::string::npos) << run.err;
    EXPECT_FALSE(fs::exists(trace));
  }
  const auto dfmodel = orrery("simulate " + kDfmodel + " --trace " + trace);
  EXPECT_EQ(dfmodel.status, 2);
  EXPECT_EQ(count_lines(dfmodel.err), 1u) << dfmodel.err;
}

TEST(VisualCli, TraceRanksOnlyInFlowModeAndWithinTheJob) {
  TempDir dir;
  const std::string trace = (dir.path() / "t.json").string();
  EXPECT_EQ(orrery("simulate " + kSeed003 + " --trace-ranks 3 --trace " + trace).status, 2);
  EXPECT_EQ(orrery("simulate " + kSeed003 + " --mode flow --trace-ranks 3").status, 2);
  const auto outside =
      orrery("simulate " + kSeed003 + " --mode flow --trace-ranks 128 --trace " + trace);
  EXPECT_EQ(outside.status, 2);
  EXPECT_NE(outside.err.find("rank 128"), std::string::npos) << outside.err;
}

TEST(VisualCli, FlowTraceShowsTheRanksAskedAndTheBusiestLinks) {
  TempDir dir;
  const fs::path trace = dir.path() / "t.json";
  // Seed 003: tp 8 innermost, then ep/dp 4, then pp 4: rank 40 is in stage 1, rank 100 in stage 3.
  const auto run =
      orrery("simulate " + kSeed003 + " --cluster dgx-a100 --mode flow --trace-ranks " +
             "40,100 --trace " + trace.string());
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = nlohmann::json::parse(read_file(trace));
  std::set<std::string> processes;
  std::set<std::string> counters;
  for (const auto& e : json["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") processes.insert(e["args"]["name"]);
    if (e["ph"] == "C") counters.insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(processes,
            (std::set<std::string>{"stage 1 (rank 40)", "stage 3 (rank 100)", "busiest links"}));
  EXPECT_GE(counters.size(), 1u);
  EXPECT_LE(counters.size(), 10u);
}

TEST(VisualCli, OutputDirectoryGetsTraceAndReportOnlyWhenAsked) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  ASSERT_EQ(orrery("simulate " + kSeed003 + " -o " + out.string()).status, 0);
  EXPECT_FALSE(fs::exists(out / "trace.json"));
  EXPECT_FALSE(fs::exists(out / "report.html"));
  const fs::path trace = dir.path() / "t.json", report = dir.path() / "r.html";
  const auto run = orrery("simulate " + kSeed003 + " -o " + out.string() + " --trace " +
                          trace.string() + " --report " + report.string());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(read_file(out / "trace.json"), read_file(trace));
  EXPECT_EQ(read_file(out / "report.html"), read_file(report));
  // Nothing else appears beside the files asked for.
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 2u);
}

TEST(VisualCli, OutputsAreDeterministicAndLeaveResultJsonAlone) {
  TempDir dir;
  const fs::path a = dir.path() / "a", b = dir.path() / "b", plain = dir.path() / "plain";
  for (const fs::path& out : {a, b})
    ASSERT_EQ(orrery("simulate " + kSeed003 + " -o " + out.string() + " --trace " +
                     (out.string() + ".json") + " --report " + (out.string() + ".html"))
                  .status,
              0);
  ASSERT_EQ(orrery("simulate " + kSeed003 + " -o " + plain.string()).status, 0);
  EXPECT_EQ(read_file(a / "trace.json"), read_file(b / "trace.json"));
  EXPECT_EQ(read_file(a / "report.html"), read_file(b / "report.html"));
  // The same result, whatever pictures were asked for (the command lines differ, and say so in
  // the provenance).
  const auto without_provenance = [](const fs::path& file) {
    auto j = nlohmann::json::parse(read_file(file));
    EXPECT_NE(j["provenance"]["command"].get<std::string>().find(file.parent_path().string()),
              std::string::npos);
    j.erase("provenance");
    return j;
  };
  EXPECT_EQ(without_provenance(a / "result.json"), without_provenance(plain / "result.json"));
}

TEST(VisualCli, TraceCannotReplaceAnInputOrAnotherOutput) {
  TempDir dir;
  const fs::path input = dir.path() / "w.txt";
  fs::copy_file(kSeed003, input);
  const std::string before = read_file(input);
  EXPECT_EQ(orrery("simulate " + input.string() + " --trace " + input.string()).status, 2);
  EXPECT_EQ(read_file(input), before);
  const std::string same = (dir.path() / "x").string();
  EXPECT_EQ(orrery("simulate " + kSeed003 + " --trace " + same + " --report " + same).status, 2);
  EXPECT_FALSE(fs::exists(same));
}

TEST(VisualCli, SeedTraceStaysAFewMegabytes) {
  // The 1,024-GPU seed: one track set per stage (a rank class), not per GPU.
  TempDir dir;
  const fs::path trace = dir.path() / "t.json";
  ASSERT_EQ(orrery("simulate " + kSeed001 + " --cluster dgx-a100 --trace " + trace.string()).status,
            0);
  EXPECT_LT(fs::file_size(trace), 8'000'000u);
  const auto json = nlohmann::json::parse(read_file(trace));
  std::set<int> pids;
  for (const auto& e : json["traceEvents"])
    pids.insert(e["pid"].get<int>());
  EXPECT_EQ(pids.size(), 16u);  // pp 16
}

}  // namespace
