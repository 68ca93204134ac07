// `orrery simulate --model`: the prediction from a model description and a parallel plan, end to
// end through the CLI (memory, throughput figures, errors naming the flag).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

const std::string kGpt3 =
    "simulate --model gpt3-175b --cluster dgx-a100 --gpus 64 --tp 8 --pp 8 --gbs 64 "
    "--attention unfused --dtype fp16 --json";

nlohmann::json run_json(const std::string& args) {
  const CliRun r = orrery(args);
  EXPECT_EQ(r.status, 0) << r.err;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

// GPT-3 175B on 64 A100-80GB, TP 8, PP 8, mbs 1, GBS 64 / full recompute fits in 80 GiB; no
// recompute without sequence parallelism does not (stage 0 keeps 8 micro-batches of 23 sh per
// layer), and the run says which stage overflows but still simulates it.
TEST(ModelCli, MemoryFitsWithFullRecomputeOnly) {
  const auto full = run_json(kGpt3 + " --recompute full");
  EXPECT_TRUE(full["memory"]["fits"].get<bool>());
  EXPECT_EQ(full["memory"]["stages"].size(), 8u);
  EXPECT_DOUBLE_EQ(full["memory"]["capacity_bytes"].get<double>(), 80.0 * (1 << 30));
  const auto none = run_json(kGpt3);
  EXPECT_FALSE(none["memory"]["fits"].get<bool>());
  EXPECT_GT(none["iteration_time_s"].get<double>(), 0);
  bool warned = false;
  for (const auto& w : none["warnings"])
    warned |= w.get<std::string>().find("stage 0 needs") != std::string::npos;
  EXPECT_TRUE(warned) << none["warnings"];
}

// The throughput figures follow their definitions: model TFLOP/s per GPU = Megatron's
// 72 B s l h^2 (1 + s/6h + V/12lh) / (time x GPUs), MFU = that over the fp16 dense peak (312), and
// tokens/s = B s / time.
TEST(ModelCli, ThroughputFiguresFollowTheirDefinitions) {
  const auto j = run_json(kGpt3 + " --recompute full");
  const double t = j["iteration_time_s"].get<double>();
  const auto& f = j["training"];
  const double b = 64, s = 2048, l = 96, h = 12288, v = 51200;
  const double model_flop = 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
  EXPECT_NEAR(f["model_tflops_per_gpu"].get<double>(), model_flop / (t * 64) / 1e12, 1e-6);
  EXPECT_NEAR(f["mfu"].get<double>(), f["model_tflops_per_gpu"].get<double>() / 312, 1e-9);
  EXPECT_NEAR(f["tokens_per_s"].get<double>(), b * s / t, 1e-6);
  // Full recompute runs the forward twice: the kernels execute more than the model counts.
  EXPECT_GT(f["hfu"].get<double>(), f["mfu"].get<double>());
}

// --train-tokens: time = tokens / (tokens/s), GPU-hours = time x GPUs / 3600; energy only where
// the device preset gives both TDP and idle power (H100: yes, A100: no idle figure).
TEST(ModelCli, TimeCostAndEnergyToTrain) {
  const auto j = run_json(
      "simulate --model gpt3-1.3b --cluster hgx-h100 --gpus 8 --gbs 64 --json "
      "--train-tokens 1e9");
  const auto& f = j["training"];
  const double time = 1e9 / f["tokens_per_s"].get<double>();
  EXPECT_NEAR(f["time_to_train_s"].get<double>(), time, 1e-6 * time);
  EXPECT_NEAR(f["gpu_hours"].get<double>(), time * 8 / 3600, 1e-6 * time);
  EXPECT_GT(f["energy_j"].get<double>(), time * 8 * 80);   // above idle
  EXPECT_LT(f["energy_j"].get<double>(), time * 8 * 700);  // below TDP
  // hgx-h100's price_per_gpu_hour: 2.99 USD (Lambda's list price, March 2026).
  EXPECT_NEAR(f["cost_usd"].get<double>(), f["gpu_hours"].get<double>() * 2.99, 1e-6);
  const auto a100 = run_json(
      "simulate --model gpt3-1.3b --cluster dgx-a100 --gpus 8 --gbs 64 --json "
      "--train-tokens 1e9");
  EXPECT_TRUE(a100["training"]["energy_j"].is_null());
}

// Plans that cannot run are one-line errors naming the flag, exit status 2.
TEST(ModelCli, ImpossiblePlansNameTheFlag) {
  const auto error = [](const std::string& args) {
    const CliRun r = orrery("simulate " + args);
    EXPECT_EQ(r.status, 2) << args;
    return r.err;
  };
  EXPECT_NE(error("--model gpt3-175b --tp 5 --gbs 8")
                .find("--tp 5: expected a divisor of the 96 attention heads"),
            std::string::npos);
  EXPECT_NE(error("--model gpt3-175b --tp 8 --gpus 16 --gbs 9")
                .find("--gbs 9: expected a multiple of mbs x dp = 2"),
            std::string::npos);
  EXPECT_NE(error("--model gpt3-175b --tp 8").find("expected --gbs"), std::string::npos);
  EXPECT_NE(error("--tp 8 " + std::string(ORRERY_SOURCE_DIR) +
                  "/examples/simai/gpt_tp8_pp16_ga16_1024gpus.txt")
                .find("--tp describes a parallel plan for --model"),
            std::string::npos);
  EXPECT_NE(error("--model no-such-model --gbs 8").find("no-such-model"), std::string::npos);
  EXPECT_NE(error("--model gpt3-175b --tp 8 --gbs 8 --cluster simai-default")
                .find("no known device, so compute cannot be priced; give --device"),
            std::string::npos);
}

// A plan of 125,000 micro-batches on 8 GPUs / the event mode refuses it in one line naming the
// model (about 74 million tasks, beyond its 20 million) and the analytical mode, which simulates
// no tasks, answers; 1,250,000 micro-batches are refused before any is generated, in the event
// and analytical modes alike, because the workload lists each.
TEST(ModelCli, TheClosedFormTakesWhatTheTaskLimitRefuses) {
  const std::string plan = "simulate --model gpt3-1.3b --gpus 8 --gbs ";
  const CliRun event = orrery(plan + "1000000");
  EXPECT_EQ(event.status, 2);
  EXPECT_NE(event.err.find("orrery: gpt3-1.3b: expected a workload the pipeline simulation can "
                           "hold: about 74 million tasks"),
            std::string::npos)
      << event.err;
  const CliRun closed = orrery(plan + "1000000 --mode analytical --json");
  ASSERT_EQ(closed.status, 0) << closed.err;
  EXPECT_GT(nlohmann::json::parse(closed.out)["iteration_time_s"].get<double>(), 0);
  for (const std::string mode : {"event", "analytical"}) {
    const CliRun r = orrery(plan + "10000000 --mode " + mode);
    EXPECT_EQ(r.status, 2) << mode;
    EXPECT_NE(r.err.find("--gbs/--mbs: expected at most 1000000 micro-batches per iteration"),
              std::string::npos)
        << r.err;
  }
}

// Every mode runs a generated program; flow and event agree where nothing contends (one server).
TEST(ModelCli, EveryModeRunsAGeneratedProgram) {
  const std::string plan =
      "simulate --model gpt3-1.3b --cluster dgx-a100 --gpus 8 --tp 2 --pp 2 --vpp 2 --gbs 16 "
      "--json --mode ";
  const double event = run_json(plan + "event")["iteration_time_s"].get<double>();
  const double flow = run_json(plan + "flow")["iteration_time_s"].get<double>();
  const double analytical = run_json(plan + "analytical")["iteration_time_s"].get<double>();
  EXPECT_NEAR(flow, event, 0.02 * event);
  EXPECT_NEAR(analytical, event, 0.15 * event);
}

// The per-layer CSV's row named `name`, split at its commas.
std::vector<std::string> csv_row(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(name + ",")) continue;
    std::vector<std::string> fields;
    std::stringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');)
      fields.push_back(cell);
    return fields;
  }
  return {};
}

