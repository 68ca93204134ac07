// End-to-end tests: run the `orrery` binary as a user would and compare with the reference
// outputs of SimAI 1.7 (tests/golden/simai/: SimAI_analytical's EndToEnd.csv, run as
// docs/simai-compat.md says).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_run.h"
#include "formats/dot_edges.h"

namespace {

namespace fs = std::filesystem;
using orrery::e2e::CliRun;
using orrery::e2e::csv_cells;
using orrery::e2e::orrery;
using orrery::e2e::read_file;
using orrery::e2e::TempDir;

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kSeed001 = kSource + "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";
const std::string kSeed000 = kSource + "/examples/torchviz/moe_qformer_b4_s45.dot";
const std::string kSeed002 = kSource + "/examples/neusight/gpt2_large_block_b16_s1024.txt";
// Seed 000's graph config: NOTES 1.3's assumptions (257 image tokens, 12 heads, 2 beams, bf16).
const std::string kSeed000Config = kSource + "/examples/torchviz/moe_qformer.yaml";

// Compares every cell and names the first that differs, then demands byte equality.
void expect_same_csv(const std::string& actual, const std::string& golden) {
  const auto a = csv_cells(actual), g = csv_cells(golden);
  ASSERT_EQ(a.size(), g.size()) << "row count";
  for (size_t r = 0; r < g.size(); ++r) {
    ASSERT_EQ(a[r].size(), g[r].size()) << "row " << r + 1;
    for (size_t c = 0; c < g[r].size(); ++c)
      ASSERT_EQ(a[r][c], g[r][c]) << "row " << r + 1 << " column " << c + 1 << " (" << g[r][0]
                                  << ")";
  }
  EXPECT_EQ(actual, golden);
}

TEST(SimaiCompat, Seed003MatchesSimaiEndToEndCsv) {
  TempDir dir;
  const fs::path csv = dir.path() / "out.csv";
  const CliRun r =
      orrery("simulate " + kSeed003 +
             " --mode analytical --compat simai --run-name seed003- --csv " + csv.string());
  ASSERT_EQ(r.status, 0) << r.err;
  expect_same_csv(read_file(csv), read_file(kSource + "/tests/golden/simai/seed003-EndToEnd.csv"));
}

TEST(SimaiCompat, Seed001WithDefaultVppMatchesSimaiWithVppOne) {
  TempDir dir;
  const fs::path csv = dir.path() / "out.csv";
  const CliRun r =
      orrery("simulate " + kSeed001 +
             " --mode analytical --compat simai --run-name seed001_vpp1- --csv " + csv.string());
  ASSERT_EQ(r.status, 0) << r.err;
  expect_same_csv(read_file(csv),
                  read_file(kSource + "/tests/golden/simai/seed001_vpp1-EndToEnd.csv"));
}

TEST(SimaiCompat, JsonCarriesSimaiSummaryColumns) {
  const CliRun r = orrery("simulate " + kSeed003 + " --compat simai --json");  // implies analytical
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // The golden summary line: 7582, 0, 2903, 3641, 0, 16934, 40829, 14126, 71889 (us, rounded).
  const auto us = [&](const char* key) { return std::llround(j["simai"][key].get<double>()); };
  EXPECT_EQ(us("total_us"), 71889);
  EXPECT_EQ(us("expose_dp_us"), 7582);
  EXPECT_EQ(us("expose_dp_ep_us"), 0);
  EXPECT_EQ(us("expose_tp_us"), 2903);
  EXPECT_EQ(us("expose_ep_us"), 3641);
  EXPECT_EQ(us("expose_pp_us"), 0);
  EXPECT_EQ(us("bubble_us"), 16934);
  EXPECT_EQ(us("total_comp_us"), 40829);
  EXPECT_EQ(us("total_exposed_us"), 14126);
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), 0.071889, 1e-6);
  const auto& b = j["breakdown_s"];
  EXPECT_NEAR(b["compute"].get<double>(), 0.040829, 1e-6);
  EXPECT_NEAR(b["exposed_comm"]["dp"].get<double>(), 0.007582, 1e-6);
  EXPECT_NEAR(b["bubble"].get<double>(), 0.016934, 1e-6);
  // The extra records are SimAI's business; what the event simulator would do with the passes is
  // not (the header's ga: 1 against two listed passes is warned about in the event mode only).
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"].dump();
  EXPECT_NE(j["warnings"][0].get<std::string>().find("optimizer3, optimizer4"), std::string::npos);
  // SimAI's summary columns are whole microseconds, as SimAI prints them: JSON integers.
  for (const auto& [key, value] : j["simai"].items())
    EXPECT_TRUE(value.is_number_integer()) << key << ": " << value;
}

