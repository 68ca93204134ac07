// Calculon's model description (its "application" JSON: hidden, feedforward, seq_size,
// attn_heads, attn_size, num_blocks) read as a ModelSpec. Calculon models a GPT-style block
// (GELU MLP of two matrices, LayerNorm, biases, learned positions), which are Orrery's defaults;
// it has no vocabulary, so the embedding takes kCalculonVocab rows, with a warning.
// Widths are in elements, seq_size in tokens (docs/calculon.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace orrery {

// The embedding rows Calculon itself counts in its parameter total (51200, Megatron's padded GPT-2
// vocabulary), taken when a Calculon model gives none.
constexpr int64_t kCalculonVocab = 51200;

struct CalculonModel {
  ModelSpec spec;
  std::vector<std::string> warnings;  // defaults taken and keys with no counterpart
};

// Parses the JSON text; throws InputError naming `source`, the key and what was expected.
// `name` names the model (the file's stem).
CalculonModel parse_calculon_model(const std::string& text, const std::string& source,
                                   const std::string& name);

}  // namespace orrery
