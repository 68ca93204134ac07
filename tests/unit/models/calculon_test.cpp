// Calculon's model and execution JSON: the mapping of each key onto Orrery's model and plan, the
// warnings naming what Orrery does not model, and errors naming the file and the key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "core/diagnostics.h"
#include "models/calculon_execution.h"
#include "models/calculon_model.h"

namespace orrery {
namespace {

using nlohmann::json;

// Megatron's 126M shape as Calculon writes a model (its schema: six keys).
const json kModel = {{"hidden", 768},    {"feedforward", 3072}, {"seq_size", 2048},
                     {"attn_heads", 12}, {"attn_size", 64},     {"num_blocks", 12}};

// Every key of Calculon's execution schema, with the values Orrery maps plainly.
json execution() {
  return {{"num_procs", 64},
          {"tensor_par", 4},
          {"pipeline_par", 2},
          {"data_par", 8},
          {"tensor_par_net", 0},
          {"pipeline_par_net", 1},
          {"data_par_net", 1},
          {"batch_size", 256},
          {"microbatch_size", 2},
          {"datatype", "bfloat16"},
          {"fused_activation", false},
          {"attention_type", "multihead"},
          {"activation_recompute", "full"},
          {"pipeline_interleaving", 2},
          {"optimizer_sharding", true},
          {"tensor_par_comm_type", "rs_ag"},
          {"tensor_par_overlap", "none"},
          {"seq_par_ag_redo", false},
          {"data_par_overlap", false},
          {"weight_offload", false},
          {"activations_offload", false},
          {"optimizer_offload", false},
          {"training", true}};
}

CalculonExecution read(const json& j) {
  return parse_calculon_execution(j.dump(2), "exe.json");
}

std::string error_of(const json& j) {
  try {
    read(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The warnings that mention `text`.
int warnings_naming(const std::vector<std::string>& warnings, const std::string& text) {
  int n = 0;
  for (const std::string& w : warnings)
    n += w.find(text) != std::string::npos;
  return n;
}

TEST(CalculonModel, EachKeyMapsOntoTheModel) {
  const CalculonModel m = parse_calculon_model(kModel.dump(), "126M.json", "126M");
  EXPECT_EQ(m.spec.name, "126M");
  EXPECT_EQ(m.spec.hidden, 768);
  EXPECT_EQ(m.spec.ffn_hidden, 3072);
  EXPECT_EQ(m.spec.seq, 2048);
  EXPECT_EQ(m.spec.heads, 12);
  EXPECT_EQ(m.spec.kv_heads, 12);
  EXPECT_EQ(m.spec.head_dim, 64);
  EXPECT_EQ(m.spec.layers, 12);
  // Calculon's block: a GELU MLP of two matrices, LayerNorm, biases, learned positions.
  EXPECT_EQ(m.spec.activation, Activation::Gelu);
  EXPECT_EQ(m.spec.norm, Norm::LayerNorm);
  EXPECT_EQ(m.spec.position, Position::Learned);
  EXPECT_TRUE(m.spec.bias);
}

TEST(CalculonModel, VocabularyDefaultIsWarnedOnceByName) {
  // No vocabulary in Calculon's schema / 51200 rows (its own embedding count), said once, because
  // a default taken for a missing field is a warning.
  const CalculonModel m = parse_calculon_model(kModel.dump(), "126M.json", "126M");
  EXPECT_EQ(m.spec.vocab, 51200);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("vocab taken as 51200"), std::string::npos) << m.warnings[0];
}

TEST(CalculonModel, UnknownKeyIsWarnedByName) {
  json j = kModel;
  j["vocab_size"] = 50257;
  const CalculonModel m = parse_calculon_model(j.dump(), "m.json", "m");
  EXPECT_EQ(warnings_naming(m.warnings, "'vocab_size'"), 1);
}

TEST(CalculonModel, MissingOrMalformedKeysNameFileAndKey) {
  json missing = kModel;
  missing.erase("num_blocks");
  try {
    parse_calculon_model(missing.dump(), "m.json", "m");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "m.json:1: expected the key 'num_blocks' in Calculon's model JSON");
  }
  json text = kModel;
  text["hidden"] = "768";
  // dump(2) puts "hidden" on line 5 (keys sorted: attn_heads, attn_size, feedforward, hidden).
  try {
    parse_calculon_model(text.dump(2), "m.json", "m");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "m.json:5: 'hidden': expected an integer from 1 to 1073741824, found "
                 "\"768\"");
  }
  EXPECT_THROW(parse_calculon_model("{\"hidden\": ", "m.json", "m"), InputError);
}

TEST(CalculonExecution, EachKeyMapsOntoThePlan) {
  const CalculonExecution e = read(execution());
  EXPECT_EQ(e.num_procs, 64);
  EXPECT_EQ(e.plan.tp, 4);
  EXPECT_EQ(e.plan.pp, 2);
  EXPECT_EQ(e.plan.dp, 8);
  EXPECT_EQ(e.plan.vpp, 2);
  EXPECT_EQ(e.plan.micro_batch, 2);
  EXPECT_EQ(e.global_batch, 256);
  // 256 sequences over 8 replicas of micro-batches of 2: 256 / (8 x 2) = 16 micro-batches.
  EXPECT_EQ(e.plan.micro_batches, 16);
  EXPECT_EQ(e.plan.dtype, DType::BF16);
  EXPECT_EQ(e.plan.recompute, RecomputeMode::Full);
  EXPECT_TRUE(e.plan.distributed_optimizer);
  EXPECT_TRUE(e.plan.sequence_parallel);  // rs_ag: Megatron's sequence parallelism
  EXPECT_FALSE(e.multi_query);
  EXPECT_FALSE(e.overlap);
  // Every key asks for something Orrery models: nothing to say.
  EXPECT_TRUE(e.warnings.empty()) << e.warnings.front();
}

TEST(CalculonExecution, ChoicesMapToOrrerysNames) {
  json j = execution();
  j["activation_recompute"] = "attn_only";
  j["datatype"] = "float16";
  j["tensor_par_comm_type"] = "ar";
  j["optimizer_sharding"] = false;
  const CalculonExecution e = read(j);
  EXPECT_EQ(e.plan.recompute, RecomputeMode::Selective);
  EXPECT_EQ(e.plan.dtype, DType::FP16);
  EXPECT_FALSE(e.plan.sequence_parallel);
  EXPECT_FALSE(e.plan.distributed_optimizer);
  j["activation_recompute"] = "none";
  j["datatype"] = "float8";
  EXPECT_EQ(read(j).plan.recompute, RecomputeMode::None);
  EXPECT_EQ(read(j).plan.dtype, DType::FP8);
}

TEST(CalculonExecution, MultiQueryIsOneKeyValueHead) {
  json j = execution();
  j["attention_type"] = "multiquery";
  j["tensor_par"] = 1;
  j["data_par"] = 32;
  EXPECT_TRUE(read(j).multi_query);
}

TEST(CalculonExecution, UnmodelledRequestsAreWarnedByName) {
  // Offloads, fused activation, TP overlap, AG redo and TP on a scale-out network / one warning
  // each naming the key, because Orrery does not model them and must not drop them silently.
  json j = execution();
  for (const char* key : {"weight_offload", "activations_offload", "optimizer_offload",
                          "fused_activation", "seq_par_ag_redo"})
    j[key] = true;
  j["activation_recompute"] = "attn_only";  // seq_par_ag_redo is Calculon's only without full
  j["tensor_par_overlap"] = "ring";
  j["tensor_par_net"] = 1;
  j["tensor_par_comm_type"] = "p2p_rs_ag";
  j["flash"] = true;
  const CalculonExecution e = read(j);
  for (const char* key : {"'weight_offload'", "'activations_offload'", "'optimizer_offload'",
                          "'fused_activation'", "'seq_par_ag_redo'", "'tensor_par_overlap'",
                          "'tensor_par_net'", "'tensor_par_comm_type'", "'flash'"})
    EXPECT_EQ(warnings_naming(e.warnings, key), 1) << key;
  EXPECT_EQ(e.warnings.size(), 9u);
}

TEST(CalculonExecution, DataParallelOverlapWithTensorParallelismIsQualified) {
  // data_par_overlap true with TP 4 / overlap on, with a warning, because Orrery's overlap also
  // hides each input-gradient collective behind its weight gradient, which Calculon's does not.
  json j = execution();
  j["data_par_overlap"] = true;
  const CalculonExecution e = read(j);
  EXPECT_TRUE(e.overlap);
  EXPECT_EQ(warnings_naming(e.warnings, "'data_par_overlap'"), 1);
}

TEST(CalculonExecution, ImpossibleExecutionsNameFileAndKey) {
  const auto with = [](const char* key, const json& value) {
    json j = execution();
    j[key] = value;
    return error_of(j);
  };
  EXPECT_NE(with("num_procs", 32)
                .find("'num_procs': expected tensor_par x pipeline_par x "
                      "data_par = 64, found 32"),
            std::string::npos);
  EXPECT_NE(with("batch_size", 100)
                .find("'batch_size': expected a multiple of data_par x "
                      "microbatch_size (16), found 100"),
            std::string::npos);
  EXPECT_NE(with("training", false).find("'training': expected true"), std::string::npos);
  EXPECT_NE(with("datatype", "float32")
                .find("'datatype': expected one of bfloat16, float16, "
                      "float8, found \"float32\""),
            std::string::npos);
  EXPECT_NE(with("tensor_par", 0).find("'tensor_par': expected an integer from 1"),
            std::string::npos);
  // Megatron-LM divides the key-value heads over tensor parallelism: one head cannot be split.
  EXPECT_NE(with("attention_type", "multiquery")
                .find("'attention_type': multiquery (one "
                      "key-value head) needs tensor_par 1"),
            std::string::npos);
  json no_batch = execution();
  no_batch.erase("batch_size");
  EXPECT_EQ(error_of(no_batch),
            "exe.json:1: expected the key 'batch_size' in Calculon's execution JSON");
  json flat = execution();
  flat["pipeline_par"] = 1;
  flat["data_par"] = 16;
  EXPECT_NE(error_of(flat).find("'pipeline_interleaving': expected 1 with pipeline_par 1"),
            std::string::npos);
  // Every message starts with the file and the key's line.
  EXPECT_EQ(with("training", false).rfind("exe.json:", 0), 0u);
}

}  // namespace
}  // namespace orrery
