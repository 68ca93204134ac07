// End-to-end tests of what a user sees first: results that say what produced them (provenance,
// the compute's source, job labels, warnings in the user's terms), one default cluster, the
// cluster overrides of simulate and collective, bandwidth units, --csv -, flags that do not
// apply, and SimAI's own invocation (-w, -r).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace {

namespace fs = std::filesystem;
using orrery::e2e::CliRun;
using orrery::e2e::orrery;
using orrery::e2e::read_file;
using orrery::e2e::TempDir;

const std::string kSource = ORRERY_SOURCE_DIR;
const std::string kSeed001 = kSource + "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt";
const std::string kSeed003 = kSource + "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt";
const std::string kSeed002 = kSource + "/examples/neusight/gpt2_large_block_b16_s1024.txt";
const std::string kSeed004 = kSource + "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

nlohmann::json run_json(const std::string& args) {
  const CliRun r = orrery(args + " --json");
  EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  return nlohmann::json::parse(r.out);
}

// sha256sum's digest of a file: the checksum the provenance must carry.
std::string sha256sum(const std::string& path) {
  FILE* pipe = ::popen(("sha256sum '" + path + "'").c_str(), "r");
  char digest[65] = {};
  const size_t n = std::fread(digest, 1, 64, pipe);
  ::pclose(pipe);
  return std::string(digest, n);
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool any_warning(const nlohmann::json& j, const std::string& text) {
  for (const auto& w : j["warnings"])
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(Provenance, VersionNamesTheBuild) {
  // The build an explore database is keyed to, so that a report can name the exact binary.
  const CliRun r = orrery("--version");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("orrery 0.1.0 (build 0.1.0+")) << r.out;
  EXPECT_TRUE(r.out.ends_with(")\n")) << r.out;
}

TEST(Provenance, NamesTheRunItsClusterAfterOverridesAndItsInputs) {
  const std::string args = "simulate " + kSeed003 + " --nic-busbw 25";
  const auto j = run_json(args);
  const auto& p = j["provenance"];
  EXPECT_EQ(p["orrery"], "orrery 0.1.0");
  EXPECT_EQ(p["command"], "orrery " + args + " --json");
  // The preset is not reported as if unmodified: its name says what changed.
  EXPECT_EQ(j["cluster"], "hgx-h100 with --nic-busbw 25 GB/s");
  EXPECT_EQ(p["cluster"]["name"], j["cluster"]);
  EXPECT_EQ(p["cluster"]["from"], "hgx-h100");
  EXPECT_EQ(p["cluster"]["overrides"], nlohmann::json::array({"--nic-busbw 25 GB/s"}));
  EXPECT_EQ(p["cluster"]["gpu"], "H100-SXM5-80GB");
  // hgx-h100: NVSwitch 450 GB/s at 0.9; NDR 400 Gb/s = 50 GB/s at 0.94, here 25 GB/s at 0.94.
  const auto& dims = p["cluster"]["dimensions"];
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0]["kind"], "switch");
  EXPECT_DOUBLE_EQ(dims[0]["bandwidth_GBps"].get<double>(), 450);
  EXPECT_DOUBLE_EQ(dims[0]["efficiency"].get<double>(), 0.9);
  EXPECT_EQ(dims[1]["kind"], "fat-tree");
  EXPECT_EQ(dims[1]["rails"].get<int>(), 8);
  EXPECT_DOUBLE_EQ(dims[1]["bandwidth_GBps"].get<double>(), 25);
  EXPECT_DOUBLE_EQ(dims[1]["efficiency"].get<double>(), 0.94);
  EXPECT_DOUBLE_EQ(dims[1]["effective_GBps"].get<double>(), 25 * 0.94);
  // SimAI text gives its compute times: no device priced them.
  EXPECT_EQ(p["compute"], nlohmann::json::array({"times from the workload file"}));
  ASSERT_EQ(p["inputs"].size(), 1u);
  EXPECT_EQ(p["inputs"][0]["path"], kSeed003);
  EXPECT_EQ(p["inputs"][0]["sha256"], sha256sum(kSeed003));
  // No timestamps: the same run gives the same bytes.
  EXPECT_EQ(orrery(args + " --json").out, orrery(args + " --json").out);
}

