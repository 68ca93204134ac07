// Model files: defaults, each kind of error with its exact one-line message, and the presets.
#include "models/model_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/diagnostics.h"
#include "models/model_counts.h"
#include "models/model_presets.h"

namespace orrery {
namespace {

// Six lines: name 1, layers 2, hidden 3, heads 4, vocab 5, seq 6; tests append from line 7.
constexpr const char* kBase = "name: tiny\nlayers: 2\nhidden: 12\nheads: 3\nvocab: 100\nseq: 16\n";

std::string error_of(const std::string& yaml) {
  try {
    parse_model_yaml(yaml, "m.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// kBase with line `line` (1-based) replaced by `text`.
std::string with_line(int line, const std::string& text) {
  std::string out;
  int n = 0;
  for (const char* p = kBase; *p;) {
    const char* end = p;
    while (*end != '\n')
      ++end;
    out += ++n == line ? text : std::string(p, end);
    out += '\n';
    p = end + 1;
  }
  return out;
}

TEST(ModelFile, MinimalFileGetsMegatronGptDefaults) {
  const ModelSpec m = parse_model_yaml(kBase, "m.yaml");
  EXPECT_EQ(m.name, "tiny");
  EXPECT_EQ(m.head_dim, 4);     // hidden / heads
  EXPECT_EQ(m.kv_heads, 3);     // heads
  EXPECT_EQ(m.ffn_hidden, 48);  // 4 x hidden
  EXPECT_EQ(m.activation, Activation::Gelu);
  EXPECT_EQ(m.norm, Norm::LayerNorm);
  EXPECT_EQ(m.position, Position::Learned);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.bias);
  EXPECT_EQ(m.attention, AttentionKind::Mha);
  EXPECT_FALSE(m.moe);
  EXPECT_EQ(m.mlp_matrices(), 2);
}

TEST(ModelFile, ReadsEveryKey) {
  const ModelSpec m = parse_model_yaml(
      std::string(kBase) +
          "kv_heads: 1\nhead_dim: 8\nffn_hidden: 40\nactivation: swiglu\nnorm: rmsnorm\n"
          "position: rope\ntied_embeddings: false\nbias: false\nsource: a paper\n"
          "aliases: [small]\nattention: {kind: gqa}\n"
          "moe: {experts: 8, top_k: 2, ffn_hidden: 10, shared_experts: 2, shared_ffn_hidden: 6, "
          "every: 2, first_dense_layers: 1, capacity_factor: 1.25}\n",
      "m.yaml");
  EXPECT_EQ(m.kv_heads, 1);
  EXPECT_EQ(m.head_dim, 8);
  EXPECT_EQ(m.ffn_hidden, 40);
  EXPECT_EQ(m.mlp_matrices(), 3);
  EXPECT_EQ(m.norm, Norm::RmsNorm);
  EXPECT_EQ(m.position, Position::Rope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.bias);
  EXPECT_EQ(m.source, "a paper");
  EXPECT_EQ(m.aliases, std::vector<std::string>{"small"});
  EXPECT_EQ(m.attention, AttentionKind::Gqa);
  ASSERT_TRUE(m.moe);
  EXPECT_EQ(m.moe->shared_experts, 2);
  EXPECT_EQ(m.moe->shared_ffn_hidden, 6);
  EXPECT_EQ(m.moe->capacity_factor, 1.25);
  // Layer 0 is dense (first_dense_layers); layer 1 is not a multiple of every = 2.
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_FALSE(m.is_moe_layer(1));
  EXPECT_EQ(m.moe_layer_count(), 0);
  // GQA without `attention:` is inferred from kv_heads; MoE widths default to the dense one.
  const ModelSpec g =
      parse_model_yaml(std::string(kBase) + "kv_heads: 1\nmoe: {experts: 4, top_k: 1}\n", "m.yaml");
  EXPECT_EQ(g.attention, AttentionKind::Gqa);
  EXPECT_EQ(g.moe->ffn_hidden, 48);
  EXPECT_EQ(g.moe_layer_count(), 2);
}

TEST(ModelFile, EachErrorIsOneLineAtItsKey) {
  const std::string base = kBase;
  const std::string n = std::to_string(int64_t{1} << 30);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "m.yaml:1: expected a YAML mapping describing a model"},
      {"- 1\n", "m.yaml:1: expected a YAML mapping describing a model"},
      {base + "layer: 4\n",
       "m.yaml:7: unknown key 'layer' in the model; expected one of: activation, aliases, "
       "attention, bias, ffn_hidden, head_dim, heads, hidden, kv_heads, layers, moe, name, norm, "
       "position, seq, source, tied_embeddings, vocab"},
      {base + "hidden: 24\n", "m.yaml:7: key 'hidden' given twice (first at line 3)"},
      {with_line(5, "source: x"), "m.yaml:1: expected 'vocab' in the model"},
      {with_line(2, "layers: [2]"), "m.yaml:2: expected a single value"},
      {with_line(1, "name: {a: 1}"), "m.yaml:1: expected a single value"},
      {with_line(3, "hidden: 0"), "m.yaml:3: expected an integer from 1 to " + n + ", found '0'"},
      {with_line(2, "layers: 10001"),
       "m.yaml:2: expected an integer from 1 to 10000, found '10001'"},
      {with_line(6, "seq: -4"), "m.yaml:6: expected an integer from 1 to " + n + ", found '-4'"},
      {with_line(5, "vocab: many"),
       "m.yaml:5: expected an integer from 1 to " + n + ", found 'many'"},
      {with_line(5, "vocab: 1.5"),
       "m.yaml:5: expected an integer from 1 to " + n + ", found '1.5'"},
      {with_line(4, "heads: 5"),
       "m.yaml:4: expected heads to divide hidden (12) when head_dim is not given, found 5"},
      {base + "kv_heads: 2\n", "m.yaml:7: expected kv_heads to divide heads (3), found 2"},
      {base + "activation: relu\n",
       "m.yaml:7: expected activation gelu, swiglu or squared-relu, found 'relu'"},
      {base + "norm: batchnorm\n",
       "m.yaml:7: expected norm layernorm or rmsnorm, found 'batchnorm'"},
      {base + "position: alibi\n", "m.yaml:7: expected position learned or rope, found 'alibi'"},
      {base + "tied_embeddings: yes\n", "m.yaml:7: expected true or false, found 'yes'"},
      {base + "aliases: small\n", "m.yaml:7: expected aliases as a list such as [gpt3]"},
      {base + "attention: mla\n", "m.yaml:7: expected attention to be a mapping of keys to values"},
      {base + "attention: {kind: sparse}\n",
       "m.yaml:7: expected attention kind mha, gqa or mla, found 'sparse'"},
      {base + "attention: {rope_dim: 2}\n", "m.yaml:7: expected 'kind' in attention"},
      {base + "attention: {kind: gqa, rope_dim: 2}\n",
       "m.yaml:7: 'rope_dim' applies only to kind mla"},
      {base + "kv_heads: 1\nattention: {kind: mha}\n",
       "m.yaml:8: attention kind mha needs kv_heads equal to heads (3), found 1"},
      {base + "attention: {kind: mla, rope_dim: 2}\n",
       "m.yaml:7: expected 'kv_lora_rank' in attention"},
      {base + "moe: 8\n", "m.yaml:7: expected moe to be a mapping of keys to values"},
      {base + "moe: {experts: 4, top_k: 1, capacity: 1}\n",
       "m.yaml:7: unknown key 'capacity' in moe; expected one of: capacity_factor, every, experts, "
       "ffn_hidden, first_dense_layers, shared_experts, shared_ffn_hidden, top_k"},
      {base + "moe:\n  experts: 4\n  top_k: 5\n",
       "m.yaml:9: expected top_k of at most experts (4), found 5"},
      {base + "moe: {experts: 4}\n", "m.yaml:7: expected 'top_k' in moe"},
      {base + "moe: {experts: 0, top_k: 1}\n",
       "m.yaml:7: expected an integer from 1 to " + n + ", found '0'"},
      {base + "moe: {experts: 4, top_k: 1, first_dense_layers: 2}\n",
       "m.yaml:7: expected first_dense_layers below layers (2), found 2"},
      {base + "moe: {experts: 4, top_k: 1, every: 3}\n",
       "m.yaml:7: expected every of at most layers (2), found 3"},
      {base + "moe: {experts: 4, top_k: 1, shared_ffn_hidden: 8}\n",
       "m.yaml:7: 'shared_ffn_hidden' needs shared_experts"},
      {base + "moe: {experts: 4, top_k: 1, capacity_factor: 0}\n",
       "m.yaml:7: expected a number above 0, found '0'"},
      {"name: huge\nlayers: 1000\nhidden: 1048576\nheads: 1024\nvocab: 100\nseq: 16\n",
       "m.yaml:1: expected a model of at most 1e+15 parameters; this shape has 1.32e+16"},
  };
  for (const auto& [yaml, message] : cases) {
    const std::string error = error_of(yaml);
    EXPECT_EQ(error, message) << yaml;
    EXPECT_EQ(error.find('\n'), std::string::npos) << yaml;
  }
  const std::string syntax = error_of("name: [tiny\n");
  EXPECT_EQ(syntax.rfind("m.yaml:", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("expected valid YAML: "), std::string::npos) << syntax;
  EXPECT_EQ(syntax.find('\n'), std::string::npos) << syntax;
  // A head width that is not hidden / heads is fine when given.
  EXPECT_EQ(parse_model_yaml(with_line(4, "heads: 5") + "head_dim: 4\n", "m.yaml").head_dim, 4);
}

TEST(ModelPresets, EveryPresetLoadsWithItsSource) {
  const std::vector<std::string> names = model_preset_names();
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "deepseek-v3",  "gpt3-1.3b",     "gpt3-125m",     "gpt3-13b",     "gpt3-175b",
                "gpt3-2.7b",    "gpt3-20b",      "gpt3-350m",     "gpt3-5b",      "gpt3-6.7b",
                "gpt3-760m",    "llama2-13b",    "llama2-70b",    "llama2-7b",    "llama3-70b",
                "llama3-8b",    "llama3.1-405b", "llama3.1-70b",  "llama3.1-8b",  "megatron-1t",
                "megatron-22b", "megatron-530b", "mixtral-8x22b", "mixtral-8x7b", "nemotron3-22b",
                "nemotron3-8b", "nemotron4-15b", "nemotron4-340b"}));
  for (const std::string& name : names) {
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.name, name);
    EXPECT_FALSE(m.source.empty()) << name;
    EXPECT_TRUE(std::all_of(name.begin(), name.end(), [](char c) {
      return std::islower(static_cast<unsigned char>(c)) ||
             std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '.';
    })) << name;
    EXPECT_GT(parameter_count(m).total(), 0) << name;
    EXPECT_GT(model_flops_per_token(m, m.seq), 0) << name;
  }
}

