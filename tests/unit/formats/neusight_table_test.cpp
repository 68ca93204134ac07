#include "formats/neusight_table.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/text.h"
#include "formats/workload_reader.h"

namespace orrery {
namespace {

const std::string kSeed002 = ORRERY_SOURCE_DIR "/examples/neusight/gpt2_large_block_b16_s1024.txt";

constexpr const char* kHeader =
    "name\tforward_compute_time\tforward_comm_type\tforward_comm_size\tbackward_compute_time\t"
    "backward_comm_type\tbackward_comm_size\tweight_grad_compute_time\tweight_grad_comm_type\t"
    "weight_grad_comm_size\tprocess_time\n";

std::string row(const std::string& name, const std::string& forward_ms,
                const std::string& backward_comm = "None", const std::string& elements = "0") {
  return name + "\t" + forward_ms + "\tNone\t0\t0.0\t" + backward_comm + "\t" + elements +
         "\t0.0\tNONE\t0\t0\n";
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Workload read(const std::string& text, Diagnostics& d, const ReaderOptions& o = {}) {
  return read_neusight_table("t.txt", text, o, d);
}

std::string error_of(const std::string& text) {
  Diagnostics d;
  try {
    read(text, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_warning(const Diagnostics& d, const std::string& fragment) {
  for (const Warning& w : d.warnings())
    if (w.to_string().find(fragment) != std::string::npos) return true;
  return false;
}

const Layer& named(const Workload& w, const std::string& name) {
  for (const Layer& l : w.program.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

TEST(NeusightTable, MillisecondsElementsAndGradientRows) {
  Diagnostics d;
  const Workload w = read(std::string(kHeader) + row("lm_head_grad", "0", "ALLREDUCE_ASYNC", "10") +
                              row("lm_head", "1.5") + row("softmax", "0.25"),
                          d);
  EXPECT_EQ(w.format, "neusight");
  EXPECT_FALSE(w.world_size_from_file);
  ASSERT_EQ(w.program.layers.size(), 3u);
  const Layer& grad = w.program.layers[0];
  ASSERT_TRUE(grad.weight_grad.comm);  // an asynchronous data-parallel all-reduce
  EXPECT_EQ(grad.weight_grad.comm->group, CommGroup::Data);
  EXPECT_EQ(grad.weight_grad.comm->kind, CollectiveKind::AllReduce);
  EXPECT_EQ(grad.weight_grad.comm->bytes, 40u);  // 10 fp32 elements
  EXPECT_EQ(grad.forward.compute, Time::zero());
  // 1.5 ms forward; no backward in the file: left 0, the workload says so, and lm_head (it has a
  // _grad row) owns parameters. The backward is estimated later (training/backward_estimate.h).
  const Layer& head = w.program.layers[1];
  EXPECT_EQ(head.forward.compute, Time::from_us(1500));
  EXPECT_EQ(head.input_grad.compute, Time::zero());
  EXPECT_EQ(head.weight_grad.compute, Time::zero());
  EXPECT_EQ(head.op, "lm_head");
  ASSERT_TRUE(w.forward_times_only);
  EXPECT_EQ(w.forward_times_only->parameter_layers, std::vector<size_t>{1});
  EXPECT_FALSE(has_warning(d, "backward"));
  EXPECT_TRUE(has_warning(d, "read as fp32 (4 B) elements"));
  // One pass; nothing iteration-level (process_time is 0).
  ASSERT_EQ(w.program.micro_batches.size(), 1u);
  EXPECT_EQ(w.program.micro_batches[0].size(), 3u);
  EXPECT_TRUE(w.program.after.empty());
  ASSERT_TRUE(w.model);
  EXPECT_EQ(w.model->parameters, 10);
  EXPECT_FALSE(w.model->forward_flop);
}

TEST(NeusightTable, CommDtypeChangesElementSize) {
  Diagnostics d;
  ReaderOptions o;
  o.comm_dtype = DType::BF16;
  const Workload w = read(std::string(kHeader) + row("x_grad", "0", "ALLREDUCE_ASYNC", "10") +
                              row("x", "1") + row("y", "1"),
                          d, o);
  EXPECT_EQ(w.program.layers[0].weight_grad.comm->bytes, 20u);
  EXPECT_FALSE(has_warning(d, "read as fp32"));
}

// The columns are found by their names, in any order.
TEST(NeusightTable, ColumnsAreReadByName) {
  const std::string header =
      "process_time\tname\tweight_grad_comm_size\tweight_grad_comm_type\t"
      "weight_grad_compute_time\tbackward_comm_size\tbackward_comm_type\t"
      "backward_compute_time\tforward_comm_size\tforward_comm_type\tforward_compute_time\n";
  ASSERT_TRUE(looks_like_neusight_table(header));
  EXPECT_EQ(detect_workload_format(header), WorkloadFormat::NeusightTable);
  Diagnostics d;
  const Workload w = read(header + "0\tfc_grad\t0\tNone\t0\t10\tALLREDUCE_ASYNC\t0\t0\tNone\t0\n" +
                              "0.5\tfc\t0\tNone\t0.25\t0\tNone\t3\t0\tNone\t1.5\n",
                          d);
  ASSERT_EQ(w.program.layers.size(), 3u);  // and the optimizer row
  EXPECT_EQ(w.program.layers[0].weight_grad.comm->bytes, 40u);
  const Layer& fc = w.program.layers[1];
  EXPECT_EQ(fc.forward.compute, Time::from_us(1500));
  EXPECT_EQ(fc.input_grad.compute, Time::from_us(3000));
  EXPECT_EQ(fc.weight_grad.compute, Time::from_us(250));
  EXPECT_EQ(w.program.layers[2].forward.compute, Time::from_us(500));
  EXPECT_FALSE(w.forward_times_only);
  EXPECT_EQ(error_of(header + "0\tfc\t0\tNone\t0\t0\tNone\t0\t0\tNone\t-1\n"),
            "t.txt:2: column 11 (forward_compute_time): expected a non-negative time in "
            "milliseconds (at most 3.6e6, an hour), found '-1'");
  // Every name once: a repeated column is no NeuSight header.
  std::string twice = kHeader;
  twice.replace(twice.find("process_time"), 12, "forward_comm_type");
  EXPECT_EQ(error_of(twice + row("a", "1")).rfind("t.txt:1: expected the NeuSight header", 0), 0u);
}

// Blocks are read from the module paths torch.fx writes, whatever the model: a Llama-style table
// (model.layers.K...) replicates like GPT-2's transformer.h.K.
TEST(NeusightTable, NumberedBlocksOfAnyModel) {
  const std::string table =
      std::string(kHeader) + row("model_embed_tokens_grad", "0", "ALLREDUCE_ASYNC", "8") +
      row("model_embed_tokens", "0.5") +
      row("model_layers_0_input_layernorm_grad", "0", "ALLREDUCE_ASYNC", "2") +
      row("model_layers_0_input_layernorm", "1") + row("mm_grad", "0", "ALLREDUCE_ASYNC", "4") +
      row("mm", "2") + row("silu", "0.25") + row("mul_1", "0.25") + row("add_3", "0.125") +
      row("model_norm_grad", "0", "ALLREDUCE_ASYNC", "2") + row("model_norm", "1") +
      row("lm_head", "4");
  Diagnostics d;
  const Workload one = read(table, d);
  EXPECT_EQ(one.program.layers.size(), 12u);
  ASSERT_TRUE(one.model);
  EXPECT_EQ(one.model->layers, 1);
  EXPECT_TRUE(has_warning(d, "the table lists 1 transformer block(s) (model_layers_K_ rows)"));
  EXPECT_EQ(named(one, "model_layers_0_input_layernorm").op, "input_layernorm");
  EXPECT_EQ(named(one, "model_norm").op, "norm");
  EXPECT_EQ(named(one, "mul_1").op, "mul");

  ReaderOptions o;
  o.layers = 3;
  Diagnostics d3;
  const Workload three = read(table, d3, o);
  // The block is from model_layers_0_input_layernorm_grad to add_3 (7 rows); model_norm ends it.
  ASSERT_EQ(three.program.layers.size(), 12u + 2 * 7);
  EXPECT_EQ(three.model->layers, 3);
  EXPECT_EQ(three.model->parameters, 8 + 3 * (2 + 4) + 2);
  EXPECT_EQ(three.program.layers[9].name, "model_layers_1_input_layernorm_grad");
  EXPECT_EQ(named(three, "model_layers_2_mm").forward.compute, Time::from_us(2000));
  EXPECT_EQ(named(three, "model_layers_2_mm").op, "mm");
  EXPECT_EQ(three.program.layers[16].name, "model_layers_2_input_layernorm_grad");
  EXPECT_EQ(three.program.layers[23].name, "model_norm_grad");
  // Each copy of a parameter row still owns parameters.
  ASSERT_TRUE(three.forward_times_only);
  std::vector<std::string> owners;
  for (const size_t i : three.forward_times_only->parameter_layers)
    owners.push_back(three.program.layers[i].name);
  EXPECT_EQ(owners, (std::vector<std::string>{
                        "model_embed_tokens", "model_layers_0_input_layernorm", "mm",
                        "model_layers_1_input_layernorm", "model_layers_1_mm",
                        "model_layers_2_input_layernorm", "model_layers_2_mm", "model_norm"}));
  // Numbers that only count calls of one function ("addmm_2") make no block.
  Diagnostics none;
  read(
      std::string(kHeader) + row("addmm_2_grad", "0", "ALLREDUCE_ASYNC", "4") + row("addmm_2", "1"),
      none, o);
  EXPECT_TRUE(has_warning(none, "no rows of numbered blocks"));
}

TEST(NeusightTable, GivenBackwardTimesAreKept) {
  Diagnostics d;
  const Workload w =
      read(std::string(kHeader) + "a\t1.0\tNone\t0\t2.5\tNone\t0\t0.5\tNone\t0\t0\n", d);
  EXPECT_EQ(w.program.layers[0].input_grad.compute, Time::from_us(2500));
  EXPECT_EQ(w.program.layers[0].weight_grad.compute, Time::from_us(500));
  EXPECT_FALSE(w.forward_times_only);
}

TEST(NeusightTable, MalformedInputNamesLineAndField) {
  EXPECT_EQ(error_of("name\tforward\n"),
            "t.txt:1: expected the NeuSight header: the 11 column names name, "
            "forward_compute_time, ..., process_time, separated by tabs");
  EXPECT_EQ(error_of(std::string(kHeader) + row("a", "1") + "b\t1\tNone\n"),
            "t.txt:3: expected 11 fields (name, forward_compute_time, forward_comm_type, "
            "forward_comm_size, backward_compute_time, backward_comm_type, backward_comm_size, "
            "weight_grad_compute_time, weight_grad_comm_type, weight_grad_comm_size, "
            "process_time), found 3");
  for (const char* bad : {"-1", "nan", "inf", "1e300", "3600001"})
    EXPECT_EQ(error_of(std::string(kHeader) + row("a", bad)),
              std::string("t.txt:2: column 2 (forward_compute_time): expected a non-negative time "
                          "in milliseconds (at most 3.6e6, an hour), found '") +
                  bad + "'");
  EXPECT_EQ(error_of(std::string(kHeader) + row("a", "1", "ALLREDUCE_ASYNC", "many")),
            "t.txt:2: column 7 (backward_comm_size): expected a number of elements, found "
            "'many'");
  EXPECT_EQ(error_of(kHeader), "t.txt:2: expected at least one operator row");
}

// Seed 002 (examples/neusight/gpt2_large_block_b16_s1024.txt): one GPT-2 Large block of 40 rows
// between a 7-row prologue and 4 rows of ln_f and lm_head.
TEST(NeusightSeed002, OneBlockAsListed) {
  const std::string text = file_text(kSeed002);
  Diagnostics d;
  const Workload w = read_workload_file(kSeed002, std::nullopt, d);
  EXPECT_EQ(w.format, "neusight");
  ASSERT_EQ(w.program.layers.size(), 51u);
  // Forward = the file's forward column, summed independently here: 187.54 ms (NOTES).
  double file_ms = 0;
  for (const TextLine& line : split_lines(text))
    if (line.number > 1 && !trim(line.text).empty())
      file_ms += *parse_double(split(line.text, '\t')[1]);
  Time forward;
  for (const Layer& l : w.program.layers)
    forward += l.forward.compute;
  EXPECT_NEAR(forward.milliseconds(), file_ms, 1e-6);
  EXPECT_NEAR(forward.milliseconds(), 187.54, 0.005);
  // Both spellings of "no communication" are accepted; each `_grad` row is an all-reduce.
  int grad_rows = 0, grads = 0;
  for (const TextLine& line : split_lines(text))
    grad_rows += split(line.text, '\t')[0].ends_with("_grad");
  for (const Layer& l : w.program.layers)
    grads += l.weight_grad.comm && l.weight_grad.comm->group == CommGroup::Data;
  EXPECT_EQ(grad_rows, 9);
  EXPECT_EQ(grads, grad_rows);
  EXPECT_EQ(named(w, "lm_head_grad").weight_grad.comm->bytes, 64'379'217u * 4);
  EXPECT_TRUE(has_warning(d, "does not say how many the model has"));
}

TEST(NeusightSeed002, ThirtySixBlocksAreGpt2Large) {
  Diagnostics d;
  ReaderOptions o;
  o.layers = 36;
  const Workload w = read_workload_file(kSeed002, std::nullopt, o, d);
  ASSERT_EQ(w.program.layers.size(), 51u + 35 * 40);
  // NOTES 2.4: 36 blocks give 774,080,337 gradient elements (GPT-2 Large's 774,030,080 + 50,257).
  ASSERT_TRUE(w.model);
  EXPECT_EQ(w.model->parameters, 774'080'337);
  EXPECT_EQ(w.model->layers, 36);
  // Forward: prologue + 36 blocks + ln_f and lm_head = 0.19 + 36 x 59.77 + 127.58 ms (NOTES).
  Time forward;
  for (const Layer& l : w.program.layers)
    forward += l.forward.compute;
  EXPECT_NEAR(forward.milliseconds(), 0.19 + 36 * 59.77 + 127.58, 0.2);
  EXPECT_EQ(named(w, "transformer_h_35_ln_1").forward.compute,
            named(w, "transformer_h_0_ln_1").forward.compute);
  EXPECT_EQ(named(w, "transformer_h_35_addmm_2").op, "addmm");
  // The block's rows stay before ln_f.
  EXPECT_EQ(w.program.layers[51 + 35 * 40 - 4].name, "transformer_ln_f_grad");
}

TEST(NeusightTable, FlagsOutsideTheirBoundsNameTheFlag) {
  const auto error_with = [](const ReaderOptions& o) {
    Diagnostics d;
    try {
      read(std::string(kHeader) + row("transformer_h_0_ln_1", "1"), d, o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  for (const int64_t layers : {int64_t{0}, int64_t{10'001}, int64_t{100'000'000'000}}) {
    ReaderOptions o;
    o.layers = layers;
    EXPECT_EQ(error_with(o), "--layers " + std::to_string(layers) +
                                 ": expected a number of transformer blocks from 1 to 10000");
  }
  ReaderOptions most;
  most.layers = 10'000;
  EXPECT_EQ(error_with(most), "(no error)");
  // Within every bound, but an hour per row over 10,000 blocks is more compute than an iteration
  // can hold: refused in one line at the row that passes the bound (a copy of line 2).
  Diagnostics d;
  try {
    read(std::string(kHeader) + row("transformer_h_0_ln_1", "3600000"), d, most);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("t.txt:2: expected at most 1e9 ms (11.6 days) of compute per iteration; "
                         "the rows up to this one hold ",
                         0),
              0u)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(NeusightSeed002, FewerLayersThanListedIsAnError) {
  Diagnostics d;
  ReaderOptions o;
  o.layers = 0;
  EXPECT_THROW(read_workload_file(kSeed002, std::nullopt, o, d), InputError);
}

TEST(WorkloadReader, DetectsNeusightTables) {
  EXPECT_EQ(detect_workload_format(std::string(kHeader) + row("a", "1")),
            WorkloadFormat::NeusightTable);
  EXPECT_EQ(parse_workload_format("neusight"), WorkloadFormat::NeusightTable);
}

}  // namespace
}  // namespace orrery