TEST(Provenance, InResultJsonWithEveryInputFileAndTheDeviceThatPricedCompute) {
  TempDir dir;
  const fs::path cluster = dir.path() / "mine.yaml";
  std::ofstream(cluster) << read_file(kSource + "/data/presets/clusters/dgx-a100.yaml");
  const CliRun r =
      orrery("simulate " + kSource + "/examples/torchviz/moe_qformer_b4_s45.dot --dp 8 --cluster " +
             cluster.string() + " -o " + (dir.path() / "out").string());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(read_file(dir.path() / "out" / "result.json"));
  const auto& p = j["provenance"];
  EXPECT_EQ(p["cluster"]["from"], cluster.string());
  EXPECT_TRUE(p["cluster"]["overrides"].empty());
  EXPECT_EQ(j["cluster"], "dgx-a100");
  EXPECT_EQ(p["compute"], nlohmann::json::array({"A100-SXM4-80GB"}));
  ASSERT_EQ(p["inputs"].size(), 2u);
  EXPECT_EQ(p["inputs"][1]["path"], cluster.string());
  EXPECT_EQ(p["inputs"][1]["sha256"], sha256sum(cluster.string()));
}

TEST(Summary, SaysWhereComputeTimesComeFrom) {
  CliRun r = orrery("simulate " + kSeed003);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("  cluster    hgx-h100\n  compute    from the workload file, not rescaled "
                       "to H100-SXM5-80GB\n"),
            std::string::npos)
      << r.out;
  r = orrery("simulate " + kSeed003 + " --cluster simai-default");  // gpu: unspecified
  EXPECT_NE(r.out.find("  compute    from the workload file\n"), std::string::npos) << r.out;
  // A priced workload names its device instead.
  r = orrery("simulate " + kSource + "/examples/torchviz/moe_qformer_b4_s45.dot --dp 8");
  EXPECT_EQ(r.out.find("\n  compute    from"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  device     H100-SXM5-80GB\n"), std::string::npos) << r.out;
}

TEST(Jobs, AreLabelledWithTheirGpus) {
  // Flow mode places job 2 on the servers after job 1's 128 GPUs (16 servers of 8).
  const auto j =
      run_json("simulate " + kSeed003 + " " + kSeed002 + " --dp 4 --cluster dgx-a100 --mode flow");
  ASSERT_EQ(j["jobs"].size(), 2u);
  EXPECT_EQ(j["jobs"][0]["job"],
            nlohmann::json({{"index", 1}, {"of", 2}, {"first_gpu", 0}, {"last_gpu", 127}}));
  EXPECT_EQ(j["jobs"][1]["job"],
            nlohmann::json({{"index", 2}, {"of", 2}, {"first_gpu", 128}, {"last_gpu", 131}}));
  const CliRun r =
      orrery("simulate " + kSeed003 + " " + kSeed002 + " --dp 4 --cluster dgx-a100 --mode flow");
  EXPECT_NE(r.out.find("Job 1 of 2: moe_tp8_ep4_pp4_vpp8_128gpus, GPUs 0 to 127 (sharing the "
                       "network with the other jobs)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Job 2 of 2: gpt2_large_block_b16_s1024, GPUs 128 to 131"),
            std::string::npos);
  // The event mode runs each job alone, from GPU 0.
  const CliRun e = orrery("simulate " + kSeed003 + " " + kSeed002 + " --dp 4");
  EXPECT_NE(e.out.find("Job 2 of 2: gpt2_large_block_b16_s1024, GPUs 0 to 3 (run alone"),
            std::string::npos)
      << e.out;
}

TEST(Json, WholeQuantitiesAreIntegers) {
  // Bytes: the memory of a model run and the links of a flow run.
  const auto model = run_json("simulate --model gpt3-1.3b --gpus 8 --tp 2 --pp 2 --gbs 16");
  for (const auto& [key, value] : model["memory"]["stages"][0].items()) {
    if (key.ends_with("_bytes")) {
      EXPECT_TRUE(value.is_number_integer()) << key << ": " << value;
    }
  }
  EXPECT_TRUE(model["memory"]["capacity_bytes"].is_number_integer());
  const auto flow = run_json("simulate " + kSeed003 + " --mode flow");
  ASSERT_FALSE(flow["hottest_links"].empty());
  for (const auto& link : flow["hottest_links"]) {
    EXPECT_TRUE(link["bytes"].is_number_integer()) << link;
  }
}

TEST(Warnings, PlacementInTheUsersTermsAndNoneForUnusedGroups) {
  // Seed 001 on dgx-a100 (20 servers per leaf): TP 8 fills a server, so each DP group has one GPU
  // on each of 8 consecutive servers; the group on servers 16-23 crosses the leaf at server 20.
  const auto j = run_json("simulate " + kSeed001 + " --cluster dgx-a100");
  EXPECT_TRUE(any_warning(j,
                          "with 20 servers per leaf, some DP groups of 8 servers straddle two "
                          "leaves; each is costed like the most spread (placement "
                          "tp,ep,dp,pp)"))
      << j["warnings"].dump(1);
  // EP = 1: no word about expert or expert-data-parallel groups.
  EXPECT_FALSE(any_warning(j, "DP_EP")) << j["warnings"].dump(1);
  EXPECT_FALSE(any_warning(j, "dp_ep")) << j["warnings"].dump(1);
}

TEST(Cluster, OneDefaultForEverySubcommandAndSimaiRunsKeepSimais) {
  EXPECT_EQ(run_json("simulate " + kSeed003)["cluster"], "hgx-h100");
  EXPECT_EQ(run_json("simulate " + kSeed003 + " --compat simai")["cluster"], "simai-default");
  EXPECT_EQ(run_json("simulate --model gpt3-1.3b --gpus 8 --gbs 8")["cluster"], "hgx-h100");
  EXPECT_EQ(run_json("collective --size 1GiB")["cluster"], "hgx-h100");
  EXPECT_NE(orrery("simulate --help")
                .out.find("(default: hgx-h100; simai-default with --compat "
                          "simai or SimAI's -w)"),
            std::string::npos);
}

double iteration(const std::string& args) {
  return run_json("simulate " + kSeed003 + " " + args)["iteration_time_s"].get<double>();
}

TEST(Cluster, BareBandwidthIsGBPerSecondAndOverridesKeepThePresetsEfficiency) {
  // A bare number is GB/s.
  EXPECT_EQ(iteration("--nic-busbw 25"), iteration("--nic-busbw '25 GB/s'"));
  EXPECT_NE(iteration("--nic-busbw 25"), iteration("--nic-busbw '25 GiB/s'"));
  // Overriding a link with the preset's own figure changes nothing: its efficiency (0.9 on
  // hgx-h100's NVSwitch) still applies. Efficiency 1 makes it faster.
  const double preset = iteration("");
  EXPECT_EQ(iteration("--nvlink-busbw 450"), preset);
  EXPECT_EQ(iteration("--nic-busbw '400 Gb/s'"), preset);
  EXPECT_LT(iteration("--nvlink-busbw 450 --nvlink-efficiency 1"), preset);
  // The help says so.
  const std::string help = orrery("simulate --help").out;
  EXPECT_NE(help.find("GB/s (10^9 B/s) when bare"), std::string::npos);
  EXPECT_NE(help.find("the preset's efficiency still applies"), std::string::npos);
  // In YAML too: `bandwidth: 450` is 450 GB/s.
  TempDir dir;
  const fs::path yaml = dir.path() / "bare.yaml";
  std::string text = read_file(kSource + "/data/presets/clusters/hgx-h100.yaml");
  const size_t at = text.find("bandwidth: 450 GB/s");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 19, "bandwidth: 450");
  std::ofstream(yaml) << text;
  EXPECT_EQ(iteration("--cluster " + yaml.string()), preset);
}