TEST(ModelPresets, CalibrationModelsArePresent) {
  // tests/data/megatron_selene_table5.csv: 22B, 175B, 530B, 1T (hidden, heads, layers as listed
  // there).
  for (const auto& [name, hidden, heads, layers] :
       {std::tuple{"megatron-22b", 6144, 64, 48}, std::tuple{"gpt3-175b", 12288, 96, 96},
        std::tuple{"megatron-530b", 20480, 128, 105}, std::tuple{"megatron-1t", 25600, 160, 128}}) {
    const ModelSpec m = load_model(name);
    EXPECT_EQ(m.hidden, hidden) << name;
    EXPECT_EQ(m.heads, heads) << name;
    EXPECT_EQ(m.layers, layers) << name;
    EXPECT_EQ(m.vocab, 51200) << name;
    EXPECT_EQ(m.seq, 2048) << name;
  }
  // tests/data/nemo_h100_fp8.csv, by the table's names (aliases where ours differ).
  for (const char* name :
       {"gpt3-5b", "gpt3-20b", "gpt3-175b", "llama2-7b", "llama2-13b", "llama2-70b", "nemotron-8b",
        "nemotron-22b", "nemotron-340b", "llama3-8b", "llama3-70b"})
    EXPECT_NO_THROW(load_model(name)) << name;
  EXPECT_EQ(load_model("nemotron-8b").name, "nemotron3-8b");
  EXPECT_EQ(load_model("nemotron-340b").name, "nemotron4-340b");
  EXPECT_EQ(load_model("mt-nlg-530b").name, "megatron-530b");
}

