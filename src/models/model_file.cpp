#include "models/model_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/diagnostics.h"
#include "core/text.h"
#include "core/yaml_fields.h"
#include "models/calculon_model.h"
#include "models/model_counts.h"
#include "models/model_presets.h"

namespace orrery {
namespace {

// Every count and width is at most 2^30, so that products of two fit in 64 bits; the model as a
// whole is held to 10^15 parameters, so that every count is exact in a double.
constexpr int64_t kMaxSize = int64_t{1} << 30;
// Layers are generated one by one (several kilobytes each in a workload): 10,000 is some fifty
// times the deepest published transformer and keeps a workload under about 100 MB.
constexpr int64_t kMaxLayers = 10'000;
constexpr double kMaxParameters = 1e15;

class ModelReader {
 public:
  explicit ModelReader(const std::string& source) : r_(source) {}

  ModelSpec read(std::string_view text) const;

 private:
  // An integer in [minimum, maximum].
  int64_t size(const YAML::Node& node, int64_t minimum = 1, int64_t maximum = kMaxSize) const {
    const std::string text = r_.scalar(node);
    const auto v = parse_int64(trim(text));
    if (v && *v >= minimum && *v <= maximum) return *v;
    r_.fail(node, "expected an integer from " + std::to_string(minimum) + " to " +
                      std::to_string(maximum) + ", found '" + text + "'");
  }
  bool boolean(const YAML::Node& node) const {
    const std::string text = r_.scalar(node);
    if (text == "true") return true;
    if (text == "false") return false;
    r_.fail(node, "expected true or false, found '" + text + "'");
  }
  // One of `names` (in the order of the enum's values), e.g. activation: swiglu.
  template <typename Enum, size_t N>
  Enum choice(const YAML::Node& node, const char* key, const char* const (&names)[N]) const {
    const std::string text = r_.scalar(node);
    std::string list;
    for (size_t i = 0; i < N; ++i) {
      if (text == names[i]) return static_cast<Enum>(i);
      list += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i];
    }
    r_.fail(node, std::string("expected ") + key + " " + list + ", found '" + text + "'");
  }

  void read_attention(const YAML::Node& node, ModelSpec& m) const;
  MoeSpec read_moe(const YAML::Node& node, const ModelSpec& m) const;

