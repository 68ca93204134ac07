// End-to-end tests of DFModel files: run the `orrery` binary on seed 004 (examples/dfmodel/) and
// compare with DFModel's logged figures and per-configuration table (transcribed from
// DFModel's log of this run into tests/golden/dfmodel/), on its binary twin (encoded by
// Debian's protoc at build time), on variants that leave the mapping free, and through
// `orrery convert` into the event simulator.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "cli_run.h"

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using orrery::e2e::CliRun;
using orrery::e2e::csv_cells;
using orrery::e2e::orrery;
using orrery::e2e::read_file;
using orrery::e2e::TempDir;

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kSeed = kSource + "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";
const std::string kSeedBinary = DFMODEL_SEED_PB;
const std::string kTable = kSource + "/tests/golden/dfmodel/seed004-configs.csv";

// DFModel's log for the seed.
constexpr double kFinalS = 85.50267989926697;
constexpr double kUtil = 0.3525573123140554;
constexpr double kCost = 76628480;
constexpr double kPower = 3189573.5626306534;
constexpr double kAllConfigII = 378605103.4765335;
constexpr double kFlop = 3.85072240461978e19;

// The seed with `from` replaced by `to` (each must occur), written into `dir`.
std::string variant(const TempDir& dir, const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_file(kSeed);
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  const fs::path path = dir.path() / name;
  std::ofstream(path) << text;
  return path.string();
}

void expect_relative(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_LE(std::fabs(actual - expected), tolerance * std::fabs(expected))
      << what << ": " << actual << " vs " << expected;
}

// Same header, configurations and kernels; times within the table's 6 decimals.
void expect_golden_table(const std::string& csv) {
  const auto actual = csv_cells(csv), golden = csv_cells(read_file(kTable));
  ASSERT_EQ(actual.size(), golden.size());
  EXPECT_EQ(actual[0], golden[0]);
  for (size_t r = 1; r < golden.size(); ++r) {
    ASSERT_EQ(actual[r].size(), 6u) << "row " << r;
    EXPECT_EQ(actual[r][0], golden[r][0]) << "row " << r;
    EXPECT_EQ(actual[r][1], golden[r][1]) << "row " << r;
    for (size_t c = 2; c < 6; ++c)
      EXPECT_NEAR(std::stod(actual[r][c]), std::stod(golden[r][c]), 5.1e-7)
          << golden[r][1] << " column " << golden[0][c];
  }
}

void expect_seed_figures(const nlohmann::json& j) {
  expect_relative(j["iteration_time_s"].get<double>(), kFinalS, 1e-12, "iteration_time_s");
  expect_relative(j["dfmodel"]["final_s"].get<double>(), kFinalS, 1e-12, "final_s");
  expect_relative(j["utilization"].get<double>(), kUtil, 1e-12, "utilization");
  EXPECT_EQ(j["cost_usd"].get<double>(), kCost);
  expect_relative(j["power_w"].get<double>(), kPower, 1e-12, "power_w");
  expect_relative(j["flop"].get<double>(), kFlop, 1e-12, "flop");
  expect_relative(j["dfmodel"]["all_config_II_ns"].get<double>(), kAllConfigII, 1e-12, "II");
  EXPECT_EQ(j["dfmodel"]["p2p_ns"].get<double>(), 1073741824.0);
  expect_relative(j["dfmodel"]["pipeline_factor"].get<double>(), 2.322916666666667, 1e-15,
                  "pipeline_factor");
}