// --overlap-param-gather on GPT-3 1.3B (h 2048, 24 layers, vocab 51,200, 2,048 positions, tied
// embeddings), 16 A100s, TP 2, DP 8, distributed optimizer. Each rank holds per layer half of the
// 12 h^2 + 9 h weights and biases and the whole 4 h of the two LayerNorms, half the word
// embedding, the positions and the final LayerNorm's 2 h: 661,024,768 parameters, gathered in
// bf16: 1,322,049,536 bytes, G as the network model prices them.
// - Without the flag the gather follows the optimizer and is exposed whole.
// - With it the gather runs in buckets of 40M parameters (80 MB) during the first forward; only
//   the first bucket (the bucketing's remainder, under 80 MB) is awaited whole and each later one
//   hides behind the forward of the layers before it, so the iteration is shorter by G less at
//   most two buckets' share of the bytes: more than G (1 - 2 x 80 MB / 1.32 GB) = 0.879 G.
// SM contention is left out so that the compute is the same with and without the flag. Event,
// flow and analytical modes agree as they do on the gradient buckets (2 % flow, 15 % analytical).
TEST(ModelCli, OverlapParamGatherHidesTheGatherBehindTheForward) {
  const std::string plan =
      "simulate --model gpt3-1.3b --cluster dgx-a100 --gpus 16 --tp 2 --gbs 16 "
      "--distributed-optimizer --without sm-contention --json";
  const std::string csv = ::testing::TempDir() + "/opg-layers.csv";
  const auto without = run_json(plan + " --csv " + csv);
  const std::vector<std::string> row = csv_row(csv, "parameter all-gather");
  ASSERT_EQ(row.size(), 22u);
  const double h = 2048, layers = 24, vocab = 51200, positions = 2048;
  const double parameters =
      layers * ((12 * h * h + 9 * h) / 2 + 4 * h) + vocab * h / 2 + positions * h + 2 * h;
  EXPECT_EQ(parameters, 661'024'768);
  EXPECT_EQ(std::stod(row[20]), 2 * parameters);    // wg_bytes
  const double gather = std::stod(row[21]) * 1e-6;  // wg_comm_us: G
  EXPECT_GE(without["breakdown_s"]["exposed_comm"]["dp"].get<double>(), gather);

  const auto with = run_json(plan + " --overlap-param-gather");
  const double saved =
      without["iteration_time_s"].get<double>() - with["iteration_time_s"].get<double>();
  EXPECT_DOUBLE_EQ(with["breakdown_s"]["compute"].get<double>(),
                   without["breakdown_s"]["compute"].get<double>());
  EXPECT_LT(saved, gather);
  EXPECT_GT(saved, gather * (1 - 2 * 80e6 / (2 * parameters)));

  for (const char* mode : {"analytical", "flow"}) {
    const std::string other = plan + " --mode " + mode;
    const double other_saved =
        run_json(other)["iteration_time_s"].get<double>() -
        run_json(other + " --overlap-param-gather")["iteration_time_s"].get<double>();
    EXPECT_GT(other_saved, gather * (1 - 2 * 80e6 / (2 * parameters))) << mode;
    EXPECT_LT(other_saved, gather) << mode;
  }
  const double event = with["iteration_time_s"].get<double>();
  EXPECT_NEAR(run_json(plan + " --overlap-param-gather --mode flow")["iteration_time_s"], event,
              0.02 * event);
  EXPECT_NEAR(run_json(plan + " --overlap-param-gather --mode analytical")["iteration_time_s"],
              event, 0.15 * event);

  // Under pipeline parallelism with model chunks each chunk gathers its own buckets in its first
  // forward, launched from the schedule or as the lazy chain; every mode runs both.
  for (const char* mode : {"event", "flow", "analytical"})
    for (const char* launch : {"", " --no-align-param-gather"})
      EXPECT_GT(run_json("simulate --model gpt3-1.3b --cluster dgx-a100 --gpus 16 --tp 2 --pp 2 "
                         "--vpp 2 --gbs 16 --distributed-optimizer --overlap-param-gather --json "
                         "--mode " +
                         std::string(mode) + launch)["iteration_time_s"]
                    .get<double>(),
                0)
          << mode << launch;
}

