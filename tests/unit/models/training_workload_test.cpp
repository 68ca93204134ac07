// The generated Megatron-LM iteration (models/training_workload.h) against hand counts.
#include "models/training_workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "models/model_counts.h"
#include "models/model_file.h"

namespace orrery {
namespace {

ParallelPlan plan(int64_t tp, int64_t pp, int64_t micro_batches) {
  ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.micro_batches = micro_batches;
  p.seq = 2048;
  p.flash_attention = false;
  return p;
}

double flop(const Phase& phase, KernelClass kind) {
  double f = 0;
  for (const ComputeDemand& k : phase.kernels)
    if (k.kind == kind) f += k.flop;
  return f;
}

// The records of transformer layer `n` (1-based) in the first pass.
std::vector<const Layer*> layer_records(const Workload& w, int n) {
  std::vector<const Layer*> records;
  const std::string prefix = "layer " + std::to_string(n) + " ";
  for (size_t i = 0; i < w.program.micro_batches[0].end; ++i)
    if (w.program.layers[i].name.starts_with(prefix)) records.push_back(&w.program.layers[i]);
  return records;
}

// GPT-3 175B, TP 8, no sequence parallelism, unfused attention / one layer's forward GEMMs on one
// GPU are 2 N (3h^2 + h^2 + 4h^2 + 4h^2) / t = 24 N h^2 / t with N = 2048 tokens, plus QK^T and PV
// 4 N s h / t, because Megatron shards every linear layer and the heads over t.
TEST(TrainingWorkload, Gpt3LayerFlopsAreMegatronsCount) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  const TrainingWorkload t = generate_training_workload(gpt3, plan(8, 8, 8));
  const double n = 2048, h = 12288;
  double forward = 0, backward = 0;
  int all_reduces = 0;
  for (const Layer* l : layer_records(t.workload, 1)) {
    forward += flop(l->forward, KernelClass::Gemm);
    backward += flop(l->input_grad, KernelClass::Gemm) + flop(l->weight_grad, KernelClass::Gemm);
    for (const Phase* p : {&l->forward, &l->input_grad})
      if (p->comm && p->comm->kind == CollectiveKind::AllReduce) {
        ++all_reduces;
        EXPECT_EQ(p->comm->group, CommGroup::Tensor);
        EXPECT_EQ(p->comm->bytes, 2048 * 12288 * 2);  // N h values, 2 bytes each
      }
  }
  EXPECT_NEAR(forward, 24 * n * h * h / 8 + 4 * n * 2048 * h / 8, 1e3);
  // Backward: each linear's two GEMMs (2x) and the attention GEMMs' four (2x).
  EXPECT_NEAR(backward, 2 * forward, 1e3);
  EXPECT_EQ(all_reduces, 4);  // two forward, two backward (Megatron's f and g)
}

// GPT-3 175B on PP 8 / the embedding runs on virtual stage 0 only and the LM head on the last,
// so those stages are the heavier ones; the model's FLOPs per iteration are Megatron's
// 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
TEST(TrainingWorkload, EmbeddingAndHeadRunOnTheEndStages) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  const TrainingWorkload t = generate_training_workload(gpt3, plan(8, 8, 8));
  const Program& p = t.workload.program;
  ASSERT_TRUE(p.pass_per_model_chunk);
  for (size_t i = 0; i < p.micro_batches[0].end; ++i) {
    const Layer& l = p.layers[i];
    if (l.name == "embedding") {
      EXPECT_TRUE(p.runs_on(l, 0));
      EXPECT_FALSE(p.runs_on(l, 1));
    }
    if (l.name == "LM head and loss") {
      EXPECT_TRUE(p.runs_on(l, 7));
      EXPECT_FALSE(p.runs_on(l, 6));
    }
  }
  const double b = 8, s = 2048, l = 96, h = 12288, v = 51200;
  EXPECT_NEAR(t.model_flop, 72 * b * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h)),
              1e-9 * t.model_flop);
  EXPECT_EQ(t.tokens, 8 * 2048);
  EXPECT_EQ(t.workload.parallelism.micro_batches, 8);
  EXPECT_EQ(*t.workload.stage_boundary_bytes, 2048 * 12288 * 2 / 8);  // scattered over tp
  EXPECT_TRUE(t.workload.stage_boundary_gathered);
}

// GPT-3 175B on PP 4, VPP 3 (12 virtual stages of 8 layers) / every layer slot runs on every
// virtual stage (no set); the embedding runs on virtual stage 0 only, the LM head on 11 only, and
// stage s's iteration-level rows on virtual stage s only (chunk 0 of stage s). So the program has
// exactly five stage sets, {0} shared by the embedding and stage 0's rows, each distinct.
TEST(TrainingWorkload, EqualStageSetsAreSharedAndDistinctOnesKeptApart) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan pl = plan(8, 4, 8);
  pl.vpp = 3;
  const TrainingWorkload t = generate_training_workload(gpt3, pl);
  const Program& p = t.workload.program;
  ASSERT_EQ(p.stage_sets.size(), 5u);
  for (size_t a = 0; a < p.stage_sets.size(); ++a)
    for (size_t b = a + 1; b < p.stage_sets.size(); ++b)
      EXPECT_NE(p.stage_sets[a], p.stage_sets[b]);
  const auto virtual_stages = [&](const Layer& l) {
    std::vector<int64_t> runs;
    for (int64_t v = 0; v < 12; ++v)
      if (p.runs_on(l, v)) runs.push_back(v);
    return runs;
  };
  for (size_t i = 0; i < p.micro_batches[0].end; ++i) {
    const Layer& l = p.layers[i];
    if (l.name == "embedding")
      EXPECT_EQ(virtual_stages(l), std::vector<int64_t>{0});
    else if (l.name == "final norm" || l.name == "LM head and loss")
      EXPECT_EQ(virtual_stages(l), std::vector<int64_t>{11});
    else
      EXPECT_EQ(l.stage_set, -1) << l.name;
  }
  for (int64_t s = 0; s < 4; ++s) {
    const std::string suffix = " (stage " + std::to_string(s) + ")";
    int rows = 0;
    for (size_t i = p.after.begin; i < p.after.end; ++i)
      if (p.layers[i].name.ends_with(suffix)) {
        ++rows;
        EXPECT_EQ(virtual_stages(p.layers[i]), std::vector<int64_t>{s}) << p.layers[i].name;
      }
    EXPECT_GT(rows, 0) << suffix;
  }
}

