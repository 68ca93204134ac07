#include "models/calculon_model.h"

#include <cstdio>

#include "core/json_fields.h"
#include "models/model_counts.h"

namespace orrery {
namespace {

// As model_file.cpp: widths and counts up to 2^30, so that products of two fit in 64 bits.
constexpr int64_t kMaxSize = int64_t{1} << 30;
constexpr double kMaxParameters = 1e15;

}  // namespace

CalculonModel parse_calculon_model(const std::string& text, const std::string& source,
                                   const std::string& name) {
  const JsonFields f(text, source, "Calculon's model JSON");
  const nlohmann::json root = f.load();
  CalculonModel out;
  ModelSpec& m = out.spec;
  m.name = name;
  m.source = "Calculon model " + source;
  m.hidden = f.integer(root, "hidden", 1, kMaxSize);
  m.ffn_hidden = f.integer(root, "feedforward", 1, kMaxSize);
  m.seq = f.integer(root, "seq_size", 1, kMaxSize);
  m.heads = f.integer(root, "attn_heads", 1, kMaxSize);
  m.kv_heads = m.heads;
  m.head_dim = f.integer(root, "attn_size", 1, kMaxSize);
  m.layers = f.integer(root, "num_blocks", 1, kMaxSize);
  m.vocab = kCalculonVocab;
  if (const double total = parameter_total_estimate(m); !(total <= kMaxParameters)) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", total);
    f.fail("num_blocks",
           std::string("expected a model of at most 1e+15 parameters; this shape has ") + count);
  }
  out.warnings.push_back(source + ": Calculon's model has no vocabulary; vocab taken as " +
                         std::to_string(kCalculonVocab) +
                         " (the embedding Calculon counts in its parameter total)");
  for (const auto& [key, value] : root.items())
    if (key != "hidden" && key != "feedforward" && key != "seq_size" && key != "attn_heads" &&
        key != "attn_size" && key != "num_blocks")
      out.warnings.push_back(source + ": Calculon model key '" + key +
                             "' has no counterpart in Orrery; ignored");
  return out;
}

}  // namespace orrery
