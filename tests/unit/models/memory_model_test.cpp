// The memory model against Korthikanti et al.'s formulas, worked by hand for GPT-3 175B on
// A100-SXM4-80GB (80 GiB): TP 8, PP 8, VPP 1, micro-batch 1, GBS 64 (dp 1), fp16, unfused
// attention, no distributed optimizer, sequence 2048.
#include "models/memory_model.h"

#include <gtest/gtest.h>

#include "models/model_file.h"

namespace orrery {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

ParallelPlan gpt3_plan(RecomputeMode recompute) {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 8;
  p.micro_batch = 1;
  p.micro_batches = 64;
  p.seq = 2048;
  p.recompute = recompute;
  p.flash_attention = false;
  return p;
}

TEST(MemoryModel, Gpt3WithoutRecomputeOrSequenceParallelismDoesNotFit) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  const MemoryEstimate m = estimate_memory(gpt3, gpt3_plan(RecomputeMode::None), 80 * kGiB);
  ASSERT_EQ(m.stages.size(), 8u);
  const StageMemory& first = m.stages[0];
  EXPECT_EQ(first.layers, 12);
  // Parameters on a GPU of stage 0: per layer (4h^2 + 4h attention + 8h^2 + 5h MLP) / 8 + 4h
  // of norms = 226,555,392 (h = 12288); x 12 layers, + the vocab-parallel embedding 51200 h / 8
  // = 78,643,200 and the position table 2048 h = 25,165,824: 2,822,473,728.
  const double params = 2'822'473'728.0;
  EXPECT_NEAR(first.weights_bytes, 2 * params, 1);
  EXPECT_NEAR(first.gradients_bytes, 4 * params, 1);
  EXPECT_NEAR(first.optimizer_bytes, 12 * params, 1);
  // Activations per layer sh (10 + 24/t + 5as/(ht)) = 25,165,824 x 23 = 578,813,952 bytes; 12
  // layers plus the embedding's dropout mask sh, times the 8 micro-batches stage 0 holds.
  EXPECT_NEAR(first.activations_bytes, (12 * 578'813'952.0 + 25'165'824.0) * 8, 1);
  EXPECT_EQ(first.logits_bytes, 0);
  // 50.8 GB of model state + 55.8 GB of activations: over 80 GiB.
  EXPECT_GT(first.peak_bytes(), 80 * kGiB);
  EXPECT_FALSE(m.fits());
  // The last stage: 12 layers, the tied head's copy of the embedding and the final norm (2h),
  // one micro-batch in flight, and fp32 logits 4 s V / t = 52,428,800 bytes.
  const StageMemory& last = m.stages[7];
  EXPECT_NEAR(last.weights_bytes, 2 * (12 * 226'555'392.0 + 78'643'200.0 + 24'576.0), 1);
  EXPECT_NEAR(last.activations_bytes, 12 * 578'813'952.0, 1);
  EXPECT_NEAR(last.logits_bytes, 52'428'800.0, 1);
}

TEST(MemoryModel, Gpt3WithFullRecomputeFits) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  const MemoryEstimate m = estimate_memory(gpt3, gpt3_plan(RecomputeMode::Full), 80 * kGiB);
  // Each layer keeps its input, 2sh = 50,331,648 bytes; 12 of them and the embedding's mask for
  // 8 micro-batches, plus one layer's full set while it is recomputed.
  EXPECT_NEAR(m.stages[0].activations_bytes, (12 * 50'331'648.0 + 25'165'824.0) * 8 + 578'813'952.0,
              1);
  EXPECT_LT(m.stages[0].peak_bytes(), 80 * kGiB);
  EXPECT_TRUE(m.fits());
}

TEST(MemoryModel, SequenceParallelismAndSelectiveRecomputeFollowThePaper) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan p = gpt3_plan(RecomputeMode::None);
  p.sequence_parallel = true;
  // sh/t (34 + 5as/h) = 25,165,824 / 8 x (34 + 80) per layer.
  EXPECT_NEAR(layer_activation_bytes(gpt3, p, 0), 25'165'824.0 / 8 * 114, 1);
  p.recompute = RecomputeMode::Selective;
  EXPECT_NEAR(layer_activation_bytes(gpt3, p, 0), 25'165'824.0 / 8 * 34, 1);
  // Flash attention keeps fp32 row statistics (4as) instead of the 5as^2 of scores.
  p.recompute = RecomputeMode::None;
  p.flash_attention = true;
  EXPECT_NEAR(layer_activation_bytes(gpt3, p, 0), 25'165'824.0 / 8 * 34 + 4 * 96 * 2048 / 8.0, 1);
}