  YamlFields r_;
};

void ModelReader::read_attention(const YAML::Node& node, ModelSpec& m) const {
  r_.only_keys(node, {"kind", "q_lora_rank", "kv_lora_rank", "rope_dim", "v_head_dim"},
               "attention");
  const YAML::Node kind = r_.required(node, "kind", "attention");
  static const char* const kKinds[] = {"mha", "gqa", "mla"};
  m.attention = choice<AttentionKind>(kind, "attention kind", kKinds);
  if (m.attention != AttentionKind::Mla) {
    for (const char* key : {"q_lora_rank", "kv_lora_rank", "rope_dim", "v_head_dim"})
      if (node[key]) r_.fail(node[key], std::string("'") + key + "' applies only to kind mla");
  }
  switch (m.attention) {
    case AttentionKind::Mha:
      if (m.kv_heads != m.heads)
        r_.fail(kind, "attention kind mha needs kv_heads equal to heads (" +
                          std::to_string(m.heads) + "), found " + std::to_string(m.kv_heads));
      return;
    case AttentionKind::Gqa:
      return;
    case AttentionKind::Mla:
      if (m.kv_heads != m.heads)
        r_.fail(kind,
                "attention kind mla has one key-value head per head: kv_heads must be "
                "heads (" +
                    std::to_string(m.heads) + "), found " + std::to_string(m.kv_heads));
      if (node["q_lora_rank"]) m.mla.q_lora_rank = size(node["q_lora_rank"], 0);
      m.mla.kv_lora_rank = size(r_.required(node, "kv_lora_rank", "attention"));
      m.mla.rope_dim = size(r_.required(node, "rope_dim", "attention"));
      m.mla.v_head_dim = node["v_head_dim"] ? size(node["v_head_dim"]) : m.head_dim;
      return;
  }
}

MoeSpec ModelReader::read_moe(const YAML::Node& node, const ModelSpec& m) const {
  r_.only_keys(node,
               {"experts", "top_k", "ffn_hidden", "shared_experts", "shared_ffn_hidden", "every",
                "first_dense_layers", "capacity_factor"},
               "moe");
  MoeSpec moe;
  moe.experts = size(r_.required(node, "experts", "moe"));
  const YAML::Node top_k = r_.required(node, "top_k", "moe");
  moe.top_k = size(top_k);
  if (moe.top_k > moe.experts)
    r_.fail(top_k, "expected top_k of at most experts (" + std::to_string(moe.experts) +
                       "), found " + std::to_string(moe.top_k));
  moe.ffn_hidden = node["ffn_hidden"] ? size(node["ffn_hidden"]) : m.ffn_hidden;
  if (node["shared_experts"]) moe.shared_experts = size(node["shared_experts"], 0);
  if (const YAML::Node shared = node["shared_ffn_hidden"]) {
    if (moe.shared_experts == 0) r_.fail(shared, "'shared_ffn_hidden' needs shared_experts");
    moe.shared_ffn_hidden = size(shared);
  } else {
    moe.shared_ffn_hidden = moe.shared_experts > 0 ? moe.ffn_hidden : 0;
  }
  if (const YAML::Node every = node["every"]) {
    moe.every = size(every);
    if (moe.every > m.layers)
      r_.fail(every, "expected every of at most layers (" + std::to_string(m.layers) + "), found " +
                         std::to_string(moe.every));
  }
  if (const YAML::Node first = node["first_dense_layers"]) {
    moe.first_dense_layers = size(first, 0);
    if (moe.first_dense_layers >= m.layers)
      r_.fail(first, "expected first_dense_layers below layers (" + std::to_string(m.layers) +
                         "), found " + std::to_string(moe.first_dense_layers));
  }
  if (const YAML::Node cf = node["capacity_factor"])
    moe.capacity_factor = r_.number(cf, 0, true, std::numeric_limits<double>::infinity());
  return moe;
}

ModelSpec ModelReader::read(std::string_view text) const {
  const YAML::Node root = r_.load(text);
  if (!root || !root.IsMap())
    throw InputError({r_.source(), 1}, "expected a YAML mapping describing a model");
  r_.only_keys(root,
               {"name", "aliases", "source", "layers", "hidden", "heads", "kv_heads", "head_dim",
                "ffn_hidden", "vocab", "seq", "activation", "norm", "position", "tied_embeddings",
                "bias", "attention", "moe"},
               "the model");
  const char* const where = "the model";
  ModelSpec m;
  m.name = r_.scalar(r_.required(root, "name", where));
  if (const YAML::Node aliases = root["aliases"]) {
    if (!aliases.IsSequence()) r_.fail(aliases, "expected aliases as a list such as [gpt3]");
    for (const auto& alias : aliases)
      m.aliases.push_back(r_.scalar(alias));
  }
  if (root["source"]) m.source = r_.scalar(root["source"]);

  m.layers = size(r_.required(root, "layers", where), 1, kMaxLayers);
  m.hidden = size(r_.required(root, "hidden", where));
  const YAML::Node heads = r_.required(root, "heads", where);
  m.heads = size(heads);
  if (const YAML::Node head_dim = root["head_dim"]) {
    m.head_dim = size(head_dim);
  } else if (m.hidden % m.heads != 0) {
    r_.fail(heads, "expected heads to divide hidden (" + std::to_string(m.hidden) +
                       ") when head_dim is not given, found " + std::to_string(m.heads));
  } else {
    m.head_dim = m.hidden / m.heads;
  }
  m.kv_heads = m.heads;
  if (const YAML::Node kv_heads = root["kv_heads"]) {
    m.kv_heads = size(kv_heads);
    if (m.heads % m.kv_heads != 0)
      r_.fail(kv_heads, "expected kv_heads to divide heads (" + std::to_string(m.heads) +
                            "), found " + std::to_string(m.kv_heads));
  }
  m.ffn_hidden = root["ffn_hidden"] ? size(root["ffn_hidden"]) : 4 * m.hidden;
  m.vocab = size(r_.required(root, "vocab", where));
  m.seq = size(r_.required(root, "seq", where));

  static const char* const kActivations[] = {"gelu", "swiglu", "squared-relu"};
  static const char* const kNorms[] = {"layernorm", "rmsnorm"};
  static const char* const kPositions[] = {"learned", "rope"};
  if (root["activation"])
    m.activation = choice<Activation>(root["activation"], "activation", kActivations);
  if (root["norm"]) m.norm = choice<Norm>(root["norm"], "norm", kNorms);
  if (root["position"]) m.position = choice<Position>(root["position"], "position", kPositions);
  if (root["tied_embeddings"]) m.tied_embeddings = boolean(root["tied_embeddings"]);
  if (root["bias"]) m.bias = boolean(root["bias"]);

  m.attention = m.kv_heads == m.heads ? AttentionKind::Mha : AttentionKind::Gqa;
  if (const YAML::Node attention = root["attention"]) read_attention(attention, m);
  if (const YAML::Node moe = root["moe"]) m.moe = read_moe(moe, m);

  if (const double total = parameter_total_estimate(m); !(total <= kMaxParameters)) {
    char count[32];
    std::snprintf(count, sizeof count, "%.3g", total);
    r_.fail(root,
            std::string("expected a model of at most 1e+15 parameters; this shape has ") + count);
  }
  return m;
}

}  // namespace

ModelSpec parse_model_yaml(std::string_view text, const std::string& source) {
  return ModelReader(source).read(text);
}

ModelSpec load_model(const std::string& name_or_path, std::vector<std::string>* warnings) {
  if (const auto preset = model_preset_text(name_or_path))
    return parse_model_yaml(*preset, "preset " + name_or_path);
  if (!std::filesystem::is_regular_file(name_or_path)) {
    std::string names;
    for (const auto& n : model_preset_names())
      names += (names.empty() ? "" : ", ") + n;
    throw InputError("model '" + name_or_path + "': expected a model preset (" + names +
                     "), a YAML file or Calculon's model JSON; no such file");
  }
  std::ifstream in(name_or_path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::filesystem::path path(name_or_path);
  if (path.extension() != ".json") return parse_model_yaml(buffer.str(), name_or_path);
  CalculonModel calculon = parse_calculon_model(buffer.str(), name_or_path, path.stem().string());
  if (warnings)
    warnings->insert(warnings->end(), calculon.warnings.begin(), calculon.warnings.end());
  return calculon.spec;
}

}  // namespace orrery