// Full recompute / every layer is a recompute span ending in its own trigger record, because
// Megatron re-runs each layer's whole forward (its collectives too) before its backward.
TEST(TrainingWorkload, FullRecomputeReRunsEveryLayer) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan p = plan(8, 8, 2);
  p.recompute = RecomputeMode::Full;
  const TrainingWorkload t = generate_training_workload(gpt3, p);
  // 12 layer slots per pass (96 / 8); the two micro-batches list the same pass.
  EXPECT_EQ(t.workload.recompute.triggers.size(), 12u);
  EXPECT_EQ(t.workload.recompute.checkpoints.size(), 12u);
  ASSERT_EQ(t.workload.program.micro_batches.size(), 2u);
  EXPECT_EQ(t.workload.program.micro_batches[0].begin, t.workload.program.micro_batches[1].begin);
  EXPECT_EQ(t.workload.program.micro_batches[0].end, t.workload.program.micro_batches[1].end);
}

// ZeRO-3 on GPT-3 1.3B (h = 2048, 24 layers), TP 1, DP 16 / every layer gathers its
// 12 h^2 + 13 h = 50,358,272 parameters in bf16 (100,716,544 bytes) before its forward and again
// before its backward, and reduce-scatters their fp32 gradients (201,433,088 bytes) after it;
// the iteration's gradient reduction keeps only the embedding and the head, because the layers
// were reduced one by one.
TEST(TrainingWorkload, ZeroThreeGathersEveryLayerTwice) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(1, 1, 2);
  p.dp = 16;
  p.zero = 3;
  const Program& program = generate_training_workload(m, p).workload.program;
  int gathers = 0, regathers = 0;
  for (size_t i = program.micro_batches[0].begin; i < program.micro_batches[0].end; ++i) {
    const Layer& l = program.layers[i];
    if (l.name.ends_with("parameter gather")) {
      ++gathers;
      ASSERT_TRUE(l.forward.comm && l.weight_grad.comm) << l.name;
      EXPECT_EQ(l.forward.comm->kind, CollectiveKind::AllGather);
      EXPECT_EQ(l.forward.comm->group, CommGroup::Data);
      EXPECT_EQ(l.forward.comm->bytes, 100'716'544u);
      EXPECT_EQ(l.weight_grad.comm->kind, CollectiveKind::ReduceScatter);
      EXPECT_EQ(l.weight_grad.comm->bytes, 201'433'088u);
    }
    if (l.name.ends_with("parameter re-gather")) {
      ++regathers;
      ASSERT_TRUE(l.input_grad.comm) << l.name;
      EXPECT_EQ(l.input_grad.comm->bytes, 100'716'544u);
    }
  }
  EXPECT_EQ(gathers, 24);
  EXPECT_EQ(regathers, 24);
  // Iteration rows: the embedding with its positions, and the LM head with the final
  // LayerNorm's 2 h weights, are all that is left to reduce at the end (fp32).
  const ParameterCount whole = parameter_count(m);
  bool reduced = false;
  for (size_t i = program.after.begin; i < program.after.end; ++i) {
    const Layer& l = program.layers[i];
    if (l.name != "dense gradient reduction") continue;
    reduced = true;
    const double expected =
        static_cast<double>(whole.embedding + whole.position + whole.lm_head + 2 * m.hidden) * 4;
    EXPECT_EQ(l.weight_grad.comm->bytes, static_cast<Bytes>(expected));
  }
  EXPECT_TRUE(reduced);
}

// The distributed optimizer's parameter all-gather on GPT-3 1.3B, TP 1, DP 16, fp8 / with
// --fp8-param-gather it moves 1 byte per parameter of the stage, half the bf16 gather, because
// Transformer Engine keeps the weights' compute copy in fp8 and gathers that; without fp8 or
// without a sharded optimizer the flag is refused by name.
TEST(TrainingWorkload, Fp8ParamGatherHalvesTheParameterAllGather) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(1, 1, 1);
  p.dp = 16;
  p.dtype = DType::FP8;
  p.distributed_optimizer = true;
  const auto gathered = [&](const ParallelPlan& q) {
    const Program& program = generate_training_workload(m, q).workload.program;
    for (size_t i = program.after.begin; i < program.after.end; ++i)
      if (program.layers[i].name == "parameter all-gather")
        return program.layers[i].weight_grad.comm->bytes;
    return Bytes{0};
  };
  const Bytes bf16 = gathered(p);
  p.fp8_param_gather = true;
  const Bytes fp8 = gathered(p);
  EXPECT_EQ(bf16, static_cast<Bytes>(parameter_count(m).total()) * 2);
  EXPECT_EQ(fp8, static_cast<Bytes>(parameter_count(m).total()));
  p.dtype = DType::BF16;
  EXPECT_THROW(generate_training_workload(m, p), std::invalid_argument);
  p.dtype = DType::FP8;
  p.distributed_optimizer = false;
  EXPECT_THROW(generate_training_workload(m, p), std::invalid_argument);
}