TEST(MemoryModel, DistributedOptimizerAndZeroShardModelState) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan p = gpt3_plan(RecomputeMode::Full);
  p.dp = 4;
  const double params = 2'822'473'728.0;
  p.distributed_optimizer = true;
  StageMemory s = estimate_memory(gpt3, p, 80 * kGiB).stages[0];
  EXPECT_NEAR(s.optimizer_bytes, 12 * params / 4, 1);
  EXPECT_NEAR(s.gradients_bytes, 4 * params, 1);
  p.zero = 3;
  s = estimate_memory(gpt3, p, 80 * kGiB).stages[0];
  EXPECT_NEAR(s.weights_bytes, 2 * params / 4, 1);
  EXPECT_NEAR(s.gradients_bytes, 4 * params / 4, 1);
}

// --fp8-param-gather / the weights take 1 byte per parameter instead of 2, the gradients and the
// optimizer state unchanged, because only the compute copy of the weights is fp8.
TEST(MemoryModel, Fp8ParamGatherKeepsOneByteWeights) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan p = gpt3_plan(RecomputeMode::Full);
  p.dp = 4;
  p.dtype = DType::FP8;
  p.distributed_optimizer = true;
  p.fp8_param_gather = true;
  const double params = 2'822'473'728.0;
  const StageMemory s = estimate_memory(gpt3, p, 80 * kGiB).stages[0];
  EXPECT_NEAR(s.weights_bytes, params, 1);
  EXPECT_NEAR(s.gradients_bytes, 4 * params, 1);
  EXPECT_NEAR(s.optimizer_bytes, 12 * params / 4, 1);
}

// A tiny MLA layer (h 16, 2 heads of 4 + 2 RoPE for queries and keys, values 3 wide, q_l 6,
// kv_l 5, GeLU MLP 64) on TP 2, 10 tokens, flash attention, 2-byte values / its activations
// follow MLA's shapes, not MHA's, because the query and key heads are head_dim + rope_dim wide,
// the value heads v_head_dim, and the compressed q_l and kv_l (norm inputs and outputs) and the
// RoPE key stay on every tensor rank.
TEST(MemoryModel, MlaKeepsItsOwnShapes) {
  const ModelSpec mla = parse_model_yaml(
      "name: tiny-mla\nlayers: 1\nhidden: 16\nheads: 2\nhead_dim: 4\nvocab: 10\nseq: 10\n"
      "norm: rmsnorm\nbias: false\nposition: rope\n"
      "attention: {kind: mla, q_lora_rank: 6, kv_lora_rank: 5, rope_dim: 2, v_head_dim: 3}\n",
      "m.yaml");
  ParallelPlan p;
  p.tp = 2;
  p.seq = 10;
  // Split over the tensor group, per token: queries and keys 2 x (4 + 2) each, values and the
  // projection's input 2 x 3 each = 36 values; the MLP's 2 x 64; fp32 row statistics 4 x 2 bytes.
  // (2 x 10 x 36 + 2 x 2 x 10 x 64 + 4 x 2 x 10) / 2 = (720 + 2560 + 80) / 2 = 1680 bytes.
  // Kept on every rank: the block inputs, (4 x 2 + 2) x 10 x 16 = 1600 bytes, and MLA's
  // compressed values 2 x (6 + 5) + 2 = 24 a token, 480 bytes.
  EXPECT_NEAR(layer_activation_bytes(mla, p, 0), 1680 + 1600 + 480, 1e-9);
  // Sequence parallelism splits the block inputs and the compressed norms' tensors over the
  // tokens, not the RoPE key: 800 + 2 x 10 x (22 / 2 + 2) = 800 + 260.
  p.sequence_parallel = true;
  EXPECT_NEAR(layer_activation_bytes(mla, p, 0), 1680 + 800 + 260, 1e-9);
}

TEST(MemoryModel, UnevenLayersGoToTheMiddleStages) {
  // Llama-3.1-405B's 126 layers on 16 stages: 7 each and 14 stages of 8, the first and last 7.
  const std::vector<int64_t> split = stage_layers(126, 16);
  int64_t total = 0;
  for (const int64_t n : split)
    total += n;
  EXPECT_EQ(total, 126);
  EXPECT_EQ(split.front(), 7);
  EXPECT_EQ(split.back(), 7);
  EXPECT_EQ(split[8], 8);
}

}  // namespace
}  // namespace orrery
