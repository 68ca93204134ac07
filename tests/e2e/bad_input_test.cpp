// End-to-end tests of what the CLI refuses: every case is one line on stderr saying what was
// expected, exit status 2, nothing on stdout and no file touched.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using orrery::e2e::CliRun;
using orrery::e2e::orrery;
using orrery::e2e::read_file;
using orrery::e2e::TempDir;

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kSeed003 = kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";

// The seed 003 listing with line `n` (1-based) replaced.
std::string seed003_with_line(size_t n, const std::string& replacement) {
  std::istringstream in(read_file(kSeed003));
  std::string out, line;
  for (size_t k = 1; std::getline(in, line); ++k)
    out += (k == n ? replacement : line) + "\n";
  return out;
}

// Runs `orrery <args>` and expects a refusal whose one line contains `expected`.
void expect_refused(const std::string& args, const std::string& expected) {
  const CliRun r = orrery(args);
  EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(expected), std::string::npos) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(BadInput, AnUnknownSubcommandIsNamed) {
  // `orrery frobnicate` / refused in one line naming the word and the subcommands, because a
  // mistyped subcommand is the commonest first error.
  expect_refused("frobnicate", "unknown subcommand 'frobnicate'; expected one of: simulate");
}

TEST(BadInput, NumericFlagsSayWhatTheyExpect) {
  expect_refused("simulate " + kSeed003 + " -g 0",
                 "--gpus: expected an integer from 1 to 1048576, found '0'");
  expect_refused("simulate " + kSeed003 + " --dp-overlap nan",
                 "--dp-overlap: expected a number in [0, 1], found 'nan'");
  expect_refused("collective --op allreduce --size 1MiB --ranks 2000000000",
                 "--ranks: expected an integer from 1 to 1048576, found '2000000000'");
}

TEST(BadInput, AnEmptyValueIsNotTakenAsTheFlagLeftOut) {
  // `--placement ""` and the like / refused, because running on the default cluster, placement
  // or device (or writing nothing) while the user named one is a silently wrong answer.
  for (const auto& [flag, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--cluster", "a preset name or a YAML file"},
           {"--placement", "parallel axes such as tp,ep,dp,pp"},
           {"--device", "a preset name or a YAML file"},
           {"--model", "a preset name or a model file"},
           {"--trace", "a file to write"},
           {"--report", "a file to write"},
           {"--csv", "a file to write"}})
    expect_refused("simulate " + kSeed003 + " " + flag + " ''",
                   flag + ": expected " + expected + ", found ''");
  expect_refused("simulate " + kSeed003 + " -o ''",
                 "--output-dir: expected a directory to write into, found ''");
  expect_refused("explore --model gpt3-175b --gpus 64 --cluster ''",
                 "--cluster: expected a preset name or a YAML file, found ''");
  expect_refused("explore --model gpt3-175b --gpus 64 --db ''",
                 "--db: expected a database file, found ''");
  expect_refused("convert " + kSeed003 + " --to chakra -o out --cluster-out ''",
                 "--cluster-out: expected a file to write, found ''");
}

TEST(BadInput, TimesBeyondTheRangeOfTimeAreRefusedNotWrapped) {
  // Two compute fields of 9e15 ns (104 days each): their sum passes the 2^63 ps (106 days) range.
  TempDir dir;
  const fs::path big = dir.path() / "big.txt";
  std::ofstream(big) << seed003_with_line(
      10,
      "attention_column_1\t-1\t9000000000000000\tALLGATHER\t3145728\t9000000000000000\t"
      "REDUCESCATTER\t1572864\t122558\tNONE\t0\t100");
  // The error names the workload whose times they are.
  for (const char* mode : {"event", "analytical"})
    expect_refused("simulate " + big.string() + " --mode " + mode,
                   big.string() + ": a simulated time exceeds the range Orrery represents");
  // Bandwidths far outside any network are refused where they are given.
  expect_refused("simulate " + kSeed003 + " --nic-busbw '1 B/s'",
                 "bandwidth must be between 1 MB/s and 1 PB/s");
}

