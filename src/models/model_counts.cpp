#include "models/model_counts.h"

#include <cmath>

namespace orrery {
namespace {

// Counts are computed in double: exact for every count below 2^53, which parse_model_yaml
// guarantees by refusing models above 10^15 parameters.

double norm_params(const ModelSpec& s, double width) {
  return s.norm == Norm::LayerNorm ? 2 * width : width;
}

// A linear layer in -> out, with its bias when the model has biases.
double linear(const ModelSpec& s, double in, double out) {
  return in * out + (s.bias ? out : 0);
}

// An MLP of width f: xi matrices (gate and up h -> f for SwiGLU, down f -> h).
double mlp_params(const ModelSpec& s, double f) {
  const double h = static_cast<double>(s.hidden);
  return static_cast<double>(s.mlp_matrices() - 1) * linear(s, h, f) + linear(s, f, h);
}

// MLA's down-projections and their norms: every tensor rank holds them whole.
double attention_duplicated_params(const ModelSpec& s) {
  if (s.attention != AttentionKind::Mla) return 0;
  const double h = static_cast<double>(s.hidden);
  const double ql = static_cast<double>(s.mla.q_lora_rank);
  const double kvl = static_cast<double>(s.mla.kv_lora_rank);
  const double r = static_cast<double>(s.mla.rope_dim);
  return (ql > 0 ? linear(s, h, ql) + norm_params(s, ql) : 0) + linear(s, h, kvl + r) +
         norm_params(s, kvl);
}

// MLA: the down-projections and their norms (above), then the up-projections to a heads of
// d + r (queries, from q_l or straight from h) and d + v (keys and values), and the output.
double attention_params(const ModelSpec& s) {
  const double h = static_cast<double>(s.hidden), a = static_cast<double>(s.heads);
  const double g = static_cast<double>(s.kv_heads), d = static_cast<double>(s.head_dim);
  if (s.attention != AttentionKind::Mla) return linear(s, h, (a + 2 * g) * d) + linear(s, a * d, h);
  const double ql = static_cast<double>(s.mla.q_lora_rank);
  const double kvl = static_cast<double>(s.mla.kv_lora_rank);
  const double r = static_cast<double>(s.mla.rope_dim), v = static_cast<double>(s.mla.v_head_dim);
  return attention_duplicated_params(s) + linear(s, ql > 0 ? ql : h, a * (d + r)) +
         linear(s, kvl, a * (d + v)) + linear(s, a * v, h);
}

// Weight-matrix elements one token multiplies in a layer's attention (no biases, no norms).
double attention_matmul(const ModelSpec& s) {
  const double h = static_cast<double>(s.hidden), a = static_cast<double>(s.heads);
  const double g = static_cast<double>(s.kv_heads), d = static_cast<double>(s.head_dim);
  if (s.attention != AttentionKind::Mla) return h * (a + 2 * g) * d + a * d * h;
  const double ql = static_cast<double>(s.mla.q_lora_rank);
  const double kvl = static_cast<double>(s.mla.kv_lora_rank);
  const double r = static_cast<double>(s.mla.rope_dim), v = static_cast<double>(s.mla.v_head_dim);
  const double q = ql > 0 ? h * ql + ql * a * (d + r) : h * a * (d + r);
  return q + h * (kvl + r) + kvl * a * (d + v) + a * v * h;
}

// Forward FLOPs per token of one layer's attention scores (Q K^T) and context (P V) at sequence
// length seq, over the full seq x seq matrix.
double attention_core_flops(const ModelSpec& s, double seq) {
  const double a = static_cast<double>(s.heads), d = static_cast<double>(s.head_dim);
  if (s.attention != AttentionKind::Mla) return 2 * seq * a * d + 2 * seq * a * d;
  const double r = static_cast<double>(s.mla.rope_dim), v = static_cast<double>(s.mla.v_head_dim);
  return 2 * seq * a * (d + r) + 2 * seq * a * v;
}

struct Counts {
  double embedding = 0, position = 0, attention = 0, mlp = 0, routed = 0, shared = 0, router = 0,
         norms = 0, lm_head = 0, skipped = 0, duplicated = 0;
  double total() const {
    return embedding + position + attention + mlp + routed + shared + router + norms + lm_head;
  }
};

Counts layer_counts(const ModelSpec& s, int64_t layer) {
  Counts c;
  const double h = static_cast<double>(s.hidden);
  c.attention = attention_params(s);
  c.duplicated = attention_duplicated_params(s);
  c.norms = 2 * norm_params(s, h);
  if (!s.is_moe_layer(layer)) {
    c.mlp = mlp_params(s, static_cast<double>(s.ffn_hidden));
    return c;
  }
  const MoeSpec& m = *s.moe;
  const double expert = mlp_params(s, static_cast<double>(m.ffn_hidden));
  c.routed = static_cast<double>(m.experts) * expert;
  c.shared = static_cast<double>(m.shared_experts) *
             mlp_params(s, static_cast<double>(m.shared_ffn_hidden));
  c.router = h * static_cast<double>(m.experts);
  c.skipped = static_cast<double>(m.experts - m.top_k) * expert;
  return c;
}

Counts model_counts(const ModelSpec& s) {
  Counts c;
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    const Counts l = layer_counts(s, layer);
    c.attention += l.attention;
    c.duplicated += l.duplicated;
    c.mlp += l.mlp;
    c.routed += l.routed;
    c.shared += l.shared;
    c.router += l.router;
    c.norms += l.norms;
    c.skipped += l.skipped;
  }
  const double h = static_cast<double>(s.hidden), vocab = static_cast<double>(s.vocab);
  c.embedding = vocab * h;
  c.position = s.position == Position::Learned ? static_cast<double>(s.seq) * h : 0;
  c.norms += norm_params(s, h);
  c.lm_head = s.tied_embeddings ? 0 : vocab * h;
  return c;
}

ParameterCount to_parameter_count(const Counts& c) {
  const auto i = [](double v) { return static_cast<int64_t>(std::llround(v)); };
  ParameterCount p;
  p.embedding = i(c.embedding);
  p.position = i(c.position);
  p.attention = i(c.attention);
  p.mlp = i(c.mlp);
  p.routed_experts = i(c.routed);
  p.shared_experts = i(c.shared);
  p.router = i(c.router);
  p.norms = i(c.norms);
  p.tensor_duplicated = i(c.duplicated);
  p.lm_head = i(c.lm_head);
  p.active = p.total() - i(c.skipped);
  return p;
}

}  // namespace

