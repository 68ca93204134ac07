// The shape of a decoder-only transformer language model, dense or mixture-of-experts: what
// Orrery needs to count its parameters and FLOPs and, later, to generate its training workload.
// Sizes are counts (layers, heads, experts) or widths in elements (hidden, head_dim, ffn_hidden);
// `seq` is in tokens. Read from YAML (model_file.h; schema in docs/models.md) or a preset.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

enum class Activation {
  Gelu,         // 2 MLP matrices: h -> f -> h
  Swiglu,       // 3 MLP matrices: gate and up h -> f, down f -> h
  SquaredRelu,  // 2 MLP matrices (Nemotron)
};

enum class Norm { LayerNorm, RmsNorm };  // LayerNorm: weight and bias; RMSNorm: weight only

enum class Position { Learned, Rope };  // learned: a seq x hidden table; RoPE: no parameters

enum class AttentionKind {
  Mha,  // multi-head: kv_heads == heads
  Gqa,  // grouped-query: kv_heads divides heads
  Mla,  // multi-head latent attention (DeepSeek-V2/V3): low-rank query and key-value projections
};

// Multi-head latent attention's projection ranks. The query/key head width is head_dim (the part
// without position) + rope_dim (the decoupled RoPE part); values are v_head_dim wide.
struct MlaShape {
  int64_t q_lora_rank = 0;  // 0: queries projected from hidden directly
  int64_t kv_lora_rank = 0;
  int64_t rope_dim = 0;
  int64_t v_head_dim = 0;
};

// The mixture-of-experts part: which layers route, and how wide the experts are. Routing is
// assumed balanced (every expert gets tokens * top_k / experts); no token is dropped unless
// capacity_factor is given.
struct MoeSpec {
  int64_t experts = 0;            // routed experts per MoE layer
  int64_t top_k = 0;              // routed experts per token
  int64_t ffn_hidden = 0;         // each routed expert's MLP width
  int64_t shared_experts = 0;     // experts every token goes through
  int64_t shared_ffn_hidden = 0;  // each shared expert's MLP width
  // Layer i (from 0) is a MoE layer when i >= first_dense_layers and i % every == 0 (the rule of
  // Megatron's moe_layer_freq and DeepSeek's first_k_dense_replace).
  int64_t every = 1;
  int64_t first_dense_layers = 0;
  std::optional<double> capacity_factor;  // tokens an expert takes, relative to the balanced share
};

struct ModelSpec {
  std::string name;
  std::vector<std::string> aliases;  // other names a preset answers to
  std::string source;                // where the shape comes from (free text)

  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // = heads for MHA and MLA
  int64_t head_dim = 0;    // query/key/value head width (MLA: the query/key part without RoPE)
  int64_t ffn_hidden = 0;  // dense MLP width
  int64_t vocab = 0;       // embedding rows, padded as the trainer pads them
  int64_t seq = 0;         // pre-training sequence length in tokens (learned positions: table rows)

  Activation activation = Activation::Gelu;
  Norm norm = Norm::LayerNorm;
  Position position = Position::Learned;
  bool tied_embeddings = true;  // LM head shares the input embedding
  bool bias = true;             // linear layers carry biases (GPT-3, Megatron GPT; not Llama)

  AttentionKind attention = AttentionKind::Mha;
  MlaShape mla;  // only for AttentionKind::Mla
  std::optional<MoeSpec> moe;

  // Weight matrices in one MLP: 3 for SwiGLU, 2 otherwise (the xi of docs/models.md).
  int64_t mlp_matrices() const { return activation == Activation::Swiglu ? 3 : 2; }
  bool is_moe_layer(int64_t layer) const {
    return moe && layer >= moe->first_dense_layers && layer % moe->every == 0;
  }
  int64_t moe_layer_count() const;
};

// The YAML spelling of each choice ("gelu", "rmsnorm", "rope", "gqa", ...).
std::string_view to_string(Activation a);
std::string_view to_string(Norm n);
std::string_view to_string(Position p);
std::string_view to_string(AttentionKind k);

}  // namespace orrery