TEST(Cluster, SimaisOwnBandwidthFlagsKeepGiBPerSecondAtFullEfficiency) {
  // SimAI's -nv / -nic are its bus bandwidths in GiB/s.
  EXPECT_EQ(iteration("-nic 48.5"), iteration("--nic-busbw '48.5 GiB/s' --nic-efficiency 1"));
  // In SimAI's mode they are what SimAI's defaults are: dgx-a100's servers (8 GPUs, 8 NICs) at
  // SimAI's 360 / 48.5 GiB/s give simai-default's answer.
  EXPECT_EQ(run_json("simulate " + kSeed003 +
                     " --compat simai --cluster dgx-a100 -nv 360 -nic 48.5")["simai"],
            run_json("simulate " + kSeed003 + " --compat simai")["simai"]);
}

TEST(Collective, TakesTheClusterOverridesOfSimulate) {
  const auto plain = run_json("collective --size 1GiB --ranks 16");
  const auto slow = run_json("collective --size 1GiB --ranks 16 --nic-busbw 12.5");
  EXPECT_EQ(slow["cluster"], "hgx-h100 with --nic-busbw 12.5 GB/s");
  EXPECT_GT(slow["results"][0]["time_s"].get<double>(),
            plain["results"][0]["time_s"].get<double>());
  // Two servers of 4 GPUs: the same 8 ranks now cross the network.
  const auto one = run_json("collective --size 1GiB --ranks 8 --algo ring");
  const auto two = run_json("collective --size 1GiB --ranks 8 --algo ring --gpus-per-server 4");
  EXPECT_GT(two["results"][0]["time_s"].get<double>(), one["results"][0]["time_s"].get<double>());
  EXPECT_EQ(two["provenance"]["cluster"]["dimensions"][0]["size"].get<int>(), 4);
  for (const char* flag :
       {"--nics-per-server", "--gpus-per-server", "--nvlink-busbw", "--nic-busbw"})
    EXPECT_NE(orrery("collective --help").out.find(flag), std::string::npos) << flag;
  const CliRun bad = orrery("collective --size 1GiB --nic-busbw fast");
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(bad.err,
            "orrery: --nic-busbw: expected a positive bandwidth such as '300 GB/s', found "
            "'fast'\n");
}