// --overlap-param-gather asks the simulators to gather in Megatron's buckets of
// max(40M, 1M x dp) parameters at the gathered width: 40M x 2 bytes = 80 MB at DP 16 in bf16,
// 40M x 1 byte with --fp8-param-gather, 64M x 2 bytes at DP 64; without it the gather stays after
// the optimizer. It needs a sharded optimizer short of ZeRO-3 (whose layers are gathered as
// used) and more than one data-parallel rank, and says so by name.
TEST(TrainingWorkload, OverlapParamGatherBucketsTheParameterAllGather) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(1, 1, 1);
  p.dp = 16;
  p.distributed_optimizer = true;
  EXPECT_FALSE(generate_training_workload(m, p).workload.param_gather_bucket_bytes);
  p.overlap_param_gather = true;
  EXPECT_EQ(generate_training_workload(m, p).workload.param_gather_bucket_bytes, 80'000'000u);
  p.dtype = DType::FP8;
  p.fp8_param_gather = true;
  EXPECT_EQ(generate_training_workload(m, p).workload.param_gather_bucket_bytes, 40'000'000u);
  p.dtype = DType::BF16;
  p.fp8_param_gather = false;
  p.dp = 64;
  EXPECT_EQ(generate_training_workload(m, p).workload.param_gather_bucket_bytes, 128'000'000u);
  const auto error = [&](const ParallelPlan& q) -> std::string {
    try {
      generate_training_workload(m, q);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  ParallelPlan unsharded = p;
  unsharded.distributed_optimizer = false;
  EXPECT_EQ(error(unsharded),
            "--overlap-param-gather: expected a sharded optimizer (--distributed-optimizer or "
            "--zero 1-2) and more than one data-parallel rank (dp x cp = 64)");
  ParallelPlan zero3 = unsharded;
  zero3.zero = 3;
  EXPECT_NE(error(zero3).find("--overlap-param-gather"), std::string::npos);
  ParallelPlan zero2 = unsharded;
  zero2.zero = 2;
  EXPECT_EQ(error(zero2), "");
  ParallelPlan alone = p;
  alone.dp = 1;
  EXPECT_NE(error(alone).find("(dp x cp = 1)"), std::string::npos);
  alone.cp = 2;
  alone.flash_attention = true;  // context parallelism runs fused attention
  EXPECT_EQ(error(alone), "");
}

// ZeRO-2 on GPT-3 1.3B, TP 1, DP 16, two micro-batches / every layer reduce-scatters its
// 50,358,272 parameters' fp32 gradients (201,433,088 bytes) in each micro-batch's backward,
// because a rank keeps only its shard of the gradients and so cannot accumulate the micro-batches
// in a full buffer; it gathers nothing before its compute (parameters stay whole). The
// iteration's reduction keeps the embedding and the head, and the parameter all-gather after the
// optimizer still gathers every parameter (bf16). With one micro-batch it is ZeRO-1's single
// reduction: no per-layer rows.
TEST(TrainingWorkload, ZeroTwoScattersGradientsEveryMicroBatch) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(1, 1, 2);
  p.dp = 16;
  p.zero = 2;
  const auto per_layer_rows = [&](const Program& program) {
    int rows = 0;
    for (size_t i = program.micro_batches[0].begin; i < program.micro_batches[0].end; ++i) {
      const Layer& l = program.layers[i];
      if (l.name.find("gather") != std::string::npos) ADD_FAILURE() << l.name;
      if (!l.name.ends_with("gradient scatter")) continue;
      ++rows;
      EXPECT_FALSE(l.forward.comm) << l.name;
      EXPECT_FALSE(l.input_grad.comm) << l.name;
      EXPECT_EQ(l.weight_grad.comm->kind, CollectiveKind::ReduceScatter);
      EXPECT_EQ(l.weight_grad.comm->group, CommGroup::Data);
      EXPECT_EQ(l.weight_grad.comm->bytes, 201'433'088u);
    }
    return rows;
  };
  const Program& program = generate_training_workload(m, p).workload.program;
  EXPECT_EQ(per_layer_rows(program), 24);
  const ParameterCount whole = parameter_count(m);
  const double ends =  // the final LayerNorm has 2 h weights
      static_cast<double>(whole.embedding + whole.position + whole.lm_head + 2 * m.hidden);
  bool reduced = false, gathered = false;
  for (size_t i = program.after.begin; i < program.after.end; ++i) {
    const Layer& l = program.layers[i];
    if (l.name == "dense gradient reduction") {
      reduced = true;
      EXPECT_EQ(l.weight_grad.comm->bytes, static_cast<Bytes>(ends * 4));
    }
    if (l.name == "parameter all-gather") {
      gathered = true;
      EXPECT_EQ(l.weight_grad.comm->bytes, static_cast<Bytes>((ends + 24 * 50'358'272.0) * 2));
    }
  }
  EXPECT_TRUE(reduced);
  EXPECT_TRUE(gathered);
  p.micro_batches = 1;
  EXPECT_EQ(per_layer_rows(generate_training_workload(m, p).workload.program), 0);
}

// GPT-3 1.3B with flash attention and --without elementwise / each layer keeps its GEMMs and both
// passes of fused attention (forward 2 b h s^2 d, backward 2.5 times that) and nothing else,
// because the term leaves out only the memory-bound kernels.
TEST(TrainingWorkload, WithoutElementwiseKeepsBothAttentionPasses) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(1, 1, 1);
  p.flash_attention = true;
  p.terms.elementwise = false;
  const TrainingWorkload t = generate_training_workload(m, p);
  double forward = 0, backward = 0;
  for (const Layer* l : layer_records(t.workload, 1))
    for (const Phase* phase : {&l->forward, &l->input_grad, &l->weight_grad})
      for (const ComputeDemand& k : phase->kernels) {
        EXPECT_TRUE(k.kind == KernelClass::Gemm || k.kind == KernelClass::Attention ||
                    k.kind == KernelClass::AttentionBackward)
            << l->name;
        if (k.kind == KernelClass::Attention) forward += k.flop;
        if (k.kind == KernelClass::AttentionBackward) backward += k.flop;
      }
  const double expected = 2.0 * 16 * 2048.0 * 2048 * 128;  // b 1, 16 heads of 128, s 2048
  EXPECT_DOUBLE_EQ(forward, expected);
  EXPECT_DOUBLE_EQ(backward, 2.5 * expected);
}

// GPT-3 1.3B (h 2048, LayerNorm, bf16), 2048 tokens / each layer's two norms read and write
// N h values forward, 2 x 2 x 2048 x 2048 x 2 = 33,554,432 bytes, and 1.5x that backward, with and
// without sequence parallelism (N = 2048 / t with it), because both norms run a backward pass
// (without sequence parallelism the MLP's once lost its own).
TEST(TrainingWorkload, BothNormsOfALayerRunBackward) {
  const ModelSpec m = load_model("gpt3-1.3b");
  for (const bool sp : {false, true}) {
    ParallelPlan p = plan(sp ? 2 : 1, 1, 1);
    p.sequence_parallel = sp;
    const TrainingWorkload t = generate_training_workload(m, p);
    double forward = 0, backward = 0;
    for (const Layer* l : layer_records(t.workload, 1))
      for (const ComputeDemand& k : l->forward.kernels)
        if (k.kind == KernelClass::LayerNorm) forward += static_cast<double>(k.bytes);
    for (const Layer* l : layer_records(t.workload, 1))
      for (const ComputeDemand& k : l->input_grad.kernels)
        if (k.kind == KernelClass::LayerNorm) backward += static_cast<double>(k.bytes);
    const double expected = 33554432.0 / (sp ? 2 : 1);
    EXPECT_DOUBLE_EQ(forward, expected) << "sequence parallel " << sp;
    EXPECT_DOUBLE_EQ(backward, 1.5 * expected) << "sequence parallel " << sp;
  }
}

