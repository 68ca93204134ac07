#include "models/memory_model.h"

#include <algorithm>

#include "models/model_counts.h"
#include "models/stage_layout.h"

namespace orrery {
namespace {

double inner_activation_factor(const ModelSpec& spec) {
  return spec.activation == Activation::Swiglu ? 3.0 : 2.0;  // 6sf or 4sf for 2-byte values
}

// Micro-batches whose activations stage `stage` keeps at its peak.
double in_flight(const ParallelPlan& plan, int64_t stage) {
  const auto p = static_cast<double>(plan.pp);
  const auto v = static_cast<double>(plan.vpp);
  double held = p - static_cast<double>(stage);
  if (plan.vpp > 1) held *= 1 + (p - 1) / (p * v);
  return std::min(held, static_cast<double>(plan.micro_batches));
}

// Values a token keeps for the attention block's backward that the tensor group splits, in units
// of value_bytes: queries, keys, values and the output projection's input. MLA's query and key
// heads are head_dim + rope_dim wide and its value heads v_head_dim.
double attention_values_per_token(const ModelSpec& spec) {
  const auto a = static_cast<double>(spec.heads);
  if (spec.attention == AttentionKind::Mla) {
    const auto qk = a * static_cast<double>(spec.head_dim + spec.mla.rope_dim);
    const auto v = a * static_cast<double>(spec.mla.v_head_dim);
    return 2 * qk + 2 * v;
  }
  const auto q = a * static_cast<double>(spec.head_dim);
  const auto kv = static_cast<double>(spec.kv_heads * spec.head_dim);
  return q + 2 * kv + q;
}

// MLA's compressed values a token keeps on every tensor rank (0 for other attention kinds): the
// q_l and kv_l norms' inputs and outputs (the outputs are the up-projections' inputs), on the
// rank's own tokens with sequence parallelism (Transformer Engine keeps the input shard and
// re-gathers it in backward), and the RoPE key, gathered and kept whole. In units of value_bytes,
// per token of the micro-batch.
double mla_compressed_values_per_token(const ModelSpec& spec, const ParallelPlan& plan) {
  if (spec.attention != AttentionKind::Mla) return 0;
  const double compressed = 2 * static_cast<double>(spec.mla.q_lora_rank + spec.mla.kv_lora_rank);
  const double shard = plan.sequence_parallel ? static_cast<double>(plan.tp) : 1.0;
  return compressed / shard + static_cast<double>(spec.mla.rope_dim);
}

struct LayerMemory {
  double shard_parameters = 0;  // one GPU's parameters of the layer
  double activation_bytes = 0;  // what one micro-batch of the layer keeps (no recompute)
};

// Parameters one GPU of a stage holds for one transformer layer.
double layer_shard_parameters(const ModelSpec& spec, const ParallelPlan& plan, int64_t layer) {
  const ParameterCount c = layer_parameter_count(spec, layer);
  const auto t = static_cast<double>(plan.tp);
  return tensor_rank_dense_parameters(c, plan.tp) +
         static_cast<double>(c.routed_experts) / (t * static_cast<double>(plan.ep));
}

}  // namespace

std::vector<int64_t> stage_layers(int64_t layers, int64_t stages) {
  std::vector<int64_t> out(static_cast<size_t>(stages), layers / stages);
  int64_t extra = layers % stages;
  // Middle stages first, outward: the first and last keep the embedding and the LM head.
  for (int64_t k = 0; extra > 0; ++k) {
    const int64_t middle = stages / 2;
    const int64_t at = k % 2 == 0 ? middle + k / 2 : middle - 1 - k / 2;
    if (at >= 0 && at < stages) {
      ++out[static_cast<size_t>(at)];
      --extra;
    }
  }
  return out;
}

double layer_activation_bytes(const ModelSpec& spec, const ParallelPlan& plan, int64_t layer) {
  const double vb = static_cast<double>(plan.value_bytes);
  const double s = static_cast<double>(plan.micro_batch * plan.seq) / static_cast<double>(plan.cp);
  const auto h = static_cast<double>(spec.hidden);
  const auto t = static_cast<double>(plan.tp);
  const auto a = static_cast<double>(spec.heads);
  // Kept whole on every tensor-parallel rank: two norm inputs, the attention and MLP inputs
  // (values), two dropout masks (one byte each).
  double replicated = (4 * vb + 2) * s * h;
  if (plan.sequence_parallel) replicated /= t;
  // Divided by t: queries, keys, values, the output projection's input, the MLP's inner values.
  double inner = 0;
  if (spec.is_moe_layer(layer)) {
    const MoeSpec& m = *spec.moe;
    inner = inner_activation_factor(spec) * vb * s *
            (static_cast<double>(m.top_k * m.ffn_hidden) +
             static_cast<double>(m.shared_experts * m.shared_ffn_hidden));
  } else {
    inner = inner_activation_factor(spec) * vb * s * static_cast<double>(spec.ffn_hidden);
  }
  double sharded = vb * s * attention_values_per_token(spec) + inner;
  replicated += vb * s * mla_compressed_values_per_token(spec, plan);
  if (plan.recompute != RecomputeMode::Selective) {
    const double keys = static_cast<double>(plan.seq);  // every query sees the whole sequence
    sharded += plan.flash_attention ? 4 * a * s         // fp32 row statistics
                                    : (2 * vb + 1) * a * s * keys;  // scores, mask, dropout out
  }
  return replicated + sharded / t;
}

MemoryEstimate estimate_memory(const ModelSpec& spec, const ParallelPlan& plan,
                               double capacity_bytes) {
  MemoryEstimate estimate;
  estimate.capacity_bytes = capacity_bytes;
  const StageLayout layout =
      stage_layout(spec.layers, plan.pp, plan.vpp, plan.first_stage_layers, plan.last_stage_layers);
  const ParameterCount whole = parameter_count(spec);
  const auto t = static_cast<double>(plan.tp);
  const auto d = static_cast<double>(plan.dp * plan.cp);  // the optimizer shards over DP x CP
  const double vb = static_cast<double>(plan.value_bytes);
  const double s = static_cast<double>(plan.micro_batch * plan.seq) / static_cast<double>(plan.cp);
  const auto h = static_cast<double>(spec.hidden);
  // A layer's parameters and activations depend on whether it is an MoE layer, nothing else.
  const auto layer_memory = [&](bool want_moe) {
    for (int64_t l = 0; l < spec.layers; ++l)
      if (spec.is_moe_layer(l) == want_moe)
        return LayerMemory{layer_shard_parameters(spec, plan, l),
                           layer_activation_bytes(spec, plan, l)};
    return LayerMemory{};
  };
  const LayerMemory dense = layer_memory(false), moe = spec.moe ? layer_memory(true) : dense;
  for (int64_t stage = 0; stage < plan.pp; ++stage) {
    StageMemory m;
    m.stage = stage;
    const std::vector<int64_t> layers = layout.stage_layer_indices(stage);
    m.layers = static_cast<int64_t>(layers.size());
    double params = 0, activations = 0, largest_layer = 0;
    for (const int64_t l : layers) {
      const LayerMemory& per = spec.is_moe_layer(l) ? moe : dense;
      params += per.shard_parameters;
      const double layer = per.activation_bytes;
      largest_layer = std::max(largest_layer, layer);
      activations += plan.recompute == RecomputeMode::Full
                         ? vb * s * h / (plan.sequence_parallel ? t : 1.0)  // the layer's input
                         : layer;
    }
    const bool first = stage == 0, last = stage == plan.pp - 1;
    if (first) {
      params += static_cast<double>(whole.embedding) / t + static_cast<double>(whole.position);
      activations += s * h / (plan.sequence_parallel ? t : 1.0);  // embedding dropout mask
    }
    if (last) {
      const bool head_copy = spec.tied_embeddings && plan.pp > 1;
      params += static_cast<double>(head_copy ? whole.embedding : whole.lm_head) / t;
      params += static_cast<double>(spec.hidden) * (spec.norm == Norm::LayerNorm ? 2 : 1);
      m.logits_bytes = 4 * s * static_cast<double>(spec.vocab) / t;
    }
    m.activations_bytes = activations * in_flight(plan, stage);
    if (plan.recompute == RecomputeMode::Full) m.activations_bytes += largest_layer;
    m.weights_bytes = (plan.fp8_param_gather ? 1 : 2) * params / (plan.zero >= 3 ? d : 1.0);
    m.gradients_bytes = 4 * params / (plan.zero >= 2 ? d : 1.0);
    m.optimizer_bytes = 12 * params / (plan.distributed_optimizer || plan.zero >= 1 ? d : 1.0);
    estimate.stages.push_back(m);
  }
  return estimate;
}

}  // namespace orrery