// The aligned launch (the default) against the lazy chain (--no-align-param-gather) on GPT-3 1.3B,
// TP 2, PP 2, VPP 4, DP 4: launched from the schedule, chunk 1's gather runs while chunk 0's first
// forwards do and chunks 2 and 3 are launched a chunk ahead, where the lazy chain exposes each
// chunk's first bucket in turn, so in every mode the data-parallel time exposed and the iteration
// are shorter aligned; both are shorter than the gather after the optimizer.
TEST(ModelCli, AlignedParamGatherExposesLessThanTheLazyChain) {
  const std::string plan =
      "simulate --model gpt3-1.3b --cluster dgx-a100 --gpus 16 --tp 2 --pp 2 --vpp 4 --gbs 16 "
      "--distributed-optimizer --without sm-contention --json --mode ";
  for (const std::string mode : {"event", "flow", "analytical"}) {
    const auto after = run_json(plan + mode);
    const auto lazy = run_json(plan + mode + " --overlap-param-gather --no-align-param-gather");
    const auto aligned = run_json(plan + mode + " --overlap-param-gather");
    const auto dp = [](const nlohmann::json& j) {
      return j["breakdown_s"]["exposed_comm"]["dp"].get<double>();
    };
    EXPECT_LT(dp(aligned), dp(lazy)) << mode;
    EXPECT_LT(dp(lazy), dp(after)) << mode;
    EXPECT_LT(aligned["iteration_time_s"].get<double>(), lazy["iteration_time_s"].get<double>())
        << mode;
  }
}