TEST(DfmodelCli, SeedJsonHasDfmodelsFiguresAndEveryConfiguration) {
  const CliRun r = orrery("simulate " + kSeed + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_seed_figures(j);
  EXPECT_EQ(j["mode"], "dataflow (DFModel)");
  EXPECT_EQ(j["parallelism"]["tp"], 1);
  EXPECT_EQ(j["parallelism"]["pp"], 128);
  EXPECT_EQ(j["parallelism"]["dp"], 32);
  EXPECT_EQ(j["parallelism"]["micro_batches"], 96);
  const auto& b = j["breakdown_s"];
  EXPECT_NEAR(b["compute"].get<double>() + b["exposed_comm"]["tp"].get<double>() +
                  b["exposed_comm"]["dp"].get<double>() + b["bubble"].get<double>() +
                  b["p2p"].get<double>(),
              j["iteration_time_s"].get<double>(), 1e-9);
  ASSERT_EQ(j["configs"].size(), 41u);
  const auto golden = csv_cells(read_file(kTable));
  for (size_t i = 0; i < 41; ++i) {
    const auto& c = j["configs"][i];
    EXPECT_EQ(c["config"].get<int>(), std::stoi(golden[i + 1][0]));
    EXPECT_EQ(c["kernels"], golden[i + 1][1]);
    EXPECT_NEAR(c["compute_ns"].get<double>(), std::stod(golden[i + 1][2]), 5.1e-7);
    EXPECT_NEAR(c["memory_ns"].get<double>(), std::stod(golden[i + 1][3]), 5.1e-7);
    EXPECT_NEAR(c["network_ns"].get<double>(), std::stod(golden[i + 1][4]), 5.1e-7);
    EXPECT_NEAR(c["ii_ns"].get<double>(), std::stod(golden[i + 1][5]), 5.1e-7);
  }
  EXPECT_EQ(j["search"]["statement"], "fixed mapping: the file leaves nothing to search");
  EXPECT_TRUE(j["warnings"].empty());
}

TEST(DfmodelCli, SeedSummaryShowsTimeThroughputUtilizationCostAndPower) {
  const CliRun r = orrery("simulate " + kSeed);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const std::string& expected :
       {std::string("TP 1 x PP 128 x DP 32 (4096 chips), 96 micro-batches"),
        std::string("time per iteration               85.50 s"), std::string("73,582 tokens/s"),
        std::string("35.26 %"), std::string("76,628,480 $"), std::string("3,189,574 W"),
        std::string("final_s                       85.50267989926")})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

TEST(DfmodelCli, PerConfigurationCsvMatchesDfmodelsTable) {
  TempDir dir;
  const fs::path csv = dir.path() / "configs.csv";
  const CliRun r = orrery("simulate " + kSeed + " --csv " + csv.string());
  ASSERT_EQ(r.status, 0) << r.err;
  expect_golden_table(read_file(csv));
}

TEST(DfmodelCli, OutputDirectoryHoldsJsonSummaryAndTable) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const CliRun r = orrery("simulate " + kSeed + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(out))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"configs.csv", "result.json", "summary.txt"}));
  expect_seed_figures(nlohmann::json::parse(read_file(out / "result.json")));
  expect_golden_table(read_file(out / "configs.csv"));
  EXPECT_NE(read_file(out / "summary.txt").find("tokens/s"), std::string::npos);
}