// Mixtral 8x7B with EP 8, TP 1 / a MoE layer dispatches and combines its routed tokens over the
// expert group: four all-to-alls of N k h values per layer (two forward, two backward).
TEST(TrainingWorkload, MoeLayersExchangeTokensOverTheExpertGroup) {
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  ParallelPlan p = plan(1, 1, 1);
  p.ep = 8;
  p.dp = 8;
  p.flash_attention = true;
  const TrainingWorkload t = generate_training_workload(mixtral, p);
  int a2a = 0;
  for (const Layer* l : layer_records(t.workload, 1))
    for (const Phase* ph : {&l->forward, &l->input_grad})
      if (ph->comm && ph->comm->kind == CollectiveKind::AllToAll) {
        ++a2a;
        EXPECT_EQ(ph->comm->group, CommGroup::Expert);
        EXPECT_EQ(ph->comm->bytes, 2048 * 2 * 4096 * 2);
      }
  EXPECT_EQ(a2a, 4);
}

// Llama-3 8B, seq 8192, CP 2 / each rank runs half the attention work on its 4096 tokens and
// all-gathers keys and values over the context group: 2 x 4096 tokens x 8 heads x 128 x 2 bytes
// per rank, 2 ranks, because ring attention passes every rank's K and V around the group.
TEST(TrainingWorkload, ContextParallelismSplitsTheSequence) {
  const ModelSpec llama = load_model("llama3-8b");
  ParallelPlan p = plan(1, 1, 1);
  p.seq = 8192;
  p.flash_attention = true;
  const auto attention_flop = [&](int64_t cp) {
    p.cp = cp;
    const TrainingWorkload t = generate_training_workload(llama, p);
    double f = 0;
    for (const Layer* l : layer_records(t.workload, 1)) {
      f += flop(l->forward, KernelClass::Attention);
      if (cp > 1 && l->forward.comm && l->forward.comm->group == CommGroup::Context) {
        EXPECT_EQ(l->forward.comm->kind, CollectiveKind::AllGather);
        EXPECT_EQ(l->forward.comm->bytes, 2 * 4096 * 8 * 128 * 2 * 2);
      }
    }
    EXPECT_EQ(t.workload.parallelism.cp, cp);
    return f;
  };
  const double whole = attention_flop(1);
  EXPECT_NEAR(attention_flop(2), whole / 2, 1e-6 * whole);
}

// The iteration-level rows whose forward carries a collective of `group`, each with the stages
// that run it.
std::vector<std::pair<const Layer*, std::vector<int64_t>>> tail_rows(const Workload& w,
                                                                     CommGroup group) {
  std::vector<std::pair<const Layer*, std::vector<int64_t>>> rows;
  const Program& p = w.program;
  for (size_t i = p.after.begin; i < p.after.end; ++i) {
    const Layer& l = p.layers[i];
    if (!l.forward.comm || l.forward.comm->group != group) continue;
    std::vector<int64_t> stages;
    for (int64_t s = 0; s < w.parallelism.pp; ++s)
      if (p.runs_on(l, s)) stages.push_back(s);
    rows.emplace_back(&l, stages);
  }
  return rows;
}

// GPT-3 175B (tied embeddings), TP 8, PP 8 / the first and last stage all-reduce the word
// embedding's fp32 gradient between them: vocab / t x hidden values = 51200 / 8 x 12288 x 4 bytes
// each, once per iteration, and no other stage takes part (Megatron's embedding group).
TEST(TrainingWorkload, TiedEmbeddingGradientIsAllReducedBetweenTheEndStages) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ASSERT_TRUE(gpt3.tied_embeddings);
  const TrainingWorkload t = generate_training_workload(gpt3, plan(8, 8, 8));
  const auto rows = tail_rows(t.workload, CommGroup::Embedding);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].second, std::vector<int64_t>{0});
  EXPECT_EQ(rows[1].second, std::vector<int64_t>{7});
  for (const auto& [row, stages] : rows) {
    EXPECT_EQ(row->forward.comm->kind, CollectiveKind::AllReduce);
    EXPECT_EQ(row->forward.comm->bytes, int64_t{51200 / 8} * 12288 * 4);
  }
  // One stage holds both copies: nothing to all-reduce.
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, plan(8, 1, 8)).workload, CommGroup::Embedding)
          .empty());
  // Untied (Llama-2 7B, its own output layer): none either.
  const ModelSpec llama = load_model("llama2-7b");
  ASSERT_FALSE(llama.tied_embeddings);
  EXPECT_TRUE(
      tail_rows(generate_training_workload(llama, plan(8, 4, 8)).workload, CommGroup::Embedding)
          .empty());
  // Left out with the term.
  ParallelPlan without = plan(8, 8, 8);
  without.terms.tail_collectives = false;
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, without).workload, CommGroup::Embedding).empty());
}