TEST(BadInput, SimaiListingsGetTheReadersOwnErrors) {
  TempDir dir;
  const fs::path policy = dir.path() / "micro.txt";
  std::ofstream(policy) << "MICRO\n1\nlayer1\t-1\t1000\tNONE\t0\t1000\tNONE\t0\t1000\tALLREDUCE\t"
                           "1048576\t100\n";
  expect_refused("simulate " + policy.string(), "micro.txt:1: policy 'MICRO' is not supported");
  const fs::path count = dir.path() / "count.txt";
  std::ofstream(count) << seed003_with_line(2, "abc");
  expect_refused("simulate " + count.string(),
                 "count.txt:2: expected the number of layer records on line 2, found 'abc'");
  const fs::path none = dir.path() / "none.txt";
  std::ofstream(none) << seed003_with_line(2, "0");
  expect_refused("simulate " + none.string(),
                 "none.txt:2: expected at least one layer record, found a count of 0");
}

TEST(BadInput, MoreModelChunksThanLayersAndWorldsBeyondTheLimit) {
  const std::string header = read_file(kSeed003).substr(0, read_file(kSeed003).find('\n'));
  TempDir dir;
  const fs::path vpp = dir.path() / "vpp.txt";
  std::string line = header;
  line.replace(line.find("vpp: 8"), 6, "vpp: 1000");
  std::ofstream(vpp) << seed003_with_line(1, line);
  expect_refused("simulate " + vpp.string() + " --schedule interleaved",
                 "vpp.txt:1: expected vpp (1000) at most the layers of a micro-batch pass");
  const fs::path world = dir.path() / "world.txt";
  line = header;
  line.replace(line.find("all_gpus: 128"), 13, "all_gpus: 4294967424");
  std::ofstream(world) << seed003_with_line(1, line);
  expect_refused("simulate " + world.string(), "world size 4294967424 is beyond the 1048576 GPUs");
}

TEST(BadInput, OutputsNeverReplaceInputs) {
  TempDir dir;
  const fs::path workload = dir.path() / "w.txt";
  std::ofstream(workload) << read_file(kSeed003);
  expect_refused("simulate " + workload.string() + " --csv " + workload.string(),
                 "refusing to overwrite an input of this run");
  EXPECT_EQ(read_file(workload), read_file(kSeed003));
  expect_refused("simulate " + dir.path().string(), "expected a workload file, found a directory");
}

TEST(BadInput, NothingIsWrittenOutsideTheOutputsOrHalfway) {
  // A run name is a file name: '../x' would write outside -o DIR. Refused before anything is
  // written, so DIR is not even created.
  TempDir dir;
  const fs::path out = dir.path() / "out";
  expect_refused(
      "simulate " + kSeed003 + " --compat simai -o " + out.string() + " --run-name ../escaped",
      "--run-name: expected a file name without a directory part, found '../escaped'");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(dir.path() / "escapedEndToEnd.csv"));
  // Two outputs on one path: refused up front, nothing left behind.
  expect_refused("simulate " + kSeed003 + " -o " + out.string() + " --csv " + out.string(),
                 "--csv and -o name the same path");
  EXPECT_FALSE(fs::exists(out));
  // A complete run leaves its files and no temporary ones.
  ASSERT_EQ(orrery("simulate " + kSeed003 + " -o " + out.string()).status, 0);
  for (const auto& entry : fs::directory_iterator(out))
    EXPECT_EQ(entry.path().string().find("partial"), std::string::npos) << entry.path();
}

TEST(BadInput, ReadmeClusterExampleRuns) {
  // The minimal cluster file of the README, as printed there.
  const std::string readme = read_file(kSource + "/README.md");
  const size_t intro = readme.find("A minimal file:");
  ASSERT_NE(intro, std::string::npos);
  const size_t begin = readme.find("```yaml\n", intro) + 8;
  const size_t end = readme.find("```", begin);
  std::istringstream block(readme.substr(begin, end - begin));
  std::string yaml, line;
  while (std::getline(block, line))
    yaml += line.substr(std::min(line.find_first_not_of(' '), size_t{2})) + "\n";
  TempDir dir;
  const fs::path file = dir.path() / "mine.yaml";
  std::ofstream(file) << yaml;
  const CliRun r = orrery("simulate " + kSeed003 + " --cluster " + file.string());
  EXPECT_EQ(r.status, 0) << r.err << "\n" << yaml;
  EXPECT_NE(r.out.find("cluster    my-h100-cluster"), std::string::npos) << r.out;
}

}  // namespace