TEST(SimaiCompat, SimaiSpelledFlagsGiveTheSameAnswer) {
  TempDir dir;
  const fs::path csv = dir.path() / "out.csv";
  const CliRun r = orrery("simulate " + kSeed003 +
                          " --mode analytical --compat simai -g 128 -nv 360 -nic 48.5 -n_p_s 8 "
                          "-g_p_s 8 -r seed003- --csv " +
                          csv.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(csv), read_file(kSource + "/tests/golden/simai/seed003-EndToEnd.csv"));
}

TEST(EventMode, SeedsRunAndTheBreakdownAddsUp) {
  for (const std::string& seed : {kSeed001, kSeed003}) {
    for (const std::string cluster : {"simai-default", "dgx-a100", "hgx-h100"}) {
      const CliRun r = orrery("simulate " + seed + " --cluster " + cluster + " --json");
      ASSERT_EQ(r.status, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      const auto& b = j["breakdown_s"];
      double sum = b["compute"].get<double>() + b["bubble"].get<double>() + b["p2p"].get<double>();
      for (const auto& [group, seconds] : b["exposed_comm"].items())
        sum += seconds.get<double>();
      EXPECT_NEAR(sum, j["iteration_time_s"].get<double>(), 1e-9) << seed << " on " << cluster;
      EXPECT_EQ(j["mode"], "event");
    }
  }
}

TEST(EventMode, Seed001ComputeMatchesTheListing) {
  // SimAI and Orrery agree on the compute a stage does: 7,213,232 us (the listing's sum), on
  // SimAI's cluster (on hgx-h100, the default, collectives take SMs from compute).
  const CliRun r = orrery("simulate " + kSeed001 + " --cluster simai-default --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["breakdown_s"]["compute"].get<double>(), 7.213232, 1e-6);
  EXPECT_EQ(j["schedule"], "1f1b");
  EXPECT_EQ(j["stages"].size(), 16u);
  // 1F1B with p = 16, m = 16: the bubble is close to (p-1)/(m+p-1) = 15/31 of the iteration.
  EXPECT_NEAR(j["breakdown_s"]["bubble"].get<double>() / j["iteration_time_s"].get<double>(),
              15.0 / 31, 0.02);
}

TEST(Cli, OutputDirectoryHoldsExactlyTheResultFiles) {
  TempDir dir;
  const fs::path out = dir.path() / "results";
  const CliRun r = orrery("simulate " + kSeed003 + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"layers.csv", "result.json", "summary.txt"}));
  EXPECT_NE(read_file(out / "layers.csv").find("mlp_moelayer_3,"), std::string::npos);
}

TEST(Cli, MalformedWorkloadIsOneLineAndExitTwo) {
  TempDir dir;
  const fs::path bad = dir.path() / "bad.txt";
  std::ofstream(bad) << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 pp: 2\n1\n"
                        "embedding_layer -1 10 NONE 0 1 NONE 0 1 NONE 0\n";
  const CliRun r = orrery("simulate " + bad.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "orrery: " + bad.string() +
                ":3: expected 12 fields (name, dependency, fwd compute, "
                "fwd comm type, fwd comm size, ig compute, ig comm type, ig comm size, wg compute, "
                "wg comm type, wg comm size, wg update time), found 11\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, UnknownFormatClusterAndFlagsAreExitTwo) {
  TempDir dir;
  const fs::path dot = dir.path() / "g.txt";
  std::ofstream(dot) << "digraph { a -> b }\n";
  CliRun r = orrery("simulate " + dot.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(":1: expected a workload in a known format"), std::string::npos) << r.err;
  r = orrery("simulate " + kSeed003 + " --cluster nowhere");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("expected a preset (dgx-a100, gb200-nvl72, hgx-b200, hgx-h100, "
                       "hgx-h100-eth200, hgx-h100-roce400, hgx-h200, mi300x, simai-default, "
                       "tpu-v4)"),
            std::string::npos)
      << r.err;
  r = orrery("simulate " + kSeed003 + " --mode quantum");
  EXPECT_EQ(r.status, 2);
  r = orrery("simulate " + kSeed003 + " --mode event --compat simai");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("use --mode analytical"), std::string::npos) << r.err;
  r = orrery("simulate " + kSeed003 + " --gpus 100");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("world size 100 is not a multiple of tp * pp = 32"), std::string::npos)
      << r.err;
  r = orrery("simulate /no/such/file.txt");
  EXPECT_EQ(r.status, 2);
}