// The gradient norm for clipping / every stage all-reduces one fp32 value (its sum of squares)
// over the model-parallel group (TP x PP) after the gradient reduction and before Adam; with the
// distributed optimizer each rank holds a shard of the gradients, so over the whole job; fp16
// adds the loss scaler's found-inf flag before it, over the same group.
TEST(TrainingWorkload, GradientNormIsAllReducedBeforeTheOptimizer) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  ParallelPlan p = plan(8, 4, 8);
  p.dp = 2;
  const TrainingWorkload t = generate_training_workload(gpt3, p);
  const auto rows = tail_rows(t.workload, CommGroup::ModelParallel);
  ASSERT_EQ(rows.size(), 4u);  // one per stage
  const Program& program = t.workload.program;
  for (size_t k = 0; k < rows.size(); ++k) {
    const Layer& row = *rows[k].first;
    EXPECT_EQ(rows[k].second, std::vector<int64_t>{static_cast<int64_t>(k)});
    EXPECT_EQ(row.name, "gradient-norm all-reduce (stage " + std::to_string(k) + ")");
    EXPECT_EQ(row.forward.comm->kind, CollectiveKind::AllReduce);
    EXPECT_EQ(row.forward.comm->bytes, 4);
    // After the stage's gradient reduction, before its optimizer.
    const auto at = [&](const std::string& name) {
      for (size_t i = program.after.begin; i < program.after.end; ++i)
        if (program.layers[i].name == name) return static_cast<int64_t>(i);
      return int64_t{-1};
    };
    const std::string stage = " (stage " + std::to_string(k) + ")";
    const int64_t norm = at(row.name);
    EXPECT_LT(at("dense gradient reduction" + stage), norm);
    EXPECT_GT(at("optimizer" + stage), norm);
  }
  EXPECT_TRUE(tail_rows(t.workload, CommGroup::World).empty());

  ParallelPlan sharded = p;
  sharded.distributed_optimizer = true;
  EXPECT_EQ(tail_rows(generate_training_workload(gpt3, sharded).workload, CommGroup::World).size(),
            4u);
  ParallelPlan fp16 = p;
  fp16.dtype = DType::FP16;
  const TrainingWorkload fp16_workload = generate_training_workload(gpt3, fp16);
  const auto fp16_rows = tail_rows(fp16_workload.workload, CommGroup::ModelParallel);
  ASSERT_EQ(fp16_rows.size(), 8u);
  EXPECT_EQ(fp16_rows[0].first->name, "found-inf all-reduce (stage 0)");
  EXPECT_EQ(fp16_rows[1].first->name, "gradient-norm all-reduce (stage 0)");
  // One GPU: no group to reduce over.
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, plan(1, 1, 1)).workload, CommGroup::ModelParallel)
          .empty());
}

// GPT-3 1.3B (h = 2048, 24 layers, LayerNorm, biases), TP 2, PP 2, sequence parallelism / each
// tensor rank computes the gradients of the parameters it holds whole from its own half of the
// tokens, so the tensor group all-reduces them once per iteration, fp32: per layer two LayerNorms
// (weight and bias, 4h) and the biases of the two row-parallel layers (attention output
// projection and FC2, 2h), 6h; the last stage adds the final LayerNorm (2h). Stage 0: 12 x 6h x 4
// bytes = 589,824; stage 1: (12 x 6h + 2h) x 4 = 606,208.
TEST(TrainingWorkload, SequenceParallelReplicatedGradientsAreAllReducedOverTheTensorGroup) {
  const ModelSpec gpt3 = load_model("gpt3-1.3b");
  ParallelPlan p = plan(2, 2, 4);
  p.sequence_parallel = true;
  const TrainingWorkload t = generate_training_workload(gpt3, p);
  const auto rows = tail_rows(t.workload, CommGroup::Tensor);
  ASSERT_EQ(rows.size(), 2u);
  const int64_t h = 2048;
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(rows[k].first->name,
              "replicated gradient all-reduce (stage " + std::to_string(k) + ")");
    EXPECT_EQ(rows[k].second, std::vector<int64_t>{static_cast<int64_t>(k)});
    EXPECT_EQ(rows[k].first->forward.comm->kind, CollectiveKind::AllReduce);
  }
  EXPECT_EQ(rows[0].first->forward.comm->bytes, 12 * 6 * h * 4);
  EXPECT_EQ(rows[1].first->forward.comm->bytes, (12 * 6 * h + 2 * h) * 4);
  // Llama-2 7B (RMSNorm, no biases, h = 4096, 32 layers), one stage: two norm weights a layer
  // and the final norm, (32 x 2 + 1) x 4096 x 4 bytes.
  const ModelSpec llama = load_model("llama2-7b");
  ParallelPlan one = plan(2, 1, 4);
  one.sequence_parallel = true;
  const TrainingWorkload llama_t = generate_training_workload(llama, one);
  const auto llama_rows = tail_rows(llama_t.workload, CommGroup::Tensor);
  ASSERT_EQ(llama_rows.size(), 1u);
  EXPECT_EQ(llama_rows[0].first->forward.comm->bytes, int64_t{65} * 4096 * 4);
  // Mixtral 8x7B (RMSNorm, no biases, h = 4096, 32 layers, 8 experts): each layer adds its router
  // (h x 8), (32 x (2h + 8h) + h) x 4 bytes.
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  ParallelPlan moe = plan(2, 1, 4);
  moe.sequence_parallel = true;
  const TrainingWorkload moe_t = generate_training_workload(mixtral, moe);
  const auto moe_rows = tail_rows(moe_t.workload, CommGroup::Tensor);
  ASSERT_EQ(moe_rows.size(), 1u);
  EXPECT_EQ(moe_rows[0].first->forward.comm->bytes, (32 * 10 + 1) * int64_t{4096} * 4);
  // Without sequence parallelism every tensor rank sees every token: the gradients agree already.
  EXPECT_TRUE(tail_rows(generate_training_workload(gpt3, plan(2, 2, 4)).workload, CommGroup::Tensor)
                  .empty());
  ParallelPlan without = p;
  without.terms.tail_collectives = false;
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, without).workload, CommGroup::Tensor).empty());
}