TEST(DfmodelCli, BinaryTwinGivesTheSameAnswer) {
  const CliRun r = orrery("simulate " + kSeedBinary + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  expect_seed_figures(j);
  EXPECT_EQ(j["configs"].size(), 41u);
  const CliRun forced = orrery("simulate --format dfmodel " + kSeedBinary + " --json");
  ASSERT_EQ(forced.status, 0) << forced.err;
  // The same answer; only the provenance's command line differs.
  auto forced_json = nlohmann::json::parse(forced.out), plain_json = j;
  EXPECT_NE(forced_json["provenance"]["command"], plain_json["provenance"]["command"]);
  EXPECT_EQ(forced_json["provenance"]["inputs"], plain_json["provenance"]["inputs"]);
  forced_json.erase("provenance");
  plain_json.erase("provenance");
  EXPECT_EQ(forced_json, plain_json);
}

TEST(DfmodelCli, BadInputIsOneLineWithFileAndLine) {
  TempDir dir;
  const std::string enum_error =
      variant(dir, "enum.txt", {{"    type: SIMD\n", "    type: VECTOR\n"}});
  CliRun r = orrery("simulate " + enum_error);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: " + enum_error +
                       ":6: expected DFModel DSE text (protobuf text format): Unknown enumeration "
                       "value of \"VECTOR\" for field \"type\".\n");

  const std::string dangling =
      variant(dir, "dangling.txt",
              {{"    startIdx: 1\n    endIdx: 12\n", "    startIdx: 1\n    endIdx: 99\n"}});
  r = orrery("simulate " + dangling);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: " + dangling +
                       ":1006: connection 14: expected startIdx and endIdx to name kernel ids, "
                       "found 1 -> 99\n");

  const std::string cycle =
      variant(dir, "cycle.txt",
              {{"    startIdx: 1\n    endIdx: 12\n", "    startIdx: 13\n    endIdx: 2\n"}});
  r = orrery("simulate " + cycle);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(cycle + ":19: expected an acyclic graph, found a cycle through kernel "
                               "'LayerNorm_1' (id 2)"),
            std::string::npos)
      << r.err;

  const std::string dlrm =
      variant(dir, "dlrm.txt", {{"  llm {\n    hidden_dim: 25600\n", "  dlrm {\n    row: 2\n"}});
  r = orrery("simulate " + dlrm);
  EXPECT_EQ(r.status, 2) << r.err;
}

TEST(DfmodelCli, FreeShapeAndParallelismAreSearched) {
  TempDir dir;
  const std::string free = variant(dir, "free.txt",
                                   {{"    x: 128\n", "    x: 0\n"},
                                    {"    y: 32\n", "    y: 0\n"},
                                    {"    par_x: \"PP\"\n", ""},
                                    {"    par_y: \"DP\"\n", ""}});
  const CliRun r = orrery("simulate " + free + " --json --top 3");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // 13 shapes of 4096 = 2^12 into x * y, 6 ordered role pairs, all DP dividing 3072 = 2^10 * 3
  // except DP = 2^11 and 2^12 (2 shapes x 2 roles with DP on either dimension = 8 layouts gone).
  EXPECT_EQ(j["search"]["statement"].get<std::string>().rfind("searched 70 candidate mappings", 0),
            0u)
      << j["search"]["statement"];
  EXPECT_TRUE(j["search"]["proven_optimal"].get<bool>());
  ASSERT_EQ(j["alternatives"].size(), 3u);
  double previous = 0;
  for (const auto& a : j["alternatives"]) {
    EXPECT_GE(a["iteration_time_s"].get<double>(), previous);
    previous = a["iteration_time_s"].get<double>();
  }
  // The seed's own mapping is in the space, so the best is at least as fast.
  EXPECT_LE(j["iteration_time_s"].get<double>(), kFinalS);
}