ParameterCount parameter_count(const ModelSpec& spec) {
  return to_parameter_count(model_counts(spec));
}

ParameterCount layer_parameter_count(const ModelSpec& spec, int64_t layer) {
  return to_parameter_count(layer_counts(spec, layer));
}

double parameter_total_estimate(const ModelSpec& spec) {
  return model_counts(spec).total();
}

double model_flops_per_token(const ModelSpec& spec, int64_t seq) {
  const double h = static_cast<double>(spec.hidden);
  const double s = static_cast<double>(seq);
  double matmul = 0;  // weight elements one token multiplies
  double core = 0;    // forward attention score and context FLOPs per token
  for (int64_t layer = 0; layer < spec.layers; ++layer) {
    matmul += attention_matmul(spec);
    core += attention_core_flops(spec, s);
    if (!spec.is_moe_layer(layer)) {
      matmul += static_cast<double>(spec.mlp_matrices()) * h * static_cast<double>(spec.ffn_hidden);
      continue;
    }
    const MoeSpec& m = *spec.moe;
    matmul += static_cast<double>(spec.mlp_matrices()) * h *
              (static_cast<double>(m.top_k * m.ffn_hidden) +
               static_cast<double>(m.shared_experts * m.shared_ffn_hidden));
  }
  matmul += h * static_cast<double>(spec.vocab);  // LM head (tied or not)
  return 3 * (2 * matmul + core);
}

double tensor_rank_dense_parameters(const ParameterCount& c, int64_t tp) {
  const auto whole = static_cast<double>(c.router + c.norms + c.tensor_duplicated);
  return static_cast<double>(c.attention - c.tensor_duplicated + c.mlp + c.shared_experts) /
             static_cast<double>(tp) +
         whole;
}

}  // namespace orrery