// A one-layer MLA model (h 16, 2 heads of 4 + RoPE 2 for queries and keys, values 3, q_l 6,
// kv_l 5; RMSNorm, no biases), 10 tokens, TP 2, core attention left out / with sequence
// parallelism the down-projections (16 -> 6 and 16 -> 5 + 2) run on the rank's 5 tokens,
// 2 x 5 x 16 x 13 = 2,080 FLOPs, and the up-projections (6 -> 2 x 6 / 2, 5 -> 2 x 7 / 2) on all 10,
// 2 x 10 x (6 x 6 + 5 x 7) = 1,420; the tensor group gathers the compressed 6 + 5 + 2 values a
// token forward (10 x 13 x 2 = 260 bytes) and reduce-scatters their gradients backward, and the
// output's backward re-gathers the column-parallel up-projections' saved inputs, the compressed
// queries, keys and values without the RoPE key (10 x 11 x 2 = 220); the
// replicated-gradient all-reduce carries the down-projections and their norms (96 + 6 + 112 + 5)
// besides the layer's two norms and the final one (3 x 16), 267 fp32 values; without sequence
// parallelism every rank runs the down-projections on all 10 tokens, all-reduces the
// up-projections' input gradients (6 + 5 values, 220 bytes) and has no replicated gradients to
// reduce, because Megatron-core holds the down-projections whole on every tensor rank.
TEST(TrainingWorkload, MlaGathersTheCompressedValuesAndKeepsTheDownProjectionsWhole) {
  const ModelSpec mla = parse_model_yaml(
      "name: tiny-mla\nlayers: 1\nhidden: 16\nheads: 2\nhead_dim: 4\nvocab: 10\nseq: 10\n"
      "norm: rmsnorm\nbias: false\nposition: rope\n"
      "attention: {kind: mla, q_lora_rank: 6, kv_lora_rank: 5, rope_dim: 2, v_head_dim: 3}\n",
      "m.yaml");
  for (const bool sp : {true, false}) {
    ParallelPlan p = plan(2, 1, 1);
    p.seq = 10;
    p.sequence_parallel = sp;
    p.terms.attention = false;
    const TrainingWorkload t = generate_training_workload(mla, p);
    const std::vector<const Layer*> records = layer_records(t.workload, 1);
    ASSERT_GE(records.size(), 2u);
    const Layer& down = *records[0];
    const Layer& up = *records[1];
    EXPECT_EQ(down.name, "layer 1 attention norm and down-projections");
    EXPECT_EQ(up.name, "layer 1 attention");
    EXPECT_DOUBLE_EQ(flop(down.forward, KernelClass::Gemm), sp ? 2080 : 4160) << sp;
    EXPECT_DOUBLE_EQ(flop(up.forward, KernelClass::Gemm), 1420) << sp;
    ASSERT_TRUE(up.input_grad.comm);
    EXPECT_EQ(up.input_grad.comm->kind,
              sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce);
    EXPECT_EQ(up.input_grad.comm->bytes, sp ? 260 : 220);
    EXPECT_EQ(down.forward.comm.has_value(), sp);
    const auto rows = tail_rows(t.workload, CommGroup::Tensor);
    if (sp) {
      EXPECT_EQ(down.forward.comm->kind, CollectiveKind::AllGather);
      EXPECT_EQ(down.forward.comm->bytes, 260);
      ASSERT_GE(records.size(), 3u);
      EXPECT_EQ(records[2]->name, "layer 1 attention output");
      ASSERT_TRUE(records[2]->input_grad.comm);
      EXPECT_EQ(records[2]->input_grad.comm->bytes, 220);
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0].first->forward.comm->bytes, 267 * 4);
    } else {
      EXPECT_TRUE(rows.empty());
    }
  }
  // Without q_l the queries project from the hidden state, which is gathered with the compressed
  // keys and values: 16 + 5 + 2 values a token, 10 x 23 x 2 = 460 bytes, and the down-projection
  // is the keys' and values' alone, 2 x 5 x 16 x 7 = 1,120 FLOPs.
  ParallelPlan p = plan(2, 1, 1);
  p.seq = 10;
  p.sequence_parallel = true;
  p.terms.attention = false;
  const TrainingWorkload direct = generate_training_workload(
      parse_model_yaml("name: tiny-mla-direct\nlayers: 1\nhidden: 16\nheads: 2\nhead_dim: 4\n"
                       "vocab: 10\nseq: 10\nnorm: rmsnorm\nbias: false\nposition: rope\n"
                       "attention: {kind: mla, kv_lora_rank: 5, rope_dim: 2, v_head_dim: 3}\n",
                       "d.yaml"),
      p);
  const std::vector<const Layer*> records = layer_records(direct.workload, 1);
  ASSERT_GE(records.size(), 2u);
  EXPECT_DOUBLE_EQ(flop(records[0]->forward, KernelClass::Gemm), 1120);
  ASSERT_TRUE(records[0]->forward.comm);
  EXPECT_EQ(records[0]->forward.comm->bytes, 460);
  // With context parallelism 2 (TP 1, 16 tokens, 8 a rank) ring attention passes every rank's
  // keys (2 heads of 4 + 2) and values (2 of 3) around: 8 x 18 x 2 bytes a rank, 576 gathered.
  ParallelPlan cp = plan(1, 1, 1);
  cp.seq = 16;
  cp.cp = 2;
  cp.flash_attention = true;  // ring attention runs the fused kernel
  const TrainingWorkload ring = generate_training_workload(
      parse_model_yaml("name: tiny-mla\nlayers: 1\nhidden: 16\nheads: 2\nhead_dim: 4\nvocab: 10\n"
                       "seq: 16\nnorm: rmsnorm\nbias: false\nposition: rope\n"
                       "attention: {kind: mla, q_lora_rank: 6, kv_lora_rank: 5, rope_dim: 2, "
                       "v_head_dim: 3}\n",
                       "c.yaml"),
      cp);
  int gathers = 0;
  for (const Layer* l : layer_records(ring.workload, 1))
    if (l->forward.comm && l->forward.comm->group == CommGroup::Context) {
      ++gathers;
      EXPECT_EQ(l->forward.comm->bytes, 576);
    }
  EXPECT_EQ(gathers, 1);
}

