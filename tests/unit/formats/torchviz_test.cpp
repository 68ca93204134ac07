#include "formats/dot_edges.h"
#include "formats/torchviz_dot.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"
#include "formats/torchviz/op_kernels.h"
#include "formats/torchviz/shape_inference.h"
#include "formats/workload_reader.h"

namespace orrery {
namespace {

const std::string kSeed000 = ORRERY_SOURCE_DIR "/examples/torchviz/moe_qformer_b4_s45.dot";
// The seed's graph config: NOTES 1.3's assumptions (257 image tokens, 12 heads, 2 beams).
const std::string kSeed000Config = ORRERY_SOURCE_DIR "/examples/torchviz/moe_qformer.yaml";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has_warning(const Diagnostics& d, const std::string& fragment) {
  for (const Warning& w : d.warnings())
    if (w.to_string().find(fragment) != std::string::npos) return true;
  return false;
}

// Forward GEMM FLOPs per model layer (-1: prologue) of the seed under a graph config.
std::map<int64_t, double> gemm_flop_by_layer(const std::string& config_yaml,
                                             Diagnostics& diagnostics) {
  const AutogradGraph g = parse_autograd_graph(kSeed000, file_text(kSeed000));
  const InferredShapes s = infer_shapes(g, parse_graph_config(config_yaml, "c.yaml"), diagnostics);
  std::map<int64_t, double> flop;
  for (NodeId id = 0; id < g.nodes.size(); ++id)
    for (const ComputeDemand& k : op_kernels(g, s, id).forward)
      if (k.kind == KernelClass::Gemm) flop[g.nodes[id].layer] += k.flop;
  return flop;
}

double total(const std::map<int64_t, double>& by_layer) {
  double sum = 0;
  for (const auto& [layer, flop] : by_layer)
    sum += flop;
  return sum;
}

// Seed 000: the checks of shared/reference/graphs/NOTES.md, section 1.
TEST(TorchvizSeed000, NodeAndEdgeCountsPerKind) {
  const AutogradGraph g = parse_autograd_graph(kSeed000, file_text(kSeed000));
  EXPECT_EQ(g.nodes.size(), 2872u);
  EXPECT_EQ(g.edges, 3028u);
  const std::map<std::string, int64_t> expected = {
      {"ToCopyBackward0", 402},   {"(parameter)", 385},
      {"AccumulateGrad", 385},    {"ViewBackward0", 366},
      {"SliceBackward0", 168},    {"TBackward0", 156},
      {"AddmmBackward0", 144},    {"UnsafeViewBackward0", 90},
      {"ExpandBackward0", 79},    {"PermuteBackward0", 78},
      {"CloneBackward0", 78},     {"NativeDropoutBackward0", 73},
      {"AddBackward0", 63},       {"CatBackward0", 55},
      {"UnsqueezeBackward0", 54}, {"NativeLayerNormBackward0", 44},
      {"GeluBackward0", 36},      {"BmmBackward0", 36},
      {"IndexBackward0", 33},     {"SoftmaxBackward0", 24},
      {"SelectBackward0", 24},    {"ReshapeAliasBackward0", 18},
      {"DivBackward0", 18},       {"TransposeBackward0", 18},
      {"MulBackward0", 12},       {"MmBackward0", 12},
      {"MeanBackward1", 12},      {"SumBackward1", 6},
      {"EmbeddingBackward0", 2},  {"(output)", 1}};
  EXPECT_EQ(g.label_counts(), expected);
  EXPECT_EQ(g.forward_order.size(), g.nodes.size());
}

TEST(TorchvizSeed000, ParametersAndTheirTotal) {
  const AutogradGraph g = parse_autograd_graph(kSeed000, file_text(kSeed000));
  int64_t count = 0, elements = 0, experts = 0;
  for (const GraphNode& n : g.nodes) {
    if (n.kind != NodeKind::Parameter) continue;
    ++count;
    int64_t numel = 1;
    for (const int64_t d : n.shape)
      numel *= d;
    elements += numel;
    if (expert_of(n.name)) experts += numel;
  }
  EXPECT_EQ(count, 385);
  EXPECT_EQ(elements, 242'361'344);
  EXPECT_EQ(experts, 85'003'776);  // 18 experts of layers 6-11 (NOTES 1.4)
}

TEST(TorchvizSeed000, ForwardGemmFlopsPerLayerMatchTheNotes) {
  // NOTES 1.8, with N_img = 257, 12 heads and 2 beams (the config below; also the defaults).
  Diagnostics d;
  const auto flop = gemm_flop_by_layer("external_tokens: 257\nheads: 12\nbeams: 2\n", d);
  const std::map<int64_t, double> expected = {
      {0, 7'422'455'808},  {1, 2'572'922'880}, {2, 7'422'455'808},   {3, 2'572'922'880},
      {4, 7'422'455'808},  {5, 2'572'922'880}, {6, 9'838'387'200},   {7, 6'353'817'600},
      {8, 16'052'883'456}, {9, 6'353'817'600}, {10, 16'052'883'456}, {11, 6'353'817'600}};
  for (const auto& [layer, want] : expected)
    EXPECT_EQ(flop.at(layer), want) << "layer " << layer;
  EXPECT_EQ(total(flop), 90'991'742'976.0);
  EXPECT_FALSE(has_warning(d, "differs from the graph's"));  // output (4, 45, 768) reproduced
}

TEST(TorchvizSeed000, FlopsFollowImageTokensAndBeamsAsTheNotesFormulas) {
  // NOTES 1.8 sensitivity: 2 beams: 54,611,398,656 + 141,557,760 N_img;
  //                        3 beams: 74,119,852,032 + 176,947,200 N_img.
  for (const int64_t n_img : {257, 677}) {
    Diagnostics d2, d3;
    const std::string img = "external_tokens: " + std::to_string(n_img) + "\n";
    EXPECT_EQ(total(gemm_flop_by_layer(img + "beams: 2\n", d2)),
              54'611'398'656.0 + 141'557'760.0 * n_img);
    EXPECT_EQ(total(gemm_flop_by_layer(img + "beams: 3\n", d3)),
              74'119'852'032.0 + 176'947'200.0 * n_img);
    EXPECT_FALSE(has_warning(d3, "differs from the graph's")) << n_img;
  }
}

TEST(TorchvizSeed000, DefaultsAreWarnedOnce) {
  // No seed-specific default: without a config the image features (the input of ln_vision, the
  // first layer norm, which needs no gradient) get the output's 45 tokens, and autocast
  // torch.autocast's CUDA default, fp16.
  Diagnostics d;
  const auto flop = gemm_flop_by_layer("", d);
  EXPECT_TRUE(has_warning(d,
                          "moe_qformer_b4_s45.dot:1: node 140193036037232 "
                          "(NativeLayerNormBackward0): reads an input that needs no gradient"));
  EXPECT_TRUE(has_warning(d, "assuming 45 tokens, as many as the output has"));
  EXPECT_TRUE(has_warning(d, "assuming 768 / 64 = 12 heads"));
  EXPECT_TRUE(has_warning(d, "beams of the mixture of experts are not in the graph; assuming 2"));
  EXPECT_TRUE(has_warning(d, "assuming fp16"));
  EXPECT_EQ(d.warnings().size(), 4u);
  // NOTES 1.8's exact form at 2 beams, N_img = 45: 54,611,398,656 + 141,557,760 x 45.
  EXPECT_EQ(total(flop), 54'611'398'656.0 + 141'557'760.0 * 45);
  Diagnostics quiet;
  gemm_flop_by_layer("external_tokens: 257\nheads: 12\nbeams: 2\ndtype: fp16\n", quiet);
  EXPECT_TRUE(quiet.warnings().empty());
}

TEST(TorchvizSeed000, TrainingWorkload) {
  Diagnostics d;
  ReaderOptions o;
  o.graph_config = kSeed000Config;
  const Workload w = read_workload_file(kSeed000, std::nullopt, o, d);
  EXPECT_EQ(w.format, "torchviz");
  EXPECT_FALSE(w.world_size_from_file);
  ASSERT_TRUE(w.model);
  EXPECT_EQ(w.model->parameters, 242'361'344);
  EXPECT_EQ(w.model->layers, 12);
  // Every forward GEMM is there, with a dW GEMM for each of the 144 + 12 weight GEMMs and a dX
  // GEMM for all but none (every linear input needs a gradient: ln_vision is trainable).
  int64_t forward_gemms = 0, weight_gemms = 0, input_gemms = 0;
  double forward_gemm_flop = 0, backward_gemm_flop = 0;
  Bytes dp_bytes = 0;
  for (const Layer& l : w.program.layers) {
    for (const ComputeDemand& k : l.forward.kernels)
      if (k.kind == KernelClass::Gemm) ++forward_gemms, forward_gemm_flop += k.flop;
    for (const ComputeDemand& k : l.input_grad.kernels)
      if (k.kind == KernelClass::Gemm) ++input_gemms, backward_gemm_flop += k.flop;
    for (const ComputeDemand& k : l.weight_grad.kernels)
      if (k.kind == KernelClass::Gemm) ++weight_gemms, backward_gemm_flop += k.flop;
    if (l.weight_grad.comm) dp_bytes += l.weight_grad.comm->bytes;
  }
  EXPECT_EQ(forward_gemms, 144 + 12 + 36);
  EXPECT_EQ(weight_gemms, 144 + 12);
  EXPECT_EQ(input_gemms, 144 + 12 + 2 * 36);
  EXPECT_EQ(forward_gemm_flop, 90'991'742'976.0);
  // Backward GEMMs: twice the forward (NOTES: ~273 GFLOP per step for forward and backward).
  EXPECT_EQ(backward_gemm_flop, 2 * 90'991'742'976.0);
  // Gradients: fp32, all of them, in the data-parallel group (969,445,376 B, NOTES 1.4).
  EXPECT_EQ(dp_bytes, 969'445'376u);
  // The optimizer step streams 28 B per parameter after the backward.
  ASSERT_EQ(w.program.after.size(), 1u);
  EXPECT_EQ(w.program.layers[w.program.after.begin].forward.kernels.front().bytes,
            Bytes{242'361'344} * 28);
}

TEST(TorchvizSeed000, ExpertParallelShardsExpertGradientsAndAddsAllToAlls) {
  Diagnostics d;
  ReaderOptions o;
  o.ep = 2;
  const Workload w = read_workload_file(kSeed000, std::nullopt, o, d);
  // 3 experts per layer do not split evenly over 2 ranks: said, naming the flag.
  EXPECT_TRUE(has_warning(d, "--ep 2: expert lists of 3 experts do not divide evenly"));
  EXPECT_EQ(w.parallelism.ep, 2);
  Bytes expert_bytes = 0, data_bytes = 0;
  int all_to_alls = 0;
  for (const Layer& l : w.program.layers) {
    if (const auto& c = l.weight_grad.comm)
      (c->group == CommGroup::ExpertData ? expert_bytes : data_bytes) += c->bytes;
    if (l.forward.comm && l.forward.comm->kind == CollectiveKind::AllToAll) ++all_to_alls;
  }
  EXPECT_EQ(expert_bytes, 85'003'776u * 4);
  EXPECT_EQ(data_bytes, (242'361'344u - 85'003'776u) * 4);
  EXPECT_EQ(all_to_alls, 2 * 18);  // each expert's first and last linear layer
}

// A two-layer MLP over embeddings, small enough to derive every figure by hand:
// wte (10, 4) -> [2, 3, 4] -> fc1 (8, 4) + b1 (8) -> gelu -> fc2 (4, 8) + b2 (4) -> (2, 3, 4).
constexpr const char* kMlp = R"dot(digraph {
  out [label=" (2, 3, 4)" fillcolor=darkolivegreen1]
  v4 [label=ViewBackward0]
  v4 -> out
  mm2 [label=AddmmBackward0]
  mm2 -> v4
  ag_b2 -> mm2
  v3 -> mm2
  t2 -> mm2
  ag_b2 [label=AccumulateGrad]
  b2 [label="fc2.bias (4)" fillcolor=lightblue]
  b2 -> ag_b2
  v3 [label=ViewBackward0]
  gelu [label=GeluBackward0]
  gelu -> v3
  v2 [label=ViewBackward0]
  v2 -> gelu
  mm1 [label=AddmmBackward0]
  mm1 -> v2
  ag_b1 -> mm1
  v1 -> mm1
  t1 -> mm1
  ag_b1 [label=AccumulateGrad]
  b1 [label="fc1.bias (8)" fillcolor=lightblue]
  b1 -> ag_b1
  v1 [label=ViewBackward0]
  emb [label=EmbeddingBackward0]
  emb -> v1
  ag_wte [label=AccumulateGrad]
  ag_wte -> emb
  wte [label="wte.weight (10, 4)" fillcolor=lightblue]
  wte -> ag_wte
  t1 [label=TBackward0]
  ag_w1 -> t1
  ag_w1 [label=AccumulateGrad]
  w1 [label="fc1.weight (8, 4)" fillcolor=lightblue]
  w1 -> ag_w1
  t2 [label=TBackward0]
  ag_w2 -> t2
  ag_w2 [label=AccumulateGrad]
  w2 [label="fc2.weight (4, 8)" fillcolor=lightblue]
  w2 -> ag_w2
})dot";

// Reads kMlp (or `dot`) with a graph config written to a temporary file.
Workload read_with_config(const std::string& yaml, Diagnostics& d, const char* dot = kMlp) {
  // One file per process and test: ctest runs tests of this executable in parallel.
  const std::filesystem::path config =
      std::filesystem::temp_directory_path() /
      ("orrery_mlp_config_" + std::to_string(::getpid()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
  std::ofstream(config) << yaml;
  ReaderOptions o;
  o.graph_config = config.string();
  Workload w = read_torchviz_dot("mlp.dot", dot, o, d);
  std::filesystem::remove(config);
  return w;
}

const Layer& layer_named(const Workload& w, const std::string& name) {
  for (const Layer& l : w.program.layers)
    if (l.name == name) return l;
  throw std::runtime_error("no layer " + name);
}

// Row kinds and the bytes of each bucket row, in listing (forward) order.
std::pair<std::vector<std::string>, std::vector<Bytes>> rows_and_buckets(const Workload& w) {
  std::vector<std::string> ops;
  std::vector<Bytes> bucket_bytes;
  for (const Layer& l : w.program.layers) {
    ops.push_back(l.op);
    if (l.weight_grad.comm) bucket_bytes.push_back(l.weight_grad.comm->bytes);
  }
  return {ops, bucket_bytes};
}

TEST(TorchvizMlp, Kernels) {
  Diagnostics d;
  const Workload w = read_with_config("bucket_size: 100\noptimizer: sgd\n", d);
  EXPECT_TRUE(d.warnings().empty()) << d.warnings().front().to_string();
  // fc1: M = 2 x 3 rows, N = 8, K = 4: 2 M N K = 384 FLOP each for Y, dX and dW; the bias
  // gradient sums dY (48 elements).
  const Layer& fc1 = layer_named(w, "fc1:addmm");
  ASSERT_EQ(fc1.forward.kernels.size(), 1u);
  EXPECT_EQ(fc1.forward.kernels[0].flop, 384);
  EXPECT_EQ(fc1.forward.kernels[0].bytes, (6u * 4 + 4 * 8 + 6 * 8) * 4);  // fp32 operands
  ASSERT_EQ(fc1.input_grad.kernels.size(), 1u);
  EXPECT_EQ(fc1.input_grad.kernels[0].flop, 384);
  ASSERT_EQ(fc1.weight_grad.kernels.size(), 2u);
  EXPECT_EQ(fc1.weight_grad.kernels[0].flop, 384);
  EXPECT_EQ(fc1.weight_grad.kernels[1].kind, KernelClass::Reduction);
  EXPECT_EQ(fc1.weight_grad.kernels[1].flop, 48);
  // gelu over 48 fp32 elements: 8 FLOP each, reads and writes 48 x 4 B.
  const Layer& gelu = layer_named(w, "prologue:gelu.0");
  EXPECT_EQ(gelu.forward.kernels[0].flop, 8 * 48);
  EXPECT_EQ(gelu.forward.kernels[0].bytes, 2u * 48 * 4);
  // The embedding's gradient zeroes the 10 x 4 table and adds the 24 rows of dY into it.
  const Layer& emb = layer_named(w, "wte:embedding");
  ASSERT_EQ(emb.weight_grad.kernels.size(), 2u);
  EXPECT_EQ(emb.weight_grad.kernels[0].bytes, 40u * 4);
  EXPECT_TRUE(emb.input_grad.kernels.empty());
  // SGD reads parameter and gradient and writes the parameter: 12 B for each of 116.
  EXPECT_EQ(w.program.layers.back().forward.kernels[0].bytes, 116u * 12);
  ASSERT_TRUE(w.model);
  EXPECT_EQ(w.model->parameters, 116);
  EXPECT_EQ(*w.model->forward_flop, 384 + 8 * 48 + 384);
}

TEST(TorchvizMlp, BucketsInReverseRegistrationOrderWithASmallFirstBucket) {
  // Registration order (first use in the forward; weights before biases): wte 160 B, fc1.weight
  // 128, fc1.bias 32, fc2.weight 128, fc2.bias 16. DDP fills buckets in that order, the first
  // capped at first_bucket_size, then reverses them: {wte} {fc1.weight} {fc1.bias, fc2.weight}
  // {fc2.bias} -> bucket 0 {fc2.bias} 16 B (ready after fc2's backward), bucket 1 {fc1.bias,
  // fc2.weight} 160 B and bucket 2 {fc1.weight} 128 B (after fc1's), bucket 3 {wte} 160 B (after
  // the embedding's). Rows before one layer list the later bucket first (the backward runs them
  // last to first).
  Diagnostics d;
  const Workload w = read_with_config("bucket_size: 100\nfirst_bucket_size: 100\n", d);
  const auto [ops, bytes] = rows_and_buckets(w);
  EXPECT_EQ(ops, (std::vector<std::string>{"grad all-reduce", "embedding", "grad all-reduce",
                                           "grad all-reduce", "addmm", "gelu", "grad all-reduce",
                                           "addmm", "optimizer"}));
  EXPECT_EQ(bytes, (std::vector<Bytes>{160, 128, 160, 16}));
  EXPECT_EQ(w.program.layers[0].name, "gradient bucket 3 (160 B, 1 tensor)");
  EXPECT_EQ(w.program.layers[6].name, "gradient bucket 0 (16 B, 1 tensor)");

  // DDP's defaults: the first bucket holds up to 1 MiB, so all 464 B go into it; it is complete
  // only after the embedding's backward.
  Diagnostics d2;
  const auto [ops2, bytes2] = rows_and_buckets(read_with_config("bucket_size: 100\n", d2));
  EXPECT_EQ(ops2.front(), "grad all-reduce");
  EXPECT_EQ(bytes2, (std::vector<Bytes>{464}));
}

TEST(TorchvizMlp, BucketsInGradientReadyOrder) {
  // bucket_order: ready (DDP after its first iteration): fc2.bias 16, fc2.weight 128 (fc2's
  // backward), fc1.bias 32, fc1.weight 128 (fc1's), wte 160 (the embedding's); the first bucket
  // capped at 100 B: {16 + 128} after fc2, {32 + 128} after fc1, {160} after the embedding.
  Diagnostics d;
  const Workload w =
      read_with_config("bucket_size: 100\nfirst_bucket_size: 100\nbucket_order: ready\n", d);
  const auto [ops, bytes] = rows_and_buckets(w);
  EXPECT_EQ(ops,
            (std::vector<std::string>{"grad all-reduce", "embedding", "grad all-reduce", "addmm",
                                      "gelu", "grad all-reduce", "addmm", "optimizer"}));
  EXPECT_EQ(bytes, (std::vector<Bytes>{160, 160, 144}));
  EXPECT_EQ(w.program.layers[5].name, "gradient bucket 0 (144 B, 2 tensors)");
}

// make_dot(model(x)) of a Linear(16, 4) whose input x needs no gradient: the graph gives only the
// output (8, 4), from which the input's rows follow: (8, 16).
constexpr const char* kLinearOnInput = R"dot(digraph {
	140 [label=" (8, 4)" fillcolor=darkolivegreen1]
	141 [label=AddmmBackward0]
	142 -> 141
	142 [label=AccumulateGrad]
	143 -> 142
	143 [label="fc.bias
 (4)" fillcolor=lightblue]
	144 [label=TBackward0]
	144 -> 141
	145 -> 144
	145 [label=AccumulateGrad]
	146 [label="fc.weight
 (4, 16)" fillcolor=lightblue]
	146 -> 145
	141 -> 140
})dot";

TEST(TorchvizShapes, AnInputFromOutsideTheGraphTakesTheRowsTheOutputStates) {
  for (const std::string config : {"optimizer: none\n", "optimizer: none\nexternal_tokens: 1\n"}) {
    Diagnostics d;
    const Workload w = read_with_config(config, d, kLinearOnInput);
    const Layer& fc = layer_named(w, "fc:addmm");
    ASSERT_EQ(fc.forward.kernels.size(), 1u);
    EXPECT_EQ(fc.forward.kernels[0].flop, 2 * 8 * 4 * 16);  // M 8, N 4, K 16
    EXPECT_TRUE(fc.input_grad.kernels.empty());             // x needs no gradient
    EXPECT_FALSE(has_warning(d, "differs from the graph's"));
    EXPECT_FALSE(has_warning(d, "assuming"));
    EXPECT_EQ(has_warning(d, "graph config 'external_tokens' not used here"),
              config.find("external_tokens") != std::string::npos);
  }
}

TEST(TorchvizDot, MalformedGraphsAreInputErrors) {
  const auto error_of = [](const std::string& text) {
    Diagnostics d;
    try {
      read_torchviz_dot("g.dot", text, {}, d);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of("digraph {\n a -> \n}").find("g.dot:3: expected a Graphviz DOT digraph"),
            std::string::npos)
      << error_of("digraph {\n a -> \n}");
  EXPECT_EQ(error_of("digraph { 1 [label=AddBackward0] 2 [label=MulBackward0] 1 -> 2 2 -> 1 }"),
            "g.dot:1: expected an acyclic autograd graph; node 1 (AddBackward0) is on a cycle: "
            "1 -> 2 -> 1");
  EXPECT_EQ(error_of("graph { 1 -- 2 }"),
            "g.dot:1: expected a directed graph (digraph), found an undirected one");
  EXPECT_EQ(error_of("digraph { 1 [label=\"w\" fillcolor=lightblue] }"),
            "g.dot:1: node 1: expected a tensor label '<name> (<shape>)', found 'w'");
}

TEST(TorchvizDot, NodeErrorsNameTheNodesLine) {
  const auto error_of = [](const std::string& text) {
    Diagnostics d;
    try {
      read_torchviz_dot("g.dot", text, {}, d);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // A bad label on line 4; the node is mentioned in an edge on line 2 first.
  EXPECT_EQ(error_of("digraph {\n w -> a\n a [label=AddBackward0]\n w [label=\"fc.weight\" "
                     "fillcolor=lightblue]\n}"),
            "g.dot:4: node w: expected a tensor label '<name> (<shape>)', found 'fc.weight'");
  // A newline in a label stays out of the one-line message.
  EXPECT_EQ(error_of("digraph {\n\n w [label=\"fc.weight\n (4000000000, 4000000000)\" "
                     "fillcolor=lightblue]\n}"),
            "g.dot:3: node w: expected a tensor shape of at most 2^40 elements, found "
            "'fc.weight\\n (4000000000, 4000000000)'");
  // The cycle named is the one a -> b -> a, not the node o downstream of it (the first node the
  // topological sort could not place).
  EXPECT_EQ(error_of("digraph {\n o [label=\" (2, 3)\" fillcolor=darkolivegreen1]\n a "
                     "[label=AddBackward0]\n b [label=MulBackward0]\n a -> b\n b -> a\n b -> o\n}"),
            "g.dot:3: expected an acyclic autograd graph; node a (AddBackward0) is on a cycle: "
            "a -> b -> a");
  // Operators need an input; binary operators used to crash on an empty input list.
  for (const char* op : {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0"})
    EXPECT_EQ(error_of(std::string("digraph {\n\n a [label=") + op + "]\n}"),
              std::string("g.dot:3: node a (") + op +
                  "): expected at least one input edge (an autograd function exists only for an "
                  "input that needs a gradient); is an edge missing?");
  EXPECT_EQ(error_of("digraph {\n g [label=AccumulateGrad]\n a [label=TBackward0]\n g -> a\n}"),
            "g.dot:2: node g (AccumulateGrad): expected exactly one input edge, from the parameter "
            "it accumulates into");
  // A linear layer without a weight.
  EXPECT_EQ(
      error_of("digraph {\n o [label=\" (2, 4)\" fillcolor=darkolivegreen1]\n b [label=\"fc.bias "
               "(4)\" fillcolor=lightblue]\n g [label=AccumulateGrad]\n b -> g\n m "
               "[label=AddmmBackward0]\n g -> m\n m -> o\n}"),
      "g.dot:6: node m (AddmmBackward0): expected a weight operand: a 2-D parameter (through its "
      "cast and transpose) or a second activation");
  EXPECT_EQ(
      dot_node_line("digraph {\n // a [x]\n /* a\n [y] */ \"a\" -> b\n\n a [label=z]\n}", "a"), 6);
  EXPECT_EQ(dot_node_line("digraph {\n a -> b\n}", "b"), 2);
  EXPECT_EQ(dot_node_line("digraph {\n a -> b\n}", "c"), 1);
}

TEST(TorchvizDot, ConfigSizesBeyondTheTensorBoundAreInputErrors) {
  // batch x text tokens x hidden = 1e6 x 1e6 x 4 elements: refused at the embedding, not wrapped.
  Diagnostics d;
  try {
    read_with_config("batch: 1000000\ntext_tokens: 1000000\n", d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(EmbeddingBackward0): expected a tensor of at most 2^40 "
                                         "elements, inferred 1000000 x 1000000 x 4"),
              std::string::npos)
        << e.what();
  }
}

// Deletes edges of the seed one at a time (every 16th of its 3,028 edges, a deterministic sample
// over every kind of node): each edited graph is read or refused with an InputError; never a
// crash, a hang or another exception, and whatever is read keeps its tensors in bounds.
TEST(TorchvizDot, Seed000WithAnEdgeDeletedIsReadOrRefused) {
  const std::string text = file_text(kSeed000);
  const auto edges = orrery::testing::dot_edges(text);
  ASSERT_EQ(edges.size(), 3028u);
  int read = 0, refused = 0;
  for (size_t e = 0; e < edges.size(); e += 16) {
    std::string edited = text;
    edited.erase(edges[e].first, edges[e].second);
    Diagnostics d;
    ReaderOptions o;
    o.graph_config = kSeed000Config;
    try {
      const Workload w = read_torchviz_dot(kSeed000, edited, o, d);
      ++read;
      for (const Layer& l : w.program.layers)
        for (const Phase* p : {&l.forward, &l.input_grad, &l.weight_grad})
          for (const ComputeDemand& k : p->kernels)
            EXPECT_LE(k.bytes, Bytes{16} << 40) << l.name;
    } catch (const InputError& error) {
      ++refused;
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos);
    }
  }
  EXPECT_EQ(read + refused, 190);
}

TEST(GraphConfig, KeysValuesAndErrors) {
  const GraphConfig c = parse_graph_config(
      "beams: 3\nheads: 16\ndtype: fp16\nbucket_size: 50 MiB\noptimizer: none\n", "c.yaml");
  EXPECT_EQ(c.beams, 3);
  EXPECT_EQ(c.heads, 16);
  EXPECT_EQ(c.dtype, DType::FP16);
  EXPECT_EQ(c.bucket_size, 50 * kMiB);
  EXPECT_EQ(c.optimizer, OptimizerKind::None);
  const auto error_of = [](const std::string& yaml) {
    try {
      parse_graph_config(yaml, "c.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_of("heads: 12\nbeam: 2\n"),
            "c.yaml:2: unknown key 'beam'; expected one of: batch, text_tokens, external_tokens, "
            "heads, beams, dtype, bucket_size, first_bucket_size, bucket_order, optimizer");
  EXPECT_EQ(error_of("batch: 1000000000000\n"),
            "c.yaml:1: 'batch': expected a positive integer of at most 1000000000, found "
            "'1000000000000'");
  EXPECT_EQ(error_of("bucket_size: 2 TiB\n"),
            "c.yaml:1: 'bucket_size': expected a positive size of at most 1 TiB, found '2 TiB'");
  EXPECT_EQ(error_of("bucket_order: random\n"),
            "c.yaml:1: 'bucket_order': expected registration or ready, found 'random'");
  EXPECT_EQ(error_of("beams: 1\n"),
            "c.yaml:1: 'beams': expected at least 2 (one routed beam and the universal one)");
  EXPECT_EQ(error_of("heads: twelve\n"),
            "c.yaml:1: 'heads': expected a positive integer of at most 1000000000, found 'twelve'");
}

TEST(AutogradGraph, LayerIndexFromParameterNames) {
  EXPECT_EQ(layer_index_of("encoder.layer.6.experts.experts.0.dense1.weight"), 6);
  EXPECT_EQ(layer_index_of("model.decoder.layers.11.fc1.weight"), 11);
  EXPECT_EQ(layer_index_of("transformer.h.3.attn.c_attn.weight"), 3);
  EXPECT_EQ(layer_index_of("0.weight"), 0);
  EXPECT_EQ(layer_index_of("embeddings.word_embeddings.weight"), -1);
  const auto e = expert_of("encoder.layer.7.experts.experts.2.dense1.weight");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->module, "encoder.layer.7.experts.experts");
  EXPECT_EQ(e->index, 2);
  EXPECT_FALSE(expert_of("encoder.layer.0.experts.dense1.weight"));  // a plain FFN
}

TEST(WorkloadReader, DetectsTorchvizGraphs) {
  EXPECT_EQ(detect_workload_format(kMlp), WorkloadFormat::TorchvizDot);
  EXPECT_EQ(detect_workload_format(file_text(kSeed000)), WorkloadFormat::TorchvizDot);
  EXPECT_EQ(parse_workload_format("torchviz"), WorkloadFormat::TorchvizDot);
}

}  // namespace
}  // namespace orrery