TEST(DfmodelCli, BothExecutionStylesPickTheFasterFusion) {
  const CliRun r = orrery("simulate " + kSeed + " --execution both --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_LT(j["iteration_time_s"].get<double>(), kFinalS);
  EXPECT_EQ(j["alternatives"][0]["execution"], "DATAFLOW");
  EXPECT_EQ(j["alternatives"][1]["execution"], "KERNEL_BY_KERNEL");
  expect_relative(j["alternatives"][1]["iteration_time_s"].get<double>(), kFinalS, 1e-12,
                  "kernel-by-kernel alternative");
  EXPECT_FALSE(j["search"]["proven_optimal"].get<bool>());
}

TEST(DfmodelCli, ConvertedWorkloadRunsInTheEventSimulator) {
  TempDir dir;
  const fs::path workload = dir.path() / "gpt1t.txt", cluster = dir.path() / "cluster.yaml";
  const CliRun c = orrery("convert " + kSeed + " --to workload -o " + workload.string() +
                          " --cluster-out " + cluster.string());
  ASSERT_EQ(c.status, 0) << c.err;
  const CliRun r =
      orrery("simulate " + workload.string() + " --cluster " + cluster.string() + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The same work: compute and memory of every configuration, 96 micro-batches (35.127 s,
  // DFModel's per-configuration table), and the same pipeline count (1F1B and GPipe both take m + p
  // - 1 slots), so the answers agree to a few percent; the event simulator overlaps the gradient
  // all-reduce and the transfers that DFModel adds.
  EXPECT_NEAR(j["breakdown_s"]["compute"].get<double>(), 35.127, 0.001);
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), kFinalS, 0.02 * kFinalS);
  EXPECT_LT(j["iteration_time_s"].get<double>(), kFinalS);

  // `simulate --mode event` on the DFModel file runs the same conversion.
  const CliRun direct = orrery("simulate " + kSeed + " --mode event --json");
  ASSERT_EQ(direct.status, 0) << direct.err;
  EXPECT_NEAR(nlohmann::json::parse(direct.out)["iteration_time_s"].get<double>(),
              j["iteration_time_s"].get<double>(), 1e-6);
}

// The seed at 100,000 layers / the event mode refuses it at once, in one line at the graph's
// line (pp 128 x 96 micro-batches x 782 layers a stage x 41 kernel rows x 6 = 2,364 million
// tasks, beyond 20 million), because the conversion counts its tasks before it lists a row (it
// took 5 s and 3 GB before); DFModel's own closed form still answers.
TEST(DfmodelCli, TheEventModeRefusesAMappingTooLargeBeforeConvertingIt) {
  TempDir dir;
  const std::string deep = variant(dir, "deep.txt", {{"num_layer: 128", "num_layer: 100000"}});
  const CliRun r = orrery("simulate " + deep + " --mode event");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(":1: expected a mapping the event simulation can hold: about 2364 million "
                       "tasks (pp 128 x 96 micro-batches x 782 layers a stage x 41 kernel rows x "
                       "6)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(orrery("simulate " + deep).status, 0);
}

// Exit status 2 and one line on stderr that starts with `start`.
void expect_one_line_error(const CliRun& r, const std::string& start) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("orrery: " + start, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(DfmodelCli, AbsurdNumbersAreOneLineErrorsNotCrashes) {
  TempDir dir;
  // 2^32 x 2^32 fixed sizes once overflowed to 0 and divided by it (SIGFPE).
  const std::string overflow =
      variant(dir, "ovf.txt",
              {{"    x: 128\n", "    x: 4294967296\n"}, {"    y: 32\n", "    y: 4294967296\n"}});
  expect_one_line_error(orrery("simulate " + overflow),
                        overflow +
                            ":1425: r_r: expected x between 0 and 2147483647 (0: free), found "
                            "4294967296");
  // NaN compute_util once gave "time per iteration -9223372036854776.0 ns" and exit 0.
  const std::string nan = variant(dir, "nan.txt", {{"compute_util: 0.9", "compute_util: nan"}});
  expect_one_line_error(orrery("simulate " + nan),
                        nan + ":1460: miscellany: expected compute_util");
  expect_one_line_error(
      orrery("convert " + nan + " --to workload -o " + (dir.path() / "w.txt").string()),
      nan + ":1460: miscellany: expected compute_util");
  // An empty graph once stopped inside protobuf (rc 1).
  std::string text = read_file(kSeed);
  text.erase(text.find("  kernels {"), text.find("system {") - text.find("  kernels {") - 2);
  const fs::path empty = dir.path() / "empty.txt";
  std::ofstream(empty) << text;
  expect_one_line_error(orrery("simulate " + empty.string()),
                        empty.string() + ":1: dataflow_graph: expected at least one kernel");
}

TEST(DfmodelCli, TruncatedBinaryFileSaysWhereItEnds) {
  TempDir dir;
  const fs::path cut = dir.path() / "cut.pb";
  std::ofstream(cut, std::ios::binary) << read_file(kSeedBinary).substr(0, 700);
  const std::string start = cut.string() +
                            ": expected a DFModel DSE file (protobuf text or binary); as binary, "
                            "at byte ";
  CliRun r = orrery("simulate " + cut.string());
  expect_one_line_error(r, start);
  EXPECT_NE(r.err.find(" of 700: dataflow_graph.kernels["), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the file is cut off?)"), std::string::npos) << r.err;
  r = orrery("simulate --format dfmodel " + cut.string());
  expect_one_line_error(r, start);
}

TEST(DfmodelCli, PinsOfADataflowFileAreChecked) {
  TempDir dir;
  // The seed's kernel-by-kernel configurations 0-40 as DATAFLOW pins with num_config 8: they
  // once ran as 41 configurations without a word. Kernel V (id 5), forward, is the first pinned
  // outside the forward half 0-3.
  const std::string eight = variant(
      dir, "eight.txt",
      {{"execution_style: KERNEL_BY_KERNEL", "execution_style: DATAFLOW\n  num_config: 8"}});
  expect_one_line_error(orrery("simulate " + eight),
                        eight +
                            ":82: kernel 'V' (id 5) is a forward kernel pinned to "
                            "configuration 4, but DATAFLOW runs forward kernels in "
                            "configurations 0 to 3");
}

TEST(DfmodelCli, HugeTimeLimitIsNoLimit) {
  TempDir dir;
  const std::string free = variant(dir, "free.txt",
                                   {{"    x: 128\n", "    x: 0\n"},
                                    {"    y: 32\n", "    y: 0\n"},
                                    {"time: 1200", "time: 9223372036854775807"}});
  CliRun r = orrery("simulate " + free + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["search"]["proven_optimal"].get<bool>());
  r = orrery("simulate " + free + " --json --time-limit 1e300");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["search"]["proven_optimal"].get<bool>());
}

TEST(DfmodelCli, ConfigurationsThatDoNotFitAreOneWarning) {
  TempDir dir;
  const std::string small = variant(dir, "sram.txt", {{"sram_cap: 88080380.0", "sram_cap: 10.0"}});
  const CliRun r = orrery("simulate " + small + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto warnings = nlohmann::json::parse(r.out)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << warnings;
  EXPECT_NE(warnings[0].get<std::string>().find("(and 40 more configurations of 41)"),
            std::string::npos)
      << warnings[0];
}

TEST(DfmodelCli, EventModeSaysWhenItDepartsFromDfmodel) {
  TempDir dir;
  // The seed on TP 1 x PP 16 x DP 256: 8 layers per stage, so DFModel's pipeline factor divides
  // its bubble by 7 and the event simulator's 1F1B bubble is far larger.
  const std::string deep =
      variant(dir, "deep.txt", {{"    x: 128\n", "    x: 16\n"}, {"    y: 32\n", "    y: 256\n"}});
  CliRun r = orrery("simulate " + deep + " --mode event --json");
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  const std::string warning = j["warnings"][0];
  EXPECT_NE(warning.find("the event simulation departs from DFModel's formula by +"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("L_s - 1 = 7 (8 layers per stage)"), std::string::npos) << warning;
  // `convert` says so before any simulation.
  r = orrery("convert " + deep + " -o " + (dir.path() / "deep_w.txt").string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("warning: " + deep +
                       ": the event simulator's pipeline bubble will be "
                       "about 7 times DFModel's"),
            std::string::npos)
      << r.err;
  // The seed itself agrees within 1.1 %: nothing to say.
  r = orrery("simulate " + kSeed + " --mode event --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["warnings"].empty()) << r.out;
}

// The seed with its shape left free and PP on x, DP on y (11 shapes; DP 2048 and 4096 do not
// divide the batch). DFModel's closed form puts PP 16 x DP 256 first: with 8 layers per stage its
// pipeline factor divides the bubble by L_s - 1 = 7, so it prices the deep pipeline far below
// what a 1F1B schedule idles (PP - 1 whole-stage slots). The event simulator therefore ranks
// another of the closed form's 4 best first (PP 16, 32, 8, 4 by DFModel's 54.29, 58.47, 60.59
// and 78.86 s).
TEST(DfmodelCli, RankByEventPicksTheFastestReCheckedMapping) {
  TempDir dir;
  const std::string free =
      variant(dir, "free.txt", {{"    x: 128\n", "    x: 0\n"}, {"    y: 32\n", "    y: 0\n"}});
  CliRun r = orrery("simulate " + free + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto closed_form = nlohmann::json::parse(r.out);
  ASSERT_EQ(closed_form["alternatives"][0]["pp"], 16);
  // The default ranking says nothing of event mode.
  EXPECT_TRUE(closed_form["search"]["proven_optimal"].get<bool>());
  EXPECT_FALSE(closed_form["search"].contains("ranked_by"));
  EXPECT_FALSE(closed_form["alternatives"][0].contains("event_time_s"));

  r = orrery("simulate " + free + " --json --rank-by event --recheck 4");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto ranked = nlohmann::json::parse(r.out);
  EXPECT_EQ(ranked["search"]["ranked_by"], "event");
  EXPECT_FALSE(ranked["search"]["proven_optimal"].get<bool>());
  EXPECT_NE(ranked["search"]["statement"].get<std::string>().find(
                "ranked by Orrery's event mode among the 4 best by the closed form"),
            std::string::npos)
      << ranked["search"]["statement"];
  // --top 5 rows: the 4 re-checked ordered by event time, then the closed form's fifth.
  const auto& rows = ranked["alternatives"];
  ASSERT_EQ(rows.size(), 5u);
  double winner_event = 0;  // the closed form's best, simulated
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_LE(rows[0]["event_time_s"].get<double>(), rows[i]["event_time_s"].get<double>());
    if (rows[i]["pp"] == 16) winner_event = rows[i]["event_time_s"].get<double>();
  }
  EXPECT_FALSE(rows[4].contains("event_time_s"));
  EXPECT_LT(rows[0]["event_time_s"].get<double>(), winner_event);
  EXPECT_NE(rows[0]["pp"], 16);
  // The answer is reported in DFModel's model by default, in event mode with --mode event.
  EXPECT_EQ(ranked["iteration_time_s"], rows[0]["iteration_time_s"]);
  r = orrery("simulate " + free + " --json --rank-by event --recheck 4 --mode event");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["iteration_time_s"], rows[0]["event_time_s"]);

  // The summary shows both times.
  r = orrery("simulate " + free + " --rank-by event --recheck 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("execution              DFModel       event\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("85.50 s           -\n"), std::string::npos) << r.out;  // not re-checked
}

// The default 10 re-checks reach PP 128 x DP 32, the seed's own mapping (1 layer per stage, where
// DFModel's bubble is the schedule's), and PP 512 to 2048, which the event simulator refuses (PP x
// micro-batches x the layers of a pass exceed the tasks it holds): no event time, one warning.
// In event mode PP 128 and PP 64 (DFModel's second) come out within 0.1 % of each other, so the
// winner is either.
TEST(DfmodelCli, RankByEventSkipsMappingsTheSimulatorRefuses) {
  TempDir dir;
  const std::string free =
      variant(dir, "free.txt", {{"    x: 128\n", "    x: 0\n"}, {"    y: 32\n", "    y: 0\n"}});
  const CliRun r = orrery("simulate " + free + " --json --rank-by event");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["alternatives"].size(), 10u);
  const int winner = j["alternatives"][0]["pp"].get<int>();
  EXPECT_TRUE(winner == 128 || winner == 64) << winner;
  EXPECT_NEAR(j["alternatives"][0]["event_time_s"].get<double>(),
              j["alternatives"][1]["event_time_s"].get<double>(),
              1e-3 * j["alternatives"][0]["event_time_s"].get<double>());
  for (size_t i = 7; i < 10; ++i)
    EXPECT_FALSE(j["alternatives"][i].contains("event_time_s")) << j["alternatives"][i];
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  EXPECT_NE(j["warnings"][0].get<std::string>().find(
                "3 of the 10 re-checked mappings could not be simulated in event mode"),
            std::string::npos)
      << j["warnings"][0];
}

// --rank-by analytical --recheck K shows event times beside DFModel's and keeps its answer.
TEST(DfmodelCli, RecheckWithoutEventRankingKeepsTheClosedFormAnswer) {
  TempDir dir;
  const std::string free =
      variant(dir, "free.txt", {{"    x: 128\n", "    x: 0\n"}, {"    y: 32\n", "    y: 0\n"}});
  const CliRun r = orrery("simulate " + free + " --json --recheck 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["search"]["ranked_by"], "analytical");
  EXPECT_TRUE(j["search"]["proven_optimal"].get<bool>());
  EXPECT_EQ(j["alternatives"][0]["pp"], 16);
  EXPECT_TRUE(j["alternatives"][1].contains("event_time_s"));
  EXPECT_FALSE(j["alternatives"][2].contains("event_time_s"));
}

TEST(DfmodelCli, RankByEventNeedsASearchAndReChecks) {
  CliRun r = orrery("simulate " + kSeed + " --json --rank-by event");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  EXPECT_NE(j["warnings"][0].get<std::string>().find(
                "--rank-by event: the file fixes its mapping, so there is nothing to "
                "rank or re-check; ignored"),
            std::string::npos);
  expect_relative(j["iteration_time_s"].get<double>(), kFinalS, 1e-12, "fixed mapping");
  expect_one_line_error(orrery("simulate " + kSeed + " --rank-by event --recheck 0"),
                        "--recheck: expected at least 1 with --rank-by event");
}

TEST(DfmodelCli, ForwardOnlyGraphsAreNotConverted) {
  TempDir dir;
  const fs::path forward = dir.path() / "forward.txt";
  std::string text = read_file(kSeed);
  const std::string graph =
      "dataflow_graph {\n"
      "  kernels {\n"
      "    name: \"X\"\n"
      "    id: 1\n"
      "    fwd_bwd: FWD\n"
      "    type: SIMD\n"
      "    elementwise_input1 { outer: 1 M: 25600 N: 2048 tiling: N_TILING }\n"
      "  }\n"
      "}\n";
  text.replace(0, text.find("system {"), graph);
  std::ofstream(forward) << text;
  CliRun r = orrery("simulate " + forward.string());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string start = forward.string() +
                            ":1: dataflow_graph: expected backward kernels to convert; this "
                            "forward-only (inference) graph cannot become a training workload";
  expect_one_line_error(orrery("simulate " + forward.string() + " --mode event"), start);
  expect_one_line_error(orrery("convert " + forward.string()), start);
}

// A string field that is not UTF-8 makes the protobuf library log its reason to stderr before
// the parse fails; that reason belongs in Orrery's one line, not in lines of its own.
TEST(DfmodelCli, ProtobufLibraryRejectionIsOneLine) {
  TempDir dir;
  std::string bytes = read_file(kSeedBinary);
  const size_t at = bytes.find("LayerNorm_1");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = '\xff';  // a byte that never occurs in UTF-8
  const fs::path bad = dir.path() / "bad.pb";
  std::ofstream(bad, std::ios::binary) << bytes;
  for (const char* format : {"", "--format dfmodel "}) {
    const CliRun r = orrery(std::string("simulate ") + format + bad.string());
    expect_one_line_error(r, bad.string() +
                                 ": expected a DFModel DSE file (protobuf text or binary); as "
                                 "binary, the protobuf library rejects it: String field ");
    EXPECT_EQ(r.err.find("libprotobuf"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("invalid UTF-8"), std::string::npos) << r.err;
  }
}

}  // namespace