TEST(Csv, DashIsStandardOutput) {
  CliRun r = orrery("simulate " + kSeed003 + " --csv -");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("layer,line,executions,recomputes,", 0), 0u) << r.out.substr(0, 200);
  EXPECT_EQ(r.out.find("iteration time"), std::string::npos);
  r = orrery("simulate " + kSeed003 + " --compat simai --csv -");
  EXPECT_EQ(r.out.rfind("File name, Expose DP comm", 0), 0u) << r.out.substr(0, 200);
  r = orrery("simulate " + kSeed003 + " --csv - --json");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "orrery: --csv - and --json both write to standard output; give one\n");
  r = orrery("simulate " + kSeed004 + " --csv -");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("config,", 0), 0u) << r.out.substr(0, 200);
}

TEST(Flags, ThatDoNotApplyAreWarnedForEveryFormat) {
  // DFModel-only flags on a NeuSight table, a SimAI file and a model.
  auto j = run_json("simulate " + kSeed002 + " --dp 2 --top 3 --execution kbk");
  EXPECT_TRUE(any_warning(j, "--top applies to DFModel files only; ignored"));
  EXPECT_TRUE(any_warning(j, "--execution applies to DFModel files only; ignored"));
  j = run_json("simulate " + kSeed003 + " --threads 2 --rank-by event");
  EXPECT_TRUE(any_warning(j, "--threads applies to DFModel files only; ignored"));
  EXPECT_TRUE(any_warning(j, "--rank-by applies to DFModel files only; ignored"));
  j = run_json("simulate --model gpt3-1.3b --gpus 8 --gbs 8 --layers 4 --time-limit 5");
  EXPECT_TRUE(any_warning(j, "--layers applies to neusight workloads only; ignored"));
  EXPECT_TRUE(any_warning(j, "--time-limit applies to DFModel files only; ignored"));
  // Workload flags on a DFModel file.
  j = run_json("simulate " + kSeed004 + " --layers 4 --dp-overlap 0.5");
  EXPECT_TRUE(any_warning(j,
                          "--layers applies to layer-wise and operator-level workloads, not "
                          "DFModel files; ignored"));
  EXPECT_TRUE(any_warning(j, "--dp-overlap applies to layer-wise"));
}

