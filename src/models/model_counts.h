// Parameter counts (elements) and model FLOPs per token of a ModelSpec. The formulas and their
// derivation are in docs/models.md.
#pragma once

#include <cstdint>

#include "models/model_spec.h"

namespace orrery {

// Parameters by part, in elements. Biases are counted with their layer.
struct ParameterCount {
  int64_t embedding = 0;       // token embedding, vocab x hidden
  int64_t position = 0;        // learned position table, seq x hidden (0 with RoPE)
  int64_t attention = 0;       // query/key/value and output projections (MLA: its low-rank
                               // projections and their norms)
  int64_t mlp = 0;             // the MLPs of dense layers
  int64_t routed_experts = 0;  // every routed expert of every MoE layer
  int64_t shared_experts = 0;  // the shared experts of every MoE layer
  int64_t router = 0;          // hidden x experts per MoE layer (no bias)
  int64_t norms = 0;           // two per layer and the final norm
  // Of `attention`, what every tensor-parallel rank holds whole (Megatron-core builds them
  // "duplicated"): MLA's down-projections and the norms of their outputs; 0 for MHA and GQA.
  int64_t tensor_duplicated = 0;
  int64_t lm_head = 0;  // hidden x vocab; 0 when tied to the embedding

  // Parameters one token goes through: all but the routed experts it is not sent to, the input
  // embedding included (as Mistral counts Mixtral 8x7B's 12.9B active parameters).
  int64_t active = 0;

  int64_t total() const {
    return embedding + position + attention + mlp + routed_experts + shared_experts + router +
           norms + lm_head;
  }
};

ParameterCount parameter_count(const ModelSpec& spec);

// The parameters of `layer_count` (one layer's) that one rank of a tensor group of `tp` holds,
// routed experts left out: the tensor-sharded projections and MLPs over tp, plus what every rank
// holds whole (norms, router, tensor_duplicated).
double tensor_rank_dense_parameters(const ParameterCount& layer_count, int64_t tp);

// One transformer layer's parameters (0-based `layer`); embedding, position, lm_head and the final
// norm are 0 here.
ParameterCount layer_parameter_count(const ModelSpec& spec, int64_t layer);

// parameter_count(spec).total() computed in floating point, defined for any shape, so that a
// reader can refuse shapes too large for 64-bit counts.
double parameter_total_estimate(const ModelSpec& spec);

// Model FLOPs of one training step (forward and backward, 3x the forward) per token at sequence
// length `seq`: 2 FLOPs per multiply-add of every weight matrix a token goes through (the LM head
// included, the router not, as Megatron counts), plus attention scores and context over the full
// seq x seq matrix (no causal saving, as Megatron's papers and NeMo 24.07's counts do).
double model_flops_per_token(const ModelSpec& spec, int64_t seq);

}  // namespace orrery
