// Calculon's inputs through `orrery simulate`: a Calculon model (--model FILE.json) and execution
// (--plan FILE.json) give the same iteration as the same model in Orrery's YAML with the same plan
// as flags, because each key maps onto one Orrery setting (docs/calculon.md, "Mapping").
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

using nlohmann::json;

const std::string kDir = std::string(ORRERY_SOURCE_DIR) + "/examples/calculon/";
const std::string kCalculon = "simulate --json --model " + kDir + "gpt3-13b.json --plan " + kDir +
                              "tp4_pp2_dp8_interleaved.json";
// tp4_pp2_dp8_interleaved.json spelled as Orrery's flags, on the YAML twin of gpt3-13b.json.
const std::string kNativeModel = "simulate --json --model " + kDir + "gpt3-13b.yaml";
const std::string kNativePlan =
    " --gpus 64 --tp 4 --pp 2 --vpp 2 --mbs 2 --gbs 256 --recompute selective "
    "--sequence-parallel --distributed-optimizer --dtype bf16";

json run_json(const std::string& args) {
  const CliRun r = orrery(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? json::parse(r.out) : json();
}

bool warns(const json& result, const std::string& text) {
  for (const auto& w : result["warnings"])
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

// The bundled execution with the keys of `changes` set to their values, written to `dir`.
std::string execution_with(const fs::path& dir, const json& changes) {
  json j = json::parse(read_file(kDir + "tp4_pp2_dp8_interleaved.json"));
  j.update(changes);
  const fs::path path = dir / "execution.json";
  std::ofstream(path) << j.dump(2);
  return path.string();
}

TEST(CalculonCli, ModelAndPlanGiveTheNativeIteration) {
  const json calculon = run_json(kCalculon);
  const json native = run_json(kNativeModel + kNativePlan);
  ASSERT_FALSE(calculon.is_null());
  EXPECT_EQ(calculon["iteration_time_s"], native["iteration_time_s"]);
  EXPECT_GT(calculon["iteration_time_s"].get<double>(), 0);
  EXPECT_TRUE(warns(calculon, "vocab taken as 51200")) << calculon["warnings"];
}

TEST(CalculonCli, AnExplicitFlagOverridesThePlanWithAWarning) {
  // --tp 8 over tensor_par 4 / the native run with --tp 8, and a warning naming the key.
  const json calculon = run_json(kCalculon + " --tp 8");
  std::string plan = kNativePlan;
  plan.replace(plan.find("--tp 4"), 6, "--tp 8");
  const json native = run_json(kNativeModel + plan);
  EXPECT_EQ(calculon["iteration_time_s"], native["iteration_time_s"]);
  EXPECT_TRUE(warns(calculon, "--tp overrides")) << calculon["warnings"];
  EXPECT_TRUE(warns(calculon, "tensor_par")) << calculon["warnings"];
}

TEST(CalculonCli, NoDataParallelOverlapIsNoOverlap) {
  // data_par_overlap false / the native run with --no-overlap, because Calculon then runs every
  // collective exposed.
  TempDir dir;
  const std::string file = execution_with(dir.path(), {{"data_par_overlap", false}});
  const json calculon =
      run_json("simulate --json --model " + kDir + "gpt3-13b.json --plan " + file);
  const json native = run_json(kNativeModel + kNativePlan + " --no-overlap");
  const json overlapped = run_json(kNativeModel + kNativePlan);
  EXPECT_EQ(calculon["iteration_time_s"], native["iteration_time_s"]);
  EXPECT_NE(calculon["iteration_time_s"], overlapped["iteration_time_s"]);
}

TEST(CalculonCli, MultiQueryAttentionIsOneKeyValueHead) {
  // attention_type multiquery (with TP 1, as Megatron-LM needs) / the YAML model with kv_heads 1.
  TempDir dir;
  const std::string file = execution_with(
      dir.path(), {{"attention_type", "multiquery"}, {"tensor_par", 1}, {"data_par", 32}});
  const json calculon =
      run_json("simulate --json --model " + kDir + "gpt3-13b.json --plan " + file);
  std::string yaml = read_file(kDir + "gpt3-13b.yaml");
  yaml += "kv_heads: 1\n";
  const fs::path model = dir.path() / "mqa.yaml";
  std::ofstream(model) << yaml;
  std::string plan = kNativePlan;
  plan.replace(plan.find("--tp 4"), 6, "--tp 1");
  const json native = run_json("simulate --json --model " + model.string() + plan);
  const json multi_head = run_json(kNativeModel + plan);
  EXPECT_EQ(calculon["iteration_time_s"], native["iteration_time_s"]);
  EXPECT_NE(calculon["iteration_time_s"], multi_head["iteration_time_s"]);
}

TEST(CalculonCli, SystemGivesItsOrreryTwin) {
  // Calculon's system / the same numbers written as Orrery's cluster and device files
  // (tests/data/calculon/), because each key maps onto one cluster or device field; and not the
  // default cluster's time, because the system's own device and links price the run.
  const std::string data = std::string(ORRERY_SOURCE_DIR) + "/tests/data/calculon/";
  const json calculon = run_json(kCalculon + " --cluster " + kDir + "h100-nvl8.json");
  const json twin =
      run_json(kCalculon + " --cluster " + data + "h100-nvl8-twin-cluster.yaml --device " + data +
               "h100-nvl8-twin-device.yaml");
  ASSERT_FALSE(calculon.is_null());
  EXPECT_EQ(calculon["iteration_time_s"], twin["iteration_time_s"]);
  EXPECT_NE(calculon["iteration_time_s"], run_json(kCalculon)["iteration_time_s"]);
  EXPECT_TRUE(warns(calculon, "'mem2'")) << calculon["warnings"];
  EXPECT_TRUE(warns(calculon, "network 1 key 'processor_usage'")) << calculon["warnings"];
}

TEST(CalculonCli, BadPlanIsOneLineNamingFileAndKey) {
  TempDir dir;
  const std::string file = execution_with(dir.path(), {{"num_procs", 48}});
  const CliRun r = orrery("simulate --model " + kDir + "gpt3-13b.json --plan " + file);
  EXPECT_EQ(r.status, 2);
  // The file is written with its keys sorted: num_procs is the 11th key, on line 12.
  EXPECT_NE(r.err.find(file + ":12: 'num_procs': expected tensor_par x pipeline_par x data_par = "
                              "64, found 48"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  const CliRun without_model =
      orrery("simulate " + std::string(ORRERY_SOURCE_DIR) +
             "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt --plan " + file);
  EXPECT_EQ(without_model.status, 2);
  EXPECT_NE(without_model.err.find("--plan describes a parallel plan for --model"),
            std::string::npos)
      << without_model.err;
}

}  // namespace
}  // namespace orrery::e2e