// Llama-2 7B in bf16, GPT-3 1.3B in fp16 and Llama-2 7B in FP8 with the weights kept in fp8, one
// GPU (TP 1, PP 1, no data parallelism) / the optimizer step streams 38, 46 and 37 bytes per
// parameter: the gradient-norm read (4), fp16's unscale pass (8), Adam (28), the compute copy
// refreshed (read 4, write the weight's 2 or 1 bytes); then the fp32 gradient buffer is zeroed
// (4 bytes per parameter), because that is what Megatron's optimizer step moves through memory.
TEST(TrainingWorkload, OptimizerStepStreamsItsBytesPerParameter) {
  struct Case {
    const char* model;
    DType dtype;
    bool fp8_weights;
    double bytes;
  };
  for (const Case& c :
       {Case{"llama2-7b", DType::BF16, false, 38}, Case{"gpt3-1.3b", DType::FP16, false, 46},
        Case{"llama2-7b", DType::FP8, true, 37}}) {
    const ModelSpec m = load_model(c.model);
    ParallelPlan p = plan(1, 1, 1);
    p.dtype = c.dtype;
    p.fp8_param_gather = c.fp8_weights;
    p.distributed_optimizer = c.fp8_weights;  // fp8 weights need a sharded optimizer
    const TrainingWorkload t = generate_training_workload(m, p);
    const Layer* optimizer = nullptr;
    for (const Layer& l : t.workload.program.layers)
      if (l.name == "optimizer") optimizer = &l;
    ASSERT_NE(optimizer, nullptr) << c.model;
    ASSERT_EQ(optimizer->forward.kernels.size(), 2u);
    const double params = static_cast<double>(parameter_count(m).total());
    EXPECT_NEAR(static_cast<double>(optimizer->forward.kernels[0].bytes), c.bytes * params,
                1e-6 * params)
        << c.model;
    EXPECT_NEAR(static_cast<double>(optimizer->forward.kernels[1].bytes), 4 * params, 1e-6 * params)
        << c.model;
  }
}

// The loss / the last stage averages the iteration's loss over the data-parallel replicas (and
// context ranks): the summed loss and its token count, two fp32 values, 8 bytes, once per
// iteration, after the Adam step (Megatron's train_step).
TEST(TrainingWorkload, LossIsAveragedOverTheDataParallelGroupOnTheLastStage) {
  const ModelSpec gpt3 = load_model("gpt3-1.3b");
  ParallelPlan p = plan(2, 4, 8);
  p.dp = 2;
  const TrainingWorkload t = generate_training_workload(gpt3, p);
  const auto rows = tail_rows(t.workload, CommGroup::Data);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].first->name, "loss all-reduce (stage 3)");
  EXPECT_EQ(rows[0].second, std::vector<int64_t>{3});
  EXPECT_EQ(rows[0].first->forward.comm->kind, CollectiveKind::AllReduce);
  EXPECT_EQ(rows[0].first->forward.comm->bytes, 8);
  const Program& program = t.workload.program;
  const auto at = [&](const std::string& name) {
    for (size_t i = program.after.begin; i < program.after.end; ++i)
      if (program.layers[i].name == name) return static_cast<int64_t>(i);
    return int64_t{-1};
  };
  EXPECT_GE(at("optimizer (stage 3)"), 0);
  EXPECT_LT(at("optimizer (stage 3)"), at("loss all-reduce (stage 3)"));
  // Context ranks hold parts of the same sequences: they average too.
  ParallelPlan cp = plan(2, 1, 4);
  cp.cp = 2;
  cp.flash_attention = true;
  EXPECT_EQ(tail_rows(generate_training_workload(gpt3, cp).workload, CommGroup::Data).size(), 1u);
  // One replica: nothing to average.
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, plan(2, 4, 8)).workload, CommGroup::Data).empty());
  ParallelPlan without = p;
  without.terms.tail_collectives = false;
  EXPECT_TRUE(
      tail_rows(generate_training_workload(gpt3, without).workload, CommGroup::Data).empty());
}