TEST(SimaiInvocation, DashWIsSimaisAnalyticalModeAndDashRSaysWhereItWrites) {
  TempDir dir;
  // As SimAI's README runs it: -w FILE -g N -g_p_s 8 -r PREFIX.
  CliRun r = orrery("simulate -w " + kSeed003 + " -g 128 -g_p_s 8 -r seed003-", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"seed003-EndToEnd.csv"});
  EXPECT_EQ(read_file(dir.path() / "seed003-EndToEnd.csv"),
            read_file(kSource + "/tests/golden/simai/seed003-EndToEnd.csv"));
  EXPECT_NE(r.out.find("simai figures"), std::string::npos) << r.out;
  // -r is a path prefix, as SimAI's (results/test- writes results/test-EndToEnd.csv).
  fs::create_directory(dir.path() / "results");
  r = orrery("simulate -w " + kSeed003 + " -r results/test-", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(names_in(dir.path() / "results"), std::vector<std::string>{"test-EndToEnd.csv"});
  // The JSON is SimAI's analytical mode on SimAI's defaults.
  const auto j = run_json("simulate -w " + kSeed003);
  EXPECT_EQ(j["cluster"], "simai-default");
  EXPECT_EQ(j["simai"]["total_us"].get<int64_t>(), 71889);
}

TEST(SimaiInvocation, NothingIsWrittenUnlessAsked) {
  TempDir dir;
  // SimAI's invocation without -r, and the native syntax without -o or --csv: no file at all.
  for (const std::string& args :
       {"simulate -w " + kSeed003 + " -g 128", "simulate " + kSeed003 + " --compat simai -r x-",
        "simulate " + kSeed003})
    ASSERT_EQ(orrery(args, dir.path()).status, 0) << args;
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(SimaiInvocation, BusbwFileAsSimaisReadmeShowsIt) {
  TempDir dir;
  // One TP all-reduce of 1 GiB on 8 GPUs.
  std::ofstream(dir.path() / "w.txt")
      << "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1 "
         "all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm 0\n1\n"
         "attention\t-1\t1000\tALLREDUCE\t1073741824\t1000\tNONE\t0\t1000\tNONE\t0\t100\n";
  // SimAI's example/busbw.yaml layout: a name line, then sections of `collective,: busbw`.
  std::ofstream(dir.path() / "busbw.yaml")
      << "test\nTP:\n  allreduce,: 100      # TP all-reduce\n  allgather,: 280\n"
         "  reducescatter,: 280\n  alltoall,: 230\nDP:\n  allreduce,: null\n  allgather,: 380\n"
         "  reducescatter,: 380\n  alltoall,: null\nEP:\n  allreduce,: null\n  allgather,: 45\n"
         "  reducescatter,: 45\n  alltoall,: 80\nPP:\n  busbw: 47.5\n";
  CliRun r = orrery("simulate -w w.txt -g 8 -busbw busbw.yaml -r t-", dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  // 1 GiB at 100 GiB/s times 2 x 7/8: 17,500 us (without the file: 360 GiB/s, 4,861 us).
  const std::string csv = read_file(dir.path() / "t-EndToEnd.csv");
  EXPECT_NE(csv.find("\nattention,Analytical_test,1,1,1,17500,0,0,17500,57.14,100.00,"),
            std::string::npos)
      << csv;
  const auto plain = run_json("simulate -w " + (dir.path() / "w.txt").string());
  EXPECT_EQ(plain["simai"]["expose_tp_us"].get<int64_t>(), 4861);
  const auto j = run_json("simulate -w " + (dir.path() / "w.txt").string() + " -busbw " +
                          (dir.path() / "busbw.yaml").string());
  EXPECT_EQ(j["simai"]["expose_tp_us"].get<int64_t>(), 17500);
  EXPECT_TRUE(any_warning(j,
                          "busbw.yaml:18: PP busbw: SimAI's analytical pipeline term uses no "
                          "bandwidth"));
  // A value that is no bandwidth names the line.
  std::ofstream(dir.path() / "bad.yaml") << "test\nTP:\n  allreduce,: fast\n";
  r = orrery("simulate -w w.txt -busbw bad.yaml", dir.path());
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "orrery: bad.yaml:3: expected a positive bus bandwidth or null for "
            "'allreduce', found 'fast'\n");
  // Outside SimAI's mode it is warned about, not used.
  EXPECT_TRUE(any_warning(
      run_json("simulate " + kSeed003 + " --busbw " + (dir.path() / "busbw.yaml").string()),
      "--busbw (SimAI's -busbw) applies only to SimAI-compatible runs"));
}

}  // namespace
