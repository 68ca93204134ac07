// Validation of predictions from a model description against real training runs: every row of
// tests/data/megatron_selene_table5.csv (Megatron-LM on Selene, A100) and tests/data/
// nemo_h100_fp8.csv (NeMo 24.07 on DGX H100, FP8) is predicted with the default presets and the
// row's published plan, no per-row knob, and the mean absolute percentage error (MAPE) of each
// table is held to what docs/validation.md reports. No constant of the models was fitted on these
// rows (docs/validation.md lists where each comes from).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.h"
#include "test_data.h"

namespace orrery::e2e {
namespace {

// MAPE ceilings (%), each today's MAPE (docs/validation.md) plus under half a point. Every row of
// both tables is a check: no constant was fitted on them. Known bias: every Selene row is predicted
// too fast, and 8 of the 12 NeMo rows (those with TP 1 by 6-12 %).
constexpr double kSeleneMapeCeiling = 4.3;  // today 3.8 %; the goal, 5 %, is met
constexpr double kNemoMapeCeiling = 6.1;    // today 5.6 %; the goal, 10 %, is met
// Reported beside them, held loosely: Megatron-LM of 2021, whose schedule the table does not state.
constexpr double kNarayananMapeCeiling = 8.6;  // today 8.1 %, every row too fast

double predicted_seconds(const std::string& args) {
  const CliRun r = orrery("simulate " + args + " --json");
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  if (r.status != 0) return 0;
  return nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
}

// Table 5 as published: fp16, unfused attention (Megatron in 2022), TP 8, the p2p of its time
// (blocking); "sel" rows add sequence parallelism and selective recompute.
TEST(TrainingValidation, MegatronSeleneTable5) {
  const auto table = test_data::rows("megatron_selene_table5.csv");
  ASSERT_EQ(table.size(), 8u);
  double abs_sum = 0;
  for (const auto& c : table) {
    const std::string plan =
        "--model " + c[0] + " --cluster dgx-a100 --gpus " + c[1] + " --tp " + c[2] + " --pp " +
        c[3] + " --gbs " + c[4] + " --mbs " + c[5] + " --vpp " + c[6] +
        (c[7] == "full" ? " --recompute full" : " --recompute selective --sequence-parallel") +
        " --attention unfused --dtype fp16 --p2p blocking";
    const double measured = std::stod(c[8]);
    const double error = predicted_seconds(plan) / measured - 1;
    std::printf("| %s | %s | %s | %.2f | %+.1f %% |\n", c[0].c_str(), c[1].c_str(), c[7].c_str(),
                measured, 100 * error);
    abs_sum += std::fabs(error);
  }
  const double mape = 100 * abs_sum / static_cast<double>(table.size());
  std::printf("MAPE %.2f %%\n", mape);
  EXPECT_LE(mape, kSeleneMapeCeiling);
}

// Narayanan et al. 2021, Table 2's PTD-P rows (tests/data/megatron_narayanan_table2.csv): the same
// Selene, data parallelism 4 to 16 (175B) and 2 to 8 (530B) wide, Megatron-LM a year older than
// Table 5's (fp16, unfused attention, blocking p2p, full recompute; no interleaving, which the
// table does not state). Time = the paper's FLOPs per iteration / (TFLOP/s per GPU x GPUs).
TEST(TrainingValidation, NarayananPtdpTable2Reported) {
  const auto table = test_data::rows("megatron_narayanan_table2.csv");
  ASSERT_EQ(table.size(), 6u);
  double abs_sum = 0;
  for (const auto& c : table) {
    const double gpus = std::stod(c[1]), batch = std::stod(c[4]), layers = std::stod(c[6]);
    const double h = std::stod(c[7]), s = 2048, vocab = 51200;
    const double flop =
        96 * batch * s * layers * h * h * (1 + s / (6 * h) + vocab / (16 * layers * h));
    const double measured = flop / (std::stod(c[8]) * 1e12 * gpus);
    const std::string plan = "--model " + c[0] + " --cluster dgx-a100 --gpus " + c[1] + " --tp " +
                             c[2] + " --pp " + c[3] + " --gbs " + c[4] + " --mbs " + c[5] +
                             " --recompute full --attention unfused --dtype fp16 --p2p blocking";
    const double error = predicted_seconds(plan) / measured - 1;
    std::printf("| %s | %s | %.2f | %+.1f %% |\n", c[0].c_str(), c[1].c_str(), measured,
                100 * error);
    abs_sum += std::fabs(error);
  }
  const double mape = 100 * abs_sum / static_cast<double>(table.size());
  std::printf("MAPE %.2f %%\n", mape);
  EXPECT_LE(mape, kNarayananMapeCeiling);
}

// One layer of the 22B model, Korthikanti et al.'s Table 4 (tests/data/megatron_selene_table4.csv):
// the iteration of the 48-layer preset less that of a 24-layer copy
// (tests/data/megatron_22b_24_layers.yaml), over 24, with the optimizer left out (its step grows
// with the layers; Table 4 times the forward and backward passes only) / each configuration's
// layer within 4.5 % of the measured one and the mean error within 4 %, and what recompute and
// sequence parallelism add to a layer within 0.5 ms of what they added on Selene, because the
// layer's GEMMs, attention, element-wise kernels and tensor-parallel collectives are priced from
// kernel- and collective-level data alone. Today every layer is 0.6-2.4 % fast.
TEST(TrainingValidation, MegatronLayerTimesTable4) {
  const auto table = test_data::rows("megatron_selene_table4.csv");
  ASSERT_EQ(table.size(), 5u);
  const std::string half =
      std::string(ORRERY_SOURCE_DIR) + "/tests/data/megatron_22b_24_layers.yaml";
  std::vector<double> predicted, measured;
  double abs_sum = 0;
  for (const auto& c : table) {
    const std::string plan = " --cluster dgx-a100 --gpus 8 --tp 8 --gbs 4 --mbs 4 --recompute " +
                             c[0] + (c[1] == "yes" ? " --sequence-parallel" : "") +
                             " --attention unfused --dtype fp16 --p2p blocking --without optimizer";
    const double layer_ms = 1e3 / 24 *
                            (predicted_seconds("--model megatron-22b" + plan) -
                             predicted_seconds("--model " + half + plan));
    const double error = layer_ms / std::stod(c[4]) - 1;
    std::printf("| %s | %s | %.1f | %.2f | %+.1f %% |\n", c[0].c_str(), c[1].c_str(),
                std::stod(c[4]), layer_ms, 100 * error);
    EXPECT_LT(std::fabs(error), 0.045) << c[0] << " sp " << c[1];
    abs_sum += std::fabs(error);
    predicted.push_back(layer_ms);
    measured.push_back(std::stod(c[4]));
  }
  EXPECT_LT(abs_sum / 5, 0.04);
  for (size_t i = 1; i < 5; ++i)  // rows 1-4 against row 0, the layer without either
    EXPECT_NEAR(predicted[i] - predicted[0], measured[i] - measured[0], 0.5) << "row " << i;
}

// The models whose NeMo recipe sets tp_comm_overlap (Transformer Engine's userbuffers): GPT-3
// 175B, Llama-3 70B and Nemotron-4 340B (MEGATRON-MODEL.md §7.2, the recipes' plans). The other
// rows' recipes either leave it off (Llama-2 7B) or were not read.
bool recipe_overlaps_tp_comm(const std::string& model) {
  return model == "gpt3-175b" || model == "llama3-70b" || model == "nemotron4-340b";
}

// NeMo 24.07 as its recipes run: FP8 with the weights gathered in fp8 (fp8_param_gather, set by
// NeMo's FP8 precision recipe), the distributed optimizer with its parameter all-gather overlapped
// with the next forward (overlap_param_gather, set by NeMo's recipes), sequence parallelism with
// TP > 1, the tensor-parallel collectives beside their GEMMs where the recipe says so
// (tp_comm_overlap), the interleaved schedule's p2p overlapped, context parallelism where the row
// uses it.
TEST(TrainingValidation, NemoH100Fp8) {
  const auto table = test_data::rows("nemo_h100_fp8.csv");
  ASSERT_EQ(table.size(), 12u);
  double abs_sum = 0;
  int predicted = 0;
  for (const auto& c : table) {
    const std::string plan =
        "--model " + c[0] + " --cluster hgx-h100 --gpus " + c[1] + " --gbs " + c[2] + " --mbs " +
        c[3] + " --seq " + c[4] + " --tp " + c[5] + " --pp " + c[6] + " --cp " + c[7] + " --vpp " +
        c[8] + (c[5] != "1" ? " --sequence-parallel" : "") +
        " --distributed-optimizer --overlap-param-gather --dtype fp8 --fp8-param-gather" +
        (recipe_overlaps_tp_comm(c[0]) ? " --tp-comm-overlap" : "");
    const double measured = std::stod(c[2]) * std::stod(c[4]) /
                            (std::stod(c[9]) * std::stod(c[1]));  // gbs x seq / (tok/s/GPU x GPUs)
    const double error = predicted_seconds(plan) / measured - 1;
    std::printf("| %s | %s | %.3f | %+.1f %% |\n", c[0].c_str(), c[1].c_str(), measured,
                100 * error);
    abs_sum += std::fabs(error);
    ++predicted;
  }
  ASSERT_EQ(predicted, 12);
  const double mape = 100 * abs_sum / predicted;
  std::printf("MAPE %.2f %%\n", mape);
  EXPECT_LE(mape, kNemoMapeCeiling);
}

}  // namespace
}  // namespace orrery::e2e