// --no-align-param-gather only chooses how --overlap-param-gather launches its gathers.
TEST(ModelCli, NoAlignParamGatherNeedsOverlapParamGather) {
  const CliRun r = orrery(
      "simulate --model gpt3-1.3b --gbs 16 --gpus 16 --tp 2 --distributed-optimizer "
      "--no-align-param-gather");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--no-align-param-gather: expected --overlap-param-gather"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// --overlap-param-gather needs a sharded optimizer and more than one data-parallel rank.
TEST(ModelCli, OverlapParamGatherNeedsShardedDataParallelism) {
  for (const std::string plan : {"--gpus 16 --tp 2", "--gpus 2 --tp 2 --distributed-optimizer",
                                 "--gpus 16 --tp 2 --zero 3"}) {
    const CliRun r = orrery("simulate --model gpt3-1.3b --gbs 16 --overlap-param-gather " + plan);
    EXPECT_EQ(r.status, 2) << plan;
    EXPECT_NE(r.err.find("--overlap-param-gather: expected a sharded optimizer"), std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// --tp-comm-overlap on GPT-3 1.3B over 8 tensor ranks with sequence parallelism: each layer's
// all-gathers and reduce-scatters run beside their GEMMs, so the compute stream no longer waits
// for them. With the SMs they hold left out (--without sm-contention) a phase beside its
// collective takes at least its compute and at most compute + collective
// (training/gemm_overlap_time.h), so the iteration gets shorter, by exactly the tensor-parallel
// time it stops exposing (what a GEMM does not hide stays exposed tensor-parallel time, with the
// embedding's and the LM head's collectives). So in event, flow and analytical mode.
TEST(ModelCli, TpCommOverlapHidesTheLayersTensorParallelCollectives) {
  const std::string plan =
      "simulate --model gpt3-1.3b --cluster hgx-h100 --gpus 8 --tp 8 --gbs 8 --sequence-parallel "
      "--without sm-contention --json --mode ";
  for (const std::string mode : {"event", "flow", "analytical"}) {
    const auto without = run_json(plan + mode);
    const auto with = run_json(plan + mode + " --tp-comm-overlap");
    const double saved =
        without["iteration_time_s"].get<double>() - with["iteration_time_s"].get<double>();
    if (mode == "analytical") {  // the closed form has no breakdown to compare
      EXPECT_GT(saved, 0) << mode;
      continue;
    }
    // Without SM contention the GEMMs beside the collectives run at their own speed: the compute
    // is the same, and all the overlap saves is tensor-parallel time no longer exposed.
    const double exposed_without = without["breakdown_s"]["exposed_comm"]["tp"].get<double>();
    const double exposed_with = with["breakdown_s"]["exposed_comm"]["tp"].get<double>();
    EXPECT_GT(saved, 0) << mode;
    EXPECT_NEAR(with["breakdown_s"]["compute"].get<double>(),
                without["breakdown_s"]["compute"].get<double>(), 1e-9)
        << mode;
    EXPECT_NEAR(saved, exposed_without - exposed_with, 1e-9) << mode;
  }
}

// --tp-comm-overlap overlaps sequence parallelism's collectives: without --sequence-parallel, or
// with one tensor rank, it is refused in one line naming the flag.
TEST(ModelCli, TpCommOverlapNeedsSequenceParallelismOverTensorRanks) {
  for (const std::string plan : {"--tp 8", "--tp 1 --sequence-parallel"}) {
    const CliRun r =
        orrery("simulate --model gpt3-1.3b --gpus 8 --gbs 8 --tp-comm-overlap " + plan);
    EXPECT_EQ(r.status, 2) << plan;
    EXPECT_NE(r.err.find("--tp-comm-overlap: expected --sequence-parallel and --tp above 1"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

// --tp-comm-overlap with a tensor group wider than a server / a warning, since Transformer
// Engine's userbuffers are built for one NVLink domain; and `convert --to chakra` warns that each
// overlapped collective goes inside its GEMM's compute node.
TEST(ModelCli, TpCommOverlapWarnsWhereItsModelIsStretched) {
  const CliRun wide = orrery(
      "simulate --model gpt3-1.3b --cluster hgx-h100 --gpus 16 --tp 16 --gbs 8 "
      "--sequence-parallel --tp-comm-overlap");
  EXPECT_EQ(wide.status, 0) << wide.err;
  EXPECT_NE((wide.out + wide.err).find("--tp-comm-overlap with --tp 16 over servers of 8 GPUs"),
            std::string::npos)
      << wide.out << wide.err;
  const std::string dir = ::testing::TempDir() + "/tp-overlap-chakra";
  const CliRun chakra = orrery(
      "convert --model gpt3-1.3b --cluster hgx-h100 --gpus 8 --tp 8 --gbs 8 "
      "--sequence-parallel --tp-comm-overlap --to chakra -o " +
      dir);
  EXPECT_EQ(chakra.status, 0) << chakra.err;
  EXPECT_NE(chakra.err.find("inside that GEMM's compute node"), std::string::npos) << chakra.err;
  std::filesystem::remove_all(dir);
}

// GPT3-5B on one H100 in FP8, one micro-batch of 4 x 2048 tokens (every weight gradient's main
// loop longer than its traffic) / --without exposed-epilogue takes 7.0084 ms less: every weight
// gradient accumulates into fp32 (8 bytes a value, 6 beyond a 16-bit output), 24 layers x 12 x
// 4096^2 values in FP8 at the H100's exposed share 0.60 and the tied LM head's 51,200 x 4096 in
// BF16 at 0.17, over 0.75 x 3.35 TB/s: 6,923.3 + 85.1 us, nothing else moving.
TEST(ModelCli, WeightGradientsPayTheirExposedEpilogue) {
  const std::string run =
      "simulate --model gpt3-5b --cluster hgx-h100 --gpus 1 --gbs 4 --mbs 4 --seq 2048 "
      "--dtype fp8 --json";
  const auto with = run_json(run);
  const auto without = run_json(run + " --without exposed-epilogue");
  const double rate = 0.75 * 3.35e12;
  const double layers = 24 * 12 * 4096.0 * 4096 * 6 * 0.60 / rate;
  const double head = 51200 * 4096.0 * 6 * 0.17 / rate;
  EXPECT_NEAR(with["iteration_time_s"].get<double>() - without["iteration_time_s"].get<double>(),
              layers + head, 1e-8);
}

// A plan SimAI text can hold (one stage, one chunk, no data or context parallelism), full
// recompute included / written by `convert --to simai` and read back, it simulates to the same
// iteration within 1 ns per record, because the file keeps every row's time to the nanosecond.
TEST(ModelCli, ConvertToSimaiRoundTrips) {
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/gpt3-1.3b.txt";
  const std::string plan = "--model gpt3-1.3b --gpus 2 --tp 2 --gbs 4 --recompute full";
  const CliRun convert = orrery("convert " + plan + " --to simai -o " + file);
  ASSERT_EQ(convert.status, 0) << convert.err;
  EXPECT_EQ(convert.err, "");  // nothing lost
  const double generated =
      run_json("simulate " + plan + " --json")["iteration_time_s"].get<double>();
  const auto read_back = run_json("simulate " + file + " --cluster hgx-h100 --json");
  std::ifstream in(file);
  std::string header, records;
  std::getline(in, header);
  std::getline(in, records);
  EXPECT_NE(header.find("checkpoints: 96 "), std::string::npos) << header;  // 24 layers x 4
  EXPECT_NEAR(read_back["iteration_time_s"].get<double>(), generated, std::stod(records) * 1e-9);

  // With sequence parallelism the tail adds the replicated parameters' gradient all-reduce over
  // the tensor group, which the file holds as a tensor-parallel all-reduce.
  const std::string sp_file = dir + "/gpt3-1.3b-sp.txt";
  const std::string sp_plan = "--model gpt3-1.3b --gpus 2 --tp 2 --gbs 4 --sequence-parallel";
  const CliRun sp_convert = orrery("convert " + sp_plan + " --to simai -o " + sp_file);
  ASSERT_EQ(sp_convert.status, 0) << sp_convert.err;
  EXPECT_EQ(sp_convert.err, "");
  std::ifstream sp_in(sp_file);
  std::string sp_header, sp_records;
  std::getline(sp_in, sp_header);
  std::getline(sp_in, sp_records);
  EXPECT_NEAR(run_json("simulate " + sp_file + " --cluster hgx-h100 --json")["iteration_time_s"]
                  .get<double>(),
              run_json("simulate " + sp_plan + " --json")["iteration_time_s"].get<double>(),
              std::stod(sp_records) * 1e-9);
}

// A plan it cannot hold / the file is still written, and each lost feature is named.
TEST(ModelCli, ConvertNamesWhatSimaiTextCannotHold) {
  const std::string file = ::testing::TempDir() + "/gpt3-pp.txt";
  const CliRun r =
      orrery("convert --model gpt3-1.3b --gpus 16 --tp 2 --pp 4 --gbs 32 --to simai -o " + file);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("the first stage's embedding, the last stage's LM head"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("Megatron's gradient buckets"), std::string::npos) << r.err;
  // The middle stage written never runs the first and last stages' embedding all-reduce.
  EXPECT_NE(r.err.find("the tied embedding's gradient all-reduce"), std::string::npos) << r.err;
  // Nor the last stage's loss all-reduce over the two data-parallel replicas.
  EXPECT_NE(r.err.find("the loss all-reduce over the data-parallel group"), std::string::npos)
      << r.err;
  EXPECT_EQ(orrery("simulate " + file + " --cluster hgx-h100").status, 0);
}

}  // namespace
}  // namespace orrery::e2e