TEST(Cli, HelpAndPresets) {
  CliRun r = orrery("simulate --help");
  EXPECT_EQ(r.status, 0);
  for (const char* option : {"--format", "--cluster", "--gpus", "--mode", "--compat", "--schedule",
                             "--no-overlap", "--json", "--csv", "--output-dir", "--nvlink-busbw"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
  r = orrery("presets");
  EXPECT_EQ(r.status, 0);
  for (const char* name :
       {"simai-default", "dgx-a100", "hgx-h100", "tpu-v4", "hgx-h200", "hgx-b200", "gb200-nvl72",
        "mi300x", "hgx-h100-roce400", "hgx-h100-eth200"})
    EXPECT_NE(r.out.find(name), std::string::npos) << name;
  EXPECT_NE(r.out.find("also: dgx-h100"), std::string::npos) << r.out;
  r = orrery("presets --show dgx-h100");
  EXPECT_NE(r.out.find("name: hgx-h100"), std::string::npos) << r.out;
  r = orrery("presets --show dgx-a100");
  EXPECT_NE(r.out.find("bandwidth: 200 Gb/s"), std::string::npos);
  r = orrery("presets");
  for (const char* device : {"A100-SXM4-40GB", "A100-SXM4-80GB", "H100-SXM5-80GB", "H200-SXM-141GB",
                             "DFModel-A100", "B200-SXM-180GB", "GB200-186GB", "MI300X-192GB"})
    EXPECT_NE(r.out.find(device), std::string::npos) << device;
  r = orrery("presets --show h200");
  EXPECT_NE(r.out.find("bandwidth: 4.8 TB/s"), std::string::npos) << r.out;
  r = orrery("presets");
  EXPECT_NE(r.out.find("\nModel presets"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpt3-175b           174.6 B parameters, 96 layers, hidden 12288, 96 heads"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mixtral-8x7b        46.7 B parameters (12.9 B active)"), std::string::npos);
  r = orrery("presets --show llama3.1-405b");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("name: llama3.1-405b\n"), std::string::npos) << r.out;
  r = orrery("presets --show nemotron-340b");  // an alias
  EXPECT_NE(r.out.find("name: nemotron4-340b\n"), std::string::npos) << r.out;
}

TEST(Cli, ClusterFileFromTheUser) {
  TempDir dir;
  const fs::path yaml = dir.path() / "mine.yaml";
  std::ofstream(yaml) << read_file(kSource + "/data/presets/clusters/dgx-a100.yaml");
  const CliRun from_file =
      orrery("simulate " + kSeed003 + " --cluster " + yaml.string() + " --json");
  const CliRun preset = orrery("simulate " + kSeed003 + " --cluster dgx-a100 --json");
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_EQ(nlohmann::json::parse(from_file.out)["iteration_time_s"],
            nlohmann::json::parse(preset.out)["iteration_time_s"]);
}

double breakdown_sum(const nlohmann::json& j) {
  const auto& b = j["breakdown_s"];
  double sum = b["compute"].get<double>() + b["bubble"].get<double>() + b["p2p"].get<double>();
  for (const auto& [group, seconds] : b["exposed_comm"].items())
    sum += seconds.get<double>();
  return sum;
}

TEST(Torchviz, Seed000OnEveryClusterPreset) {
  for (const std::string cluster : {"simai-default", "dgx-a100", "hgx-h100"}) {
    const CliRun r = orrery("simulate " + kSeed000 + " --graph-config " + kSeed000Config +
                            " --cluster " + cluster + " --dp 8 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["mode"], "event");
    EXPECT_EQ(j["parallelism"]["dp"].get<int>(), 8);
    EXPECT_EQ(j["model"]["parameters"].get<int64_t>(), 242'361'344);
    EXPECT_EQ(j["model"]["layers"].get<int64_t>(), 12);
    // All forward kernels: the 90,991,742,976 GEMM FLOPs of NOTES 1.8 and the element-wise rest.
    EXPECT_GT(j["model"]["forward_flop"].get<double>(), 90'991'742'976.0);
    EXPECT_LT(j["model"]["forward_flop"].get<double>(), 1.01 * 90'991'742'976.0);
    EXPECT_NEAR(breakdown_sum(j), j["iteration_time_s"].get<double>(), 1e-9) << cluster;
    EXPECT_GT(j["breakdown_s"]["compute"].get<double>(), 0);
  }
  const auto device = [&](const std::string& cluster) {
    return nlohmann::json::parse(
        orrery("simulate " + kSeed000 + " --cluster " + cluster + " --dp 8 --json").out)["device"];
  };
  EXPECT_EQ(device("dgx-a100"), "A100-SXM4-80GB");
  EXPECT_EQ(device("hgx-h100"), "H100-SXM5-80GB");
}

TEST(Torchviz, FasterDeviceIsFasterAndConfigChangesTheWork) {
  const auto run = [&](const std::string& args) {
    const CliRun r = orrery("simulate " + kSeed000 + " --dp 1 --json " + args);
    EXPECT_EQ(r.status, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto a100 = run("--device A100-40GB");
  const auto h100 = run("--device H100");
  EXPECT_EQ(a100["device"], "A100-SXM4-40GB");
  EXPECT_LT(h100["iteration_time_s"].get<double>(), a100["iteration_time_s"].get<double>());
  // One rank: no communication; the iteration is its compute.
  EXPECT_NEAR(a100["breakdown_s"]["compute"].get<double>(), a100["iteration_time_s"].get<double>(),
              1e-12);

  TempDir dir;
  const fs::path config = dir.path() / "qformer.yaml";
  std::ofstream(config)
      << "beams: 3\nshared_expert: last\nexternal_tokens: 677\nheads: 12\ndtype: bf16\n";
  const auto bigger = run("--device H100 --graph-config " + config.string());
  EXPECT_GT(bigger["model"]["forward_flop"].get<double>(),
            h100["model"]["forward_flop"].get<double>() + 100e9);  // 193.9 vs 61.0 GFLOP GEMMs
  for (const auto& w : bigger["warnings"])
    EXPECT_EQ(w.get<std::string>().find("assuming"), std::string::npos) << w;
}

TEST(Torchviz, PerOperatorCsvAndOutputDirectory) {
  TempDir dir;
  const fs::path out = dir.path() / "run";
  const fs::path csv = dir.path() / "ops.csv";
  const CliRun r =
      orrery("simulate " + kSeed000 + " --dp 8 --csv " + csv.string() + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("per operator kind"), std::string::npos);
  EXPECT_NE(r.out.find("addmm"), std::string::npos);
  const auto rows = csv_cells(read_file(csv));
  ASSERT_GT(rows.size(), 1000u);
  EXPECT_EQ(rows[0][0], "op");
  EXPECT_EQ(rows[0].size(), 16u);
  bool query = false;
  for (const auto& row : rows)
    query = query || row[0] == "encoder.layer.6.attention.self.query:addmm";
  EXPECT_TRUE(query);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"ops.csv", "result.json", "summary.txt"}));
  EXPECT_EQ(read_file(out / "ops.csv"), read_file(csv));
}

TEST(Torchviz, MissingDataParallelDegreeIsWarnedAndBadGraphsAreExitTwo) {
  CliRun r = orrery("simulate " + kSeed000 + " --cluster dgx-a100 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["parallelism"]["world_size"].get<int>(), 8);
  bool warned = false;
  for (const auto& w : j["warnings"])
    warned = warned || w.get<std::string>().find("does not say how many GPUs") != std::string::npos;
  EXPECT_TRUE(warned);

  TempDir dir;
  const fs::path bad = dir.path() / "bad.dot";
  std::ofstream(bad) << "digraph {\n 1 [label=AddBackward0]\n 1 -> \n}\n";
  r = orrery("simulate " + bad.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("orrery: " + bad.string() + ":4: expected a Graphviz DOT digraph", 0), 0u)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  r = orrery("simulate " + kSeed000 + " --compat simai");
  EXPECT_EQ(r.status, 2);
  // --ep that does not divide the data-parallel degree: the flag is named, not the graph.
  r = orrery("simulate " + kSeed000 + " --dp 8 --ep 3");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: --ep 3: expected a divisor of the data-parallel degree, 8 (--dp)\n");
  r = orrery("simulate " + kSeed000 + " --cluster dgx-a100 --ep 3");
  EXPECT_EQ(r.err,
            "orrery: --ep 3: expected a divisor of the data-parallel degree, 8 (one server of the "
            "cluster; set --dp)\n");
  // Other formats ignore --ep (with a warning), whatever its value.
  r = orrery("simulate " + kSeed002 + " --dp 8 --ep 3");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("--ep applies to torchviz workloads only; ignored"), std::string::npos);
}

// Seed 000 with one edge deleted (every 101st of its 3,028 edges): the CLI reads it or refuses it
// with one line and exit status 2; never a crash or exit status 1. (The unit test
// TorchvizDot.Seed000WithAnEdgeDeletedIsReadOrRefused samples more edges through the reader.)
TEST(Torchviz, Seed000WithAnEdgeDeletedExitsZeroOrTwo) {
  const std::string text = read_file(kSeed000);
  const auto edges = orrery::testing::dot_edges(text);
  ASSERT_EQ(edges.size(), 3028u);
  TempDir dir;
  const fs::path edited = dir.path() / "edited.dot";
  for (size_t e = 0; e < edges.size(); e += 101) {
    std::string t = text;
    t.erase(edges[e].first, edges[e].second);
    std::ofstream(edited) << t;
    const CliRun r =
        orrery("simulate " + edited.string() + " --graph-config " + kSeed000Config + " --dp 2");
    EXPECT_TRUE(r.status == 0 || r.status == 2) << "edge " << e << ": status " << r.status;
    if (r.status == 2) {
      EXPECT_EQ(r.err.rfind("orrery: " + edited.string() + ":", 0), 0u) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
}

TEST(Torchviz, OversizedInputsAreExitTwo) {
  TempDir dir;
  // A parameter of 1.6e19 elements.
  const fs::path huge = dir.path() / "huge.dot";
  std::ofstream(huge) << "digraph {\n o [label=\" (8, 4)\" fillcolor=darkolivegreen1]\n"
                         " w [label=\"fc.weight (4000000000, 4000000000)\" fillcolor=lightblue]\n"
                         " g [label=AccumulateGrad]\n w -> g\n t [label=TBackward0]\n g -> t\n"
                         " m [label=MmBackward0]\n t -> m\n m -> o\n}\n";
  CliRun r = orrery("simulate " + huge.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("orrery: " + huge.string() +
                            ":3: node w: expected a tensor shape of at "
                            "most 2^40 elements",
                        0),
            0u)
      << r.err;
  // Graph-config sizes whose product overflows.
  const fs::path config = dir.path() / "big.yaml";
  std::ofstream(config) << "batch: 1000000\ntext_tokens: 1000000\n";
  r = orrery("simulate " + kSeed000 + " --graph-config " + config.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("(EmbeddingBackward0): expected a tensor of at most 2^40 elements"),
            std::string::npos)
      << r.err;
}

TEST(Neusight, FlagsOutsideTheirBoundsAreExitTwo) {
  for (const std::string flags : {"--backward-ratio nan", "--backward-ratio 1e12",
                                  "--layers 1000000", "--layers 100000000000"}) {
    const CliRun r = orrery("simulate " + kSeed002 + " " + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_EQ(r.err.rfind("orrery: " + flags.substr(0, flags.find(' ')) + ": expected ", 0), 0u)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(Neusight, OneRankIterationIsThreeTimesTheForwardColumn) {
  // No backward in the file: 2 x forward is synthesized; one rank has no communication, so the
  // iteration is 3 x the sum of the forward column (summed here from the file).
  double forward_ms = 0;
  std::istringstream lines(read_file(kSeed002));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name, forward;
    std::getline(fields, name, '\t');
    std::getline(fields, forward, '\t');
    forward_ms += std::stod(forward);
  }
  const CliRun r = orrery("simulate " + kSeed002 + " --dp 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), 3 * forward_ms * 1e-3, 1e-9);
  EXPECT_TRUE(j["model"]["forward_flop"].is_null());
  EXPECT_FALSE(j.contains("device"));
}

TEST(Neusight, Gpt2LargeDataParallel) {
  const CliRun r = orrery("simulate " + kSeed002 + " --layers 36 --dp 4 --cluster dgx-a100 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["parameters"].get<int64_t>(), 774'080'337);
  EXPECT_EQ(j["model"]["layers"].get<int64_t>(), 36);
  EXPECT_EQ(j["parallelism"]["dp"].get<int>(), 4);
  // The gradient all-reduces (3.1 GB over NVLink) hide behind a 4.6 s backward but the last.
  EXPECT_LT(j["breakdown_s"]["exposed_comm"]["dp"].get<double>(), 0.01);
  EXPECT_NEAR(breakdown_sum(j), j["iteration_time_s"].get<double>(), 1e-9);
  // --graph-config belongs to torchviz graphs: warned, not used.
  TempDir dir;
  const fs::path config = dir.path() / "c.yaml";
  std::ofstream(config) << "beams: 2\n";
  const CliRun w = orrery("simulate " + kSeed002 + " --dp 1 --graph-config " + config.string());
  EXPECT_NE(w.out.find("--graph-config applies to torchviz workloads only"), std::string::npos);
}

// The backward of a table with forward times only is an assumption of the run, not of the reader:
// the summary says so and names the ratio; --backward-ratio changes it.
TEST(Neusight, AssumedBackwardRatioIsNamedInTheOutput) {
  CliRun r = orrery("simulate " + kSeed002 + " --dp 1");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("backward times are assumed to be 2 x forward, a ratio the file does not "
                       "give (--backward-ratio)"),
            std::string::npos)
      << r.out;
  r = orrery("simulate " + kSeed002 + " --dp 1 --backward-ratio 1.5 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("assumed to be 1.5 x forward"), std::string::npos) << r.out;
}

// A table whose compute, once its backward is estimated, cannot fit an iteration is refused in
// one line naming the file and the row, whatever the ratio.
TEST(Neusight, OversizedTableIsRefusedInOneLine) {
  TempDir dir;
  const fs::path table = dir.path() / "big.txt";
  std::ofstream(table) << read_file(kSeed002).substr(0, read_file(kSeed002).find('\n') + 1)
                       << "transformer_h_0_ln_1\t3600000\tNone\t0\t0\tNone\t0\t0\tNone\t0\t0\n";
  for (const std::string flags : {"--layers 300", "--layers 100 --backward-ratio 100"}) {
    const CliRun r = orrery("simulate " + table.string() + " " + flags);
    EXPECT_EQ(r.status, 2) << flags;
    EXPECT_EQ(r.err.rfind("orrery: " + table.string() +
                              ":2: expected at most 1e9 ms (11.6 days) of compute per iteration",
                          0),
              0u)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace

namespace {

nlohmann::json collective_json(const std::string& args) {
  const CliRun r = orrery("collective " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(Collective, PrintsNcclTestsFiguresPerSize) {
  const auto j = collective_json("--op allreduce --size 1GiB --ranks 64 --cluster hgx-h100");
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& row = j["results"][0];
  EXPECT_EQ(row["size_bytes"].get<uint64_t>(), 1073741824u);
  const double time = row["time_s"].get<double>();
  EXPECT_NEAR(row["algbw_GBps"].get<double>(), 1073741824 / time / 1e9, 1e-9);
  EXPECT_NEAR(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 2 * 63 / 64, 1e-9);
  EXPECT_TRUE(row["algorithm"].is_string());
  // A sweep: 1 KiB, 4 KiB, ..., 1 MiB.
  EXPECT_EQ(collective_json("--op allgather -b 1KiB -e 1MiB -f 4 --ranks 8")["results"].size(), 6u);
}

TEST(Collective, FlowModeMatchesTheClosedFormWhenNothingContends) {
  // (auto would pick NCCL's tree for the all-reduce, which flow mode does not decompose: force
  // ring)
  for (const std::string op : {"allreduce", "allgather", "alltoall"}) {
    const std::string algo = op == "alltoall" ? "direct" : "ring";
    const auto a = collective_json("--op " + op +
                                   " --size 256MiB --ranks 16 --cluster dgx-a100 --algo " + algo);
    const auto f = collective_json(
        "--op " + op + " --size 256MiB --ranks 16 --cluster dgx-a100 --mode flow --algo " + algo);
    EXPECT_NEAR(f["results"][0]["time_s"].get<double>(), a["results"][0]["time_s"].get<double>(),
                1e-8)
        << op;
  }
  // Sendrecv on the point-to-point path across 2 servers: 256 MiB, and 64 KiB, where the proxy's
  // chunks bound the transfer; 1 MiB inside one server (the p2p ramp).
  for (const std::string args :
       {"--size 256MiB --ranks 16", "--size 64KiB --ranks 16", "--size 1MiB --ranks 8"}) {
    const auto a = collective_json("--op sendrecv --cluster dgx-a100 " + args);
    const auto f = collective_json("--op sendrecv --cluster dgx-a100 --mode flow " + args);
    EXPECT_NEAR(f["results"][0]["time_s"].get<double>(), a["results"][0]["time_s"].get<double>(),
                1e-8)
        << args;
  }
}

TEST(Collective, BadInputIsOneLineAndExitTwo) {
  TempDir dir;
  const fs::path huge = dir.path() / "huge.yaml";
  std::ofstream(huge) << "name: z\nnetwork:\n  - kind: switch\n    size: 8\n"
                         "    bandwidth: 1e300 TB/s\n";
  const std::pair<std::string, std::string> cases[] = {
      {"--size 1GiB -b 1 -e 2", "expected either --size or a sweep"},
      {"--size 1GiB --ranks 2000000000",
       "--ranks: expected an integer from 1 to 1048576, found '2000000000'"},
      {"--size 9223372036854775807", "--size: expected a size of at most 1 PiB"},
      {"--size 1GiB --ranks 100000 --mode flow", "flow mode would run"},
      {"--size 1GiB --cluster " + huge.string(),
       huge.string() + ":5: expected a bandwidth between 1 MB/s and 1 PB/s"},
  };
  for (const auto& [args, message] : cases) {
    const CliRun r = orrery("collective " + args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
  }
  // The largest size the error names is itself accepted, in either unit system.
  for (const char* size : {"1PiB", "1PB"})
    EXPECT_EQ(orrery(std::string("collective --ranks 2 --size ") + size).status, 0) << size;
}

TEST(Collective, ForcedAlgorithmThatCannotRunIsWarned) {
  CliRun r = orrery("collective --size 1MiB --ranks 6 --algo halving-doubling");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("warning: --algo halving-doubling: halving-doubling needs a power-of-two "
                       "group"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("ran ring instead"), std::string::npos) << r.err;
  r = orrery("collective --size 1MiB --ranks 8 --algo tree");
  EXPECT_NE(r.err.find("tree needs a group spanning more than one server"), std::string::npos)
      << r.err;
  r = orrery("collective --size 1MiB --ranks 8 --algo ring");
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(EventMode, ForcedAlgorithmThatCannotRunIsWarnedOncePerCollective) {
  const CliRun r = orrery("simulate " + kSeed003 + " --cluster hgx-h100 --algo tree --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto warnings = nlohmann::json::parse(r.out)["warnings"];
  int tp_all_reduce = 0;
  for (const auto& w : warnings)
    if (w.get<std::string>().find("--algo tree: tree needs a group spanning more than one server "
                                  "(8 ranks); the tp all-reduce runs nvls instead") !=
        std::string::npos)
      ++tp_all_reduce;
  EXPECT_EQ(tp_all_reduce, 1) << warnings.dump(1);
}

TEST(Collective, FlowModeRunsTheAnalyticalChoiceOrItsFastestStandIn) {
  // 1024 H100s, 1 GiB: auto picks NCCL's tree, which has no flow decomposition; flow mode runs
  // the decomposing algorithm with the fastest closed form in its place. Its spine hops collide
  // under ECMP (docs/network.md), so the flow time is never below that closed form.
  const auto a = collective_json("--size 1GiB --ranks 1024 --cluster hgx-h100");
  EXPECT_EQ(a["results"][0]["algorithm"], "tree");
  const auto f = collective_json("--size 1GiB --ranks 1024 --cluster hgx-h100 --mode flow");
  const std::string stand_in = f["results"][0]["algorithm"];
  const auto closed_time = [](const std::string& algo) {
    const auto j = collective_json("--size 1GiB --ranks 1024 --cluster hgx-h100 --algo " + algo);
    return j["results"][0]["time_s"].get<double>();
  };
  const double closed = closed_time(stand_in);
  for (const char* other : {"ring", "halving-doubling"})
    EXPECT_LE(closed, closed_time(other)) << stand_in << " vs " << other;
  EXPECT_GE(f["results"][0]["time_s"].get<double>(), closed - 1e-9);
  EXPECT_LE(f["results"][0]["time_s"].get<double>(), closed * 1.1);
  // Where auto's choice decomposes, flow mode runs it: NVLS on one server; partly filled servers
  // take the same time both ways.
  for (const std::string args : {"--size 1GiB --ranks 8", "--size 1GiB --ranks 12 --algo ring",
                                 "--size 64MiB --ranks 12 --op broadcast"}) {
    const auto x = collective_json(args + " --cluster hgx-h100");
    const auto y = collective_json(args + " --cluster hgx-h100 --mode flow");
    EXPECT_EQ(x["results"][0]["algorithm"], y["results"][0]["algorithm"]) << args;
    EXPECT_NEAR(x["results"][0]["time_s"].get<double>(), y["results"][0]["time_s"].get<double>(),
                1e-8)
        << args;
  }
}

// The flow guard estimates computer time from the flows a step runs at once (collective_flows.h):
// 8,192 ranks' all-to-all is one step of 8,192 x 8,191 = 67,100,672 flows, each about
// 0.1 us + 1.2 ns x sqrt(67,100,672) = 9.93 us: 666 s; a ring all-reduce of 8,192 ranks is
// 2 x 8,191 steps of 16,384 flows (2 channels), each about 0.1 + 1.2 x 0.128 = 0.254 us: 68.1 s.
TEST(Collective, FlowModeRefusesWhatWouldRunForMinutes) {
  for (const auto& [args, said] :
       {std::pair<std::string, std::string>{"--op alltoall",
                                            "67100672 flows for this collective, about 666 s"},
        {"--op allreduce --algo ring", "268402688 flows for this collective, about 68.1 s"}}) {
    const CliRun r =
        orrery("collective " + args + " --size 1GiB --ranks 8192 --cluster hgx-h100 --mode flow");
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_EQ(r.err, "orrery: flow mode would run " + said +
                         " of computer time (docs/network.md); the limit is 30 s: use the "
                         "analytical mode or fewer ranks\n")
        << args;
  }
}

// Seed 003 declared on 65,536 GPUs / flow mode refuses it at once in one line naming the file:
// every rank runs its stage's tasks there (about 30 million, beyond 20 million), where it took
// minutes and gigabytes before; the event mode runs one rank a stage and answers.
TEST(Simulate, FlowModeRefusesAJobOfTooManyRankTasksUpFront) {
  TempDir dir;
  std::string text = read_file(kSeed003);
  text.replace(text.find("all_gpus: 128"), 13, "all_gpus: 65536");
  const std::string path = (dir.path() / "wide.txt").string();
  std::ofstream(path) << text;
  const CliRun r = orrery("simulate " + path + " --mode flow");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: " + path +
                       ": expected a job the flow simulation can hold: every one of its 65536 "
                       "ranks runs its stage's tasks, about 30 million in all, beyond the 20 "
                       "million it takes; the event and analytical modes run one rank a stage\n");
  EXPECT_EQ(orrery("simulate " + path).status, 0);
}

// One 1 GiB data-parallel all-reduce over 8,192 GPUs, as a ring / the flow guard refuses it as
// `orrery collective` does (Collective.FlowModeRefusesWhatWouldRunForMinutes: 268,402,688 flows,
// about 68.1 s), and names the workload whose collective it is.
TEST(Simulate, FlowModeLimitsNameTheWorkload) {
  TempDir dir;
  const std::string path = (dir.path() / "dp8k.txt").string();
  std::ofstream(path)
      << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 "
         "vpp: 1 ga: 1 all_gpus: 8192 checkpoints: 0 checkpoint_initiates: 0\n1\n"
         "layer\t-1\t1000\tNONE\t0\t1000\tNONE\t0\t1000\tALLREDUCE\t1073741824\t100\n";
  const CliRun r = orrery("simulate " + path + " --mode flow --algo ring");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: " + path +
                       ": flow mode would run 268402688 flows for this collective, about 68.1 s "
                       "of computer time (docs/network.md); the limit is 30 s: use the "
                       "analytical mode or fewer ranks\n");
  // Run with another workload on one network, the two are named together.
  const CliRun both = orrery("simulate " + path + " " + kSeed003 + " --mode flow --algo ring");
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err.rfind("orrery: the workloads " + path + ", " + kSeed003 +
                               " run together: flow mode would run 268402688 flows",
                           0),
            0u)
      << both.err;
}

// Each job's summary lists the run's warnings and its own, never another job's.
TEST(Simulate, EachJobListsItsOwnWarnings) {
  for (const std::string mode : {"event", "flow"}) {
    const CliRun r =
        orrery("simulate " + kSeed003 + " " + kSeed002 + " --mode " + mode + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["jobs"].size(), 2u);
    const auto mentions = [&](size_t job, const std::string& text) {
      for (const auto& w : j["jobs"][job]["warnings"])
        if (w.get<std::string>().find(text) != std::string::npos) return true;
      return false;
    };
    EXPECT_TRUE(mentions(0, "moe_tp8_ep4_pp4_vpp8_128gpus.txt:")) << mode;
    EXPECT_FALSE(mentions(0, "gpt2_large_block")) << mode;
    EXPECT_TRUE(mentions(1, "gpt2_large_block_b16_s1024.txt:")) << mode;
    EXPECT_FALSE(mentions(1, "moe_tp8_ep4")) << mode;
  }
}

TEST(FlowMode, TwoJobsShareOneNetwork) {
  const CliRun r =
      orrery("simulate " + kSeed003 + " " + kSeed003 + " --cluster dgx-a100 --mode flow --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["jobs"].size(), 2u);
  for (const auto& job : j["jobs"]) {
    EXPECT_EQ(job["mode"], "flow");
    EXPECT_GT(job["flows"].get<int64_t>(), 0);
    ASSERT_FALSE(job["hottest_links"].empty());
    EXPECT_TRUE(job["hottest_links"][0].contains("busy_s"));
  }
}

TEST(FlowMode, ForcedAlgorithmAndSeedOneRankPerGpu) {
  const CliRun r =
      orrery("simulate " + kSeed003 + " --cluster hgx-h100 --mode flow --algo ring --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // All 128 ranks are simulated, each running its stage's program: the event mode runs one rank
  // per stage (4 stages), so the flow mode runs 128 / 4 = 32 times its tasks.
  const CliRun event =
      orrery("simulate " + kSeed003 + " --cluster hgx-h100 --mode event --algo ring --json");
  ASSERT_EQ(event.status, 0) << event.err;
  EXPECT_EQ(j["simulated_tasks"].get<int64_t>(),
            32 * nlohmann::json::parse(event.out)["simulated_tasks"].get<int64_t>());
  const auto& b = j["breakdown_s"];
  double sum = b["compute"].get<double>() + b["bubble"].get<double>() + b["p2p"].get<double>();
  for (const auto& [group, seconds] : b["exposed_comm"].items())
    sum += seconds.get<double>();
  EXPECT_NEAR(sum, j["iteration_time_s"].get<double>(), 1e-9);
}

}  // namespace