// Plans Megatron-LM would refuse are refused, naming the flag.
TEST(TrainingWorkload, ImpossiblePlansNameTheFlag) {
  const ModelSpec gpt3 = load_model("gpt3-175b");
  const auto error = [&](ParallelPlan p) {
    try {
      generate_training_workload(gpt3, p);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(plan(5, 1, 1)), "--tp 5: expected a divisor of the 96 attention heads");
  ParallelPlan interleaved = plan(8, 8, 4);
  interleaved.vpp = 2;
  EXPECT_EQ(error(interleaved),
            "--vpp 2: the interleaved schedule needs at least pp (8) micro-batches per "
            "iteration, the plan has 4 (raise --gbs or lower --mbs)");
  ParallelPlan experts = plan(8, 1, 1);
  experts.ep = 2;
  EXPECT_EQ(error(experts), "--ep 2: 'gpt3-175b' has no experts");
}

// --tp-comm-overlap (GPT-3 1.3B, TP 4, sequence parallelism): each layer's tensor-parallel
// collectives are the same as without it, each of N h values (2048 x 2048 x 2 bytes): 2
// all-gathers and 2 reduce-scatters forward, 4 and 2 backward; but each now runs beside the GEMM
// that needs or makes it (TrainingWorkload and docs/models.md say which), as
// NeMo's GPT-3 175B userbuffers config has TE run them: forward, the QKV and FC1 GEMMs beside the
// ring exchange of their input's all-gather (1 SM), the attention projection beside its
// reduce-scatter in 4 chunks (24 SMs, GEMM on the SMs left), FC2 beside its reduce-scatter's ring
// exchange (1 SM, SMs left); backward, the projections' input gradients beside the ring exchange
// of the output gradient's all-gather, QKV's and FC1's input gradients beside the bulk re-gather
// of their input (4 and 2 SMs) and their weight gradients beside the bulk reduce-scatter of that
// input gradient (4 SMs). No tensor-parallel collective of a layer is left to run after its
// compute; the embedding's and the LM head's stay (TE does not run them).
TEST(TrainingWorkload, TpCommOverlapRunsTheLayersCollectivesBesideTheirGemms) {
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelPlan p = plan(4, 1, 1);
  p.sequence_parallel = true;
  const TrainingWorkload serial = generate_training_workload(m, p);
  p.tp_comm_overlap = true;
  const TrainingWorkload overlapped = generate_training_workload(m, p);
  const Bytes y = 2048 * 2048 * 2;
  // (kind, phase) -> count, over one layer's records.
  const auto census = [&](const Workload& w, bool beside) {
    std::map<std::pair<CollectiveKind, int>, int> out;
    for (const Layer* l : layer_records(w, 1)) {
      const Phase* phases[3] = {&l->forward, &l->input_grad, &l->weight_grad};
      for (int k = 0; k < 3; ++k) {
        const auto& c = beside && phases[k]->overlapped ? std::optional(phases[k]->overlapped->comm)
                                                        : phases[k]->comm;
        if (!c) continue;
        EXPECT_EQ(c->group, CommGroup::Tensor);
        EXPECT_EQ(c->bytes, y);
        ++out[{c->kind, k == 0 ? 0 : 1}];
      }
    }
    return out;
  };
  const auto before = census(serial.workload, false);
  const auto after = census(overlapped.workload, true);
  using K = CollectiveKind;
  const std::map<std::pair<CollectiveKind, int>, int> expected = {
      {{K::AllGather, 0}, 2},
      {{K::ReduceScatter, 0}, 2},  // forward
      {{K::AllGather, 1}, 4},
      {{K::ReduceScatter, 1}, 2}};  // backward
  EXPECT_EQ(before, expected);
  EXPECT_EQ(after, expected);

  std::map<std::string, std::vector<std::tuple<int, GemmOverlapMethod, int64_t, int64_t, bool>>>
      found;
  for (const Layer* l : layer_records(overlapped.workload, 1)) {
    EXPECT_FALSE(l->forward.comm) << l->name;
    EXPECT_FALSE(l->input_grad.comm) << l->name;
    const Phase* phases[3] = {&l->forward, &l->input_grad, &l->weight_grad};
    for (int k = 0; k < 3; ++k)
      if (const auto& o = phases[k]->overlapped) {
        found[l->name].emplace_back(k, o->method, o->chunks, o->sms, o->sm_margin);
        EXPECT_TRUE(std::any_of(phases[k]->kernels.begin(), phases[k]->kernels.end(),
                                [](const ComputeDemand& d) { return d.kind == KernelClass::Gemm; }))
            << l->name;
      }
  }
  using M = GemmOverlapMethod;
  using Row = std::tuple<int, GemmOverlapMethod, int64_t, int64_t, bool>;
  EXPECT_EQ(found["layer 1 attention"], (std::vector<Row>{{0, M::RingExchange, 4, 1, false},
                                                          {1, M::Bulk, 1, 4, false},
                                                          {2, M::Bulk, 1, 4, false}}));
  EXPECT_EQ(found["layer 1 attention output"],
            (std::vector<Row>{{0, M::Pipelined, 4, 24, true}, {1, M::RingExchange, 4, 1, false}}));
  EXPECT_EQ(found["layer 1 MLP"], (std::vector<Row>{{0, M::RingExchange, 4, 1, false},
                                                    {1, M::Bulk, 1, 2, false},
                                                    {2, M::Bulk, 1, 4, false}}));
  EXPECT_EQ(found["layer 1 MLP output"], (std::vector<Row>{{0, M::RingExchange, 4, 1, true},
                                                           {1, M::RingExchange, 4, 1, false}}));
  EXPECT_EQ(found.size(), 4u);
  // Same records, same kernels: only where the collectives run differs.
  ASSERT_EQ(serial.workload.program.layers.size(), overlapped.workload.program.layers.size());
  for (size_t i = 0; i < serial.workload.program.layers.size(); ++i)
    EXPECT_EQ(serial.workload.program.layers[i].forward.kernels.size(),
              overlapped.workload.program.layers[i].forward.kernels.size());
}

// DeepSeek-V3 (MLA attention, MoE from layer 4) on TP 2 with sequence parallelism and
// --tp-comm-overlap: the attention projection's collectives run beside its GEMMs as in a dense
// layer, while what TE does not overlap stays after its compute: MLA's gather of the compressed
// values and the up-projections' input-gradient reduce-scatter, the projection's re-gather of
// MLA's saved input (the up-projections keep no overlap of their own), and the MoE layer's token
// gather over the tensor group.
TEST(TrainingWorkload, TpCommOverlapLeavesMlaAndMoeCollectivesAfterTheirCompute) {
  const ModelSpec m = load_model("deepseek-v3");
  ParallelPlan p = plan(2, 1, 1);
  p.seq = 4096;
  p.flash_attention = true;
  p.ep = 8;
  p.dp = 8;
  p.sequence_parallel = true;
  p.tp_comm_overlap = true;
  const TrainingWorkload t = generate_training_workload(m, p);
  std::map<std::string, const Layer*> records;
  for (const Layer* l : layer_records(t.workload, 4))
    records[l->name] = l;
  const Layer* down = records.at("layer 4 attention norm and down-projections");
  ASSERT_TRUE(down->forward.comm);
  EXPECT_EQ(down->forward.comm->kind, CollectiveKind::AllGather);
  EXPECT_FALSE(down->forward.overlapped);
  const Layer* up = records.at("layer 4 attention");
  ASSERT_TRUE(up->input_grad.comm);
  EXPECT_EQ(up->input_grad.comm->kind, CollectiveKind::ReduceScatter);
  EXPECT_FALSE(up->forward.overlapped || up->input_grad.overlapped || up->weight_grad.overlapped);
  const Layer* out = records.at("layer 4 attention output");
  ASSERT_TRUE(out->forward.overlapped);
  EXPECT_EQ(out->forward.overlapped->method, GemmOverlapMethod::Pipelined);
  ASSERT_TRUE(out->input_grad.overlapped);
  EXPECT_EQ(out->input_grad.overlapped->method, GemmOverlapMethod::RingExchange);
  ASSERT_TRUE(out->input_grad.comm);  // MLA's re-gather, q_l + kv_l values a token
  EXPECT_EQ(out->input_grad.comm->bytes, 4096 * (1536 + 512) * 2);
  const Layer* gather = records.at("layer 4 MoE token gather");
  ASSERT_TRUE(gather->forward.comm);
  EXPECT_EQ(gather->forward.comm->group, CommGroup::Tensor);
}

// --tp-comm-overlap overlaps the collectives of sequence parallelism: without it, or with one
// tensor rank, it is refused by name.
TEST(TrainingWorkload, TpCommOverlapNeedsSequenceParallelismOverTensorRanks) {
  const ModelSpec m = load_model("gpt3-1.3b");
  const std::string message =
      "--tp-comm-overlap: expected --sequence-parallel and --tp above 1 (it overlaps the "
      "sequence-parallel all-gathers and reduce-scatters with their GEMMs)";
  for (const auto& [tp, sp] : {std::pair{4, false}, {1, true}, {1, false}}) {
    ParallelPlan p = plan(tp, 1, 1);
    p.sequence_parallel = sp;
    p.tp_comm_overlap = true;
    try {
      generate_training_workload(m, p);
      ADD_FAILURE() << "tp " << tp << " sp " << sp;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), message);
    }
  }
}

}  // namespace
}  // namespace orrery