TEST(ModelPresets, PublishedShapes) {
  const ModelSpec llama = load_model("llama3.1-405b");
  EXPECT_EQ(llama.kv_heads, 8);
  EXPECT_EQ(llama.head_dim, 128);
  EXPECT_EQ(llama.attention, AttentionKind::Gqa);
  EXPECT_FALSE(llama.tied_embeddings);
  EXPECT_FALSE(llama.bias);
  const ModelSpec ds = load_model("deepseek-v3");
  EXPECT_EQ(ds.attention, AttentionKind::Mla);
  EXPECT_EQ(ds.mla.q_lora_rank, 1536);
  EXPECT_EQ(ds.mla.kv_lora_rank, 512);
  EXPECT_EQ(ds.moe_layer_count(), 58);
  EXPECT_EQ(ds.moe->shared_ffn_hidden, 2048);
  EXPECT_FALSE(ds.moe->capacity_factor);  // dropless
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  EXPECT_EQ(mixtral.moe_layer_count(), 32);
  EXPECT_EQ(mixtral.moe->shared_experts, 0);
  EXPECT_EQ(load_model("gpt3-1.3b").heads, 16);
  EXPECT_EQ(load_model("gpt3-13b").hidden, 5120);
}

TEST(ModelPresets, LoadsFilesAndNamesThePresetsOtherwise) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "orrery_model_file_test.yaml";
  std::ofstream(path) << kBase;
  EXPECT_EQ(load_model(path.string()).name, "tiny");
  std::filesystem::remove(path);
  try {
    load_model("gpt-9");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("model 'gpt-9': expected a model preset (deepseek-v3, gpt3-1.3b, ", 0),
              0u)
        << message;
    EXPECT_NE(message.find("), a YAML file or Calculon's model JSON; no such file"),
              std::string::npos)
        << message;
  }
}

TEST(ModelFile, AKeyThatIsNoNameIsAnInputError) {
  // A model file holding "? :" (a key that is itself a mapping to yaml-cpp; found by
  // fuzz_model_yaml) / an error at its line, not yaml-cpp's conversion exception, because every
  // malformed input is exit status 2.
  EXPECT_EQ(error_of("? :\n"), "m.yaml:1: expected a key name, found a mapping");
}

}  // namespace
}  // namespace orrery
