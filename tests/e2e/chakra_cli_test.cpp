// Chakra execution traces end to end: ASTRA-sim's microbenchmarks simulated on their clusters,
// `orrery convert --to chakra` read back to the same iteration time for every input format, and
// broken trace sets refused in one line (docs/chakra.md).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kChakra = kSource + "/examples/chakra/";

nlohmann::json run_json(const std::string& args) {
  const CliRun r = orrery(args);
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// The trace on ASTRA-sim's ring as an Orrery cluster (`astra` false) or on ASTRA-sim's own network
// and system files (true).
double micros(const std::string& trace, int64_t n, bool astra = false) {
  const std::string npus = std::to_string(n) + "npus";
  const std::string cluster = astra ? kSource + "/examples/astra-sim/Ring_" + npus +
                                          ".yml --system " + kSource +
                                          "/examples/astra-sim/Ring_4chunks.json"
                                    : kChakra + "ring_" + npus + ".yaml";
  const auto j = run_json("simulate " + kChakra + trace + "_" + npus + "_1MB --cluster " + cluster +
                          " --json");
  return j.is_null() ? 0 : j["iteration_time_s"].get<double>() * 1e6;
}

// On the physical ring (50 GiB/s each way, 500 ns per hop, ideal links) Orrery's bidirectional
// ring moves half of each step's data each way: a ring all-reduce of S on n ranks takes
// 2 (n - 1) (500 ns + S / (2 n B)), B = 50 x 2^30 B/s; all-gather's size is one rank's share, so
// the gathered buffer is n S: (n - 1) (500 ns + S / (2 B)). Within 50 ps: the model sums its
// steps in floating point.
TEST(ChakraCli, MicrobenchmarksFollowTheRingModel) {
  const double mib = 1 << 20, bw = 50.0 * (1 << 30);
  for (const int64_t n : {4, 8, 16}) {
    const double step_ar = 500e-3 + mib / (2.0 * n * bw) * 1e6;
    EXPECT_NEAR(micros("all_reduce", n), 2.0 * (n - 1) * step_ar, 5e-5) << n;
    EXPECT_NEAR(micros("reduce_scatter", n), (n - 1) * step_ar, 5e-5) << n;
    EXPECT_NEAR(micros("all_gather", n), (n - 1) * (500e-3 + mib / (2 * bw) * 1e6), 5e-5) << n;
  }
}

// ASTRA-sim's own finish times (reference/chakra/README.md of the shared folder) against Orrery
// given ASTRA-sim's network and system files (Ring_Nnpus.yml, Ring_4chunks.json): all-reduce,
// all-gather and reduce-scatter agree within 5 % (the issue's bound; they come within 0.1 %);
// all-to-all differs by algorithm (docs/chakra.md explains each).
TEST(ChakraCli, AstraSimConventionsAgreeWhereTheModelsMatch) {
  const std::vector<std::pair<std::string, std::vector<double>>> astra = {
      {"all_reduce", {43.00, 64.44, 99.64}},
      {"all_gather", {64.74, 151.02, 323.56}},
      {"reduce_scatter", {22.24, 33.08, 50.74}}};
  for (const auto& [trace, reported] : astra)
    for (size_t i = 0; i < 3; ++i) {
      const int64_t n = int64_t{4} << i;
      const double ours = micros(trace, n, true);
      EXPECT_LT(std::abs(ours / reported[i] - 1), 0.05) << trace << " " << n << ": " << ours;
    }
}

// ASTRA-sim's network and system files map onto Orrery's ring as docs/astra-sim.md derives: 4
// chunks one after another pay 4 (a + e) = 4 (500 + 10) ns per hop, and the one-way ring of
// B = 50 GiB/s is a two-way ring of B / 2 per direction. An all-gather of S = 1 MiB per rank on n
// ranks: (n - 1) (4 (a + e) + S / B), ASTRA-sim's own formula 4 (n - 1) (a + e + (S / 4) / B).
// A reduce-scatter of S = 1 MiB (the input): n - 1 steps of 4 (a + e) + S / (n B), plus the local
// reduction of its system's local-mem-bw M = 1,600 GB/s: 3 (n - 1) / n S / M (read the received
// and the local operand, write the sum; network/local_reduction.h).
TEST(ChakraCli, AstraSimFilesGiveTheirConventions) {
  const double mib = 1 << 20, bw = 50.0 * (1 << 30), mem = 1.6e12;
  for (const int64_t n : {4, 8, 16}) {
    EXPECT_NEAR(micros("all_gather", n, true), (n - 1) * (4 * 0.510 + mib / bw * 1e6), 5e-5) << n;
    const double reduction = 3.0 * (n - 1) / n * mib / mem * 1e6;
    EXPECT_NEAR(micros("reduce_scatter", n, true),
                (n - 1) * (4 * 0.510 + mib / (n * bw) * 1e6) + reduction, 5e-5)
        << n;
  }
}

// Writing any workload as Chakra and reading it back gives the same iteration time in event mode,
// to the picosecond (JSON prints seconds to 12 decimals).
void expect_round_trip(const std::string& name, const std::string& source,
                       const std::string& cluster, const std::string& mode = "event") {
  const std::string dir = ::testing::TempDir() + "/chakra_" + name;
  fs::remove_all(dir);
  const CliRun convert =
      orrery("convert " + source + " --cluster " + cluster + " --to chakra -o " + dir);
  ASSERT_EQ(convert.status, 0) << convert.err;
  const std::string options = " --cluster " + cluster + " --mode " + mode + " --json";
  const auto original = run_json("simulate " + source + options);
  const auto read_back = run_json("simulate " + dir + options);
  ASSERT_FALSE(original.is_null());
  ASSERT_FALSE(read_back.is_null());
  EXPECT_EQ(read_back["iteration_time_s"].get<double>(), original["iteration_time_s"].get<double>())
      << name;
  fs::remove_all(dir);
}

TEST(ChakraCli, SimaiTextRoundTrips) {
  expect_round_trip("simai", kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt",
                    "dgx-a100");
}

// Flow mode runs the trace's communication as flows, as it runs the SimAI file's: the same time
// (the same steps and flows on the same links).
TEST(ChakraCli, SimaiTextRoundTripsInFlowMode) {
  expect_round_trip("simai_flow", kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt",
                    "dgx-a100", "flow");
}

TEST(ChakraCli, ModelDescriptionRoundTrips) {
  expect_round_trip("model", "--model gpt3-1.3b --gpus 16 --tp 2 --pp 4 --gbs 32", "hgx-h100");
}

TEST(ChakraCli, NeusightTableRoundTrips) {
  expect_round_trip("neusight", kSource + "/examples/neusight/gpt2_large_block_b16_s1024.txt",
                    "hgx-h100");
}

TEST(ChakraCli, TorchvizGraphRoundTrips) {
  expect_round_trip("torchviz", kSource + "/examples/torchviz/moe_qformer_b4_s45.dot", "dgx-a100");
}

// A model named "../../escaped" / its traces are written inside -o as _.._escaped.RANK.et and
// nothing beside the output directory, because a workload's name only gives its files' stem.
TEST(ChakraCli, AWorkloadNameNeverLeadsOutOfTheOutputDirectory) {
  const std::string root = ::testing::TempDir() + "/chakra_name";
  fs::remove_all(root);
  fs::create_directories(root + "/a/b");
  const std::string model = root + "/evil.yaml";
  std::ofstream(model) << "name: ../../escaped\nlayers: 2\nhidden: 64\nheads: 2\nvocab: 128\n"
                          "seq: 64\n";
  const CliRun r = orrery("convert --model " + model + " --gpus 2 --tp 2 --gbs 2 --to chakra -o " +
                          root + "/a/b/out");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(root + "/a/b/out/_.._escaped.0.et"));
  EXPECT_TRUE(fs::exists(root + "/a/b/out/_.._escaped.1.et"));
  for (const auto& entry : fs::recursive_directory_iterator(root))
    EXPECT_TRUE(entry.path().string().starts_with(root + "/a/b/out") ||
                entry.path() == fs::path(model) || entry.path() == fs::path(root + "/a") ||
                entry.path() == fs::path(root + "/a/b"))
        << entry.path();
  fs::remove_all(root);
}

// Broken sets: one line naming the file and what was expected, exit status 2.
TEST(ChakraCli, BrokenTraceSetsAreRefusedInOneLine) {
  const std::string dir = ::testing::TempDir() + "/chakra_broken";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy(kChakra + "all_reduce_4npus_1MB", dir);
  fs::remove(dir + "/all_reduce.2.et");
  CliRun r = orrery("simulate " + dir + " --cluster " + kChakra + "ring_4npus.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("all_reduce.2.et: expected the trace of rank 2"), std::string::npos)
      << r.err;
  {
    std::ofstream groups(dir + "/comm_group.json");
    groups << R"({"0": [0, 1, 7]})";
  }
  fs::copy(kChakra + "all_reduce_4npus_1MB/all_reduce.0.et", dir + "/all_reduce.2.et");
  r = orrery("simulate " + dir + "/all_reduce.0.et --cluster " + kChakra + "ring_4npus.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("group '0': expected ranks from 0 to 3 (the traces' ranks), found 7"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace orrery::e2e
