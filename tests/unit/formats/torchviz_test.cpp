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

// Seed 000 (examples/torchviz/moe_qformer_b4_s45.dot): counts taken from the graph by hand.
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
  EXPECT_TRUE(has_warning(d,
                          "takes the universal beam of the mixture of experts is not in the "
                          "graph; assuming the last-numbered (graph config 'shared_expert')"));
  EXPECT_EQ(d.warnings().size(), 5u);
  // NOTES 1.8's exact form at 2 beams, N_img = 45: 54,611,398,656 + 141,557,760 x 45.
  EXPECT_EQ(total(flop), 54'611'398'656.0 + 141'557'760.0 * 45);
  Diagnostics quiet;
  gemm_flop_by_layer(
      "external_tokens: 257\nheads: 12\nbeams: 2\nshared_expert: last\ndtype: fp16\n", quiet);
  EXPECT_TRUE(quiet.warnings().empty());
}

TEST(TorchvizSeed000, SharedExpertSettingChoosesWhichExpertTakesTheUniversalBeam) {
  // The routed beams go to the routed experts, the universal beam (one row per sample) to the
  // shared one: which expert is shared changes the GEMMs after layer 6 (layer 6 routes
  // nothing yet), and with none every beam is routed (2 beams: 8 rows where the shared expert had
  // 4).
  const std::string base = "external_tokens: 257\nheads: 12\nbeams: 2\n";
  Diagnostics dl, dd, d0, df, dn;
  const auto last = gemm_flop_by_layer(base + "shared_expert: last\n", dl);
  EXPECT_EQ(last, gemm_flop_by_layer(base, dd));
  EXPECT_EQ(total(last), 54'611'398'656.0 + 141'557'760.0 * 257);
  EXPECT_FALSE(has_warning(dl, "shared_expert"));
  EXPECT_TRUE(has_warning(dd, "graph config 'shared_expert'"));
  const auto first = gemm_flop_by_layer(base + "shared_expert: 0\n", d0);
  EXPECT_EQ(first, gemm_flop_by_layer(base + "shared_expert: first\n", df));
  const auto none = gemm_flop_by_layer(base + "shared_expert: none\n", dn);
  EXPECT_EQ(first.at(6), last.at(6));
  EXPECT_EQ(none.at(6), last.at(6));
  // At 3 beams the routed experts take 8 rows and the shared one 4: sharing expert 0 instead of
  // expert 2 makes the rows of a later attention disagree, as PyTorch would refuse them.
  Diagnostics d3;
  EXPECT_THROW(gemm_flop_by_layer("beams: 3\nshared_expert: 0\n", d3), InputError);
  EXPECT_NO_THROW(gemm_flop_by_layer("beams: 3\nshared_expert: last\n", d3));
  EXPECT_GT(none.at(7), last.at(7));
}

TEST(TorchvizSeed000, ASharedExpertNumberedBeyondEveryExpertListIsRefusedAtItsLine) {
  // Seed 000's expert lists number 0-2: expert 99 would share nothing while the routing still
  // counted a universal beam, a silently wrong workload.
  Diagnostics d;
  try {
    gemm_flop_by_layer("beams: 2\nshared_expert: 99\n", d);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what,
              "c.yaml:2: 'shared_expert': expected the number of an expert in the graph's expert "
              "lists (numbered 0-2), found 99");
  }
  EXPECT_NO_THROW(gemm_flop_by_layer("beams: 2\nshared_expert: 2\n", d));
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

// Writes a torchviz-style graph: each parameter with its AccumulateGrad, each operator with its
// input edges in argument order (as make_dot draws next_functions), and the output.
class DotBuilder {
 public:
  std::string param(const std::string& name, const std::string& shape) {
    const std::string p = next(), acc = next();
    text_ += " " + p + " [label=\"" + name + " (" + shape + ")\" fillcolor=lightblue]\n";
    text_ += " " + acc + " [label=AccumulateGrad]\n " + p + " -> " + acc + "\n";
    return acc;
  }
  std::string op(const std::string& label, const std::vector<std::string>& inputs) {
    const std::string id = next();
    text_ += " " + id + " [label=" + label + "]\n";
    for (const std::string& i : inputs)
      text_ += " " + i + " -> " + id + "\n";
    return id;
  }
  // nn.Linear (F.linear on a 3-D input): view(-1, K), addmm(bias, x, weight.t()), view. The
  // weight is [N, K]. An empty `x` is an input from outside the graph (no edge).
  std::string linear(const std::string& x, const std::string& name, int64_t k, int64_t n) {
    const std::string b = param(name + ".bias", std::to_string(n));
    const std::string w = op("TBackward0", {param(name + ".weight", dims(n, k))});
    if (x.empty()) return op("ViewBackward0", {op("AddmmBackward0", {b, w})});
    return op("ViewBackward0", {op("AddmmBackward0", {b, op("ViewBackward0", {x}), w})});
  }
  // HF transformers' Conv1D: addmm(bias, x.view(-1, K), weight) with the weight [K, N], no T.
  std::string conv1d(const std::string& x, const std::string& name, int64_t k, int64_t n) {
    const std::string b = param(name + ".bias", std::to_string(n));
    const std::string w = param(name + ".weight", dims(k, n));
    if (x.empty()) return op("ViewBackward0", {op("AddmmBackward0", {b, w})});
    return op("ViewBackward0", {op("AddmmBackward0", {b, op("ViewBackward0", {x}), w})});
  }
  std::string dot(const std::string& last, const std::string& output_shape) const {
    return "digraph {\n" + text_ + " out [label=\" (" + output_shape +
           ")\" fillcolor=darkolivegreen1]\n " + last + " -> out\n}\n";
  }

 private:
  static std::string dims(int64_t a, int64_t b) {
    return std::to_string(a) + ", " + std::to_string(b);
  }
  std::string next() { return "n" + std::to_string(count_++); }
  std::string text_;
  int count_ = 0;
};

double forward_flop(const Workload& w) {
  return w.model && w.model->forward_flop ? *w.model->forward_flop : -1;
}

// The inferred shape of the node named `name` in `dot`.
std::string inferred_shape(const std::string& dot, const std::string& name,
                           const std::string& yaml = "") {
  const AutogradGraph g = parse_autograd_graph("g.dot", dot);
  Diagnostics d;
  const InferredShapes s = infer_shapes(g, parse_graph_config(yaml, "c.yaml"), d);
  for (NodeId id = 0; id < g.nodes.size(); ++id)
    if (g.nodes[id].id == name) return s.tensors[id].to_string();
  return "(no node " + name + ")";
}

std::string error_reading(const std::string& dot, const std::string& yaml = "") {
  Diagnostics d;
  try {
    read_with_config(yaml, d, dot.c_str());
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// minGPT: x = tok_emb(idx) + pos_emb[:, :T, :], pos_emb = nn.Parameter(zeros(1, 64, C)), then a
// pre-norm MLP block with a residual and a bias-free LM head. B = 4, T = 16, C = 32, vocab 100:
// M = B T = 64 rows. The position embedding is not a learned token (nothing concatenates it) and
// its slice takes the 16 tokens the addition needs.
TEST(TorchvizShapes, MinGptPositionEmbeddingIsSlicedToTheTokens) {
  DotBuilder b;
  const std::string tok = b.op("EmbeddingBackward0", {b.param("tok_emb.weight", "100, 32")});
  const std::string pos_slice =
      b.op("SliceBackward0", {b.op("SliceBackward0", {b.param("pos_emb", "1, 64, 32")})});
  const std::string x = b.op("AddBackward0", {tok, pos_slice});
  const std::string ln =
      b.op("NativeLayerNormBackward0", {x, b.param("ln.weight", "32"), b.param("ln.bias", "32")});
  const std::string h = b.op("GeluBackward0", {b.linear(ln, "mlp.c_fc", 32, 128)});
  const std::string y = b.op("AddBackward0", {x, b.linear(h, "mlp.c_proj", 128, 32)});
  const std::string head_w = b.op("TBackward0", {b.param("head.weight", "100, 32")});
  const std::string logits =
      b.op("UnsafeViewBackward0", {b.op("MmBackward0", {b.op("ViewBackward0", {y}), head_w})});
  const std::string dot = b.dot(logits, "4, 16, 100");

  Diagnostics d;
  const Workload w = read_with_config("optimizer: none\n", d, dot.c_str());
  EXPECT_TRUE(d.warnings().empty()) << d.warnings().front().to_string();
  // Forward FLOPs by hand (E = 64 x 32 = 2,048 elements of x):
  //   tok + pos      E                   =   2,048
  //   layer norm     8 E                 =  16,384
  //   c_fc           2 x 64 x 32 x 128   = 524,288
  //   gelu           8 x 64 x 128        =  65,536
  //   c_proj         2 x 64 x 128 x 32   = 524,288
  //   residual       E                   =   2,048
  //   head (Mm)      2 x 64 x 32 x 100   = 409,600
  //   total                              = 1,544,192   (the embedding gather has no FLOPs)
  EXPECT_EQ(forward_flop(w), 1'544'192);
  EXPECT_EQ(layer_named(w, "head:mm").forward.kernels.at(0).flop, 409'600);
  // The slice of (1, 64, 32) that the addition with (4, 16, 32) needs is (1, 16, 32).
  EXPECT_EQ(inferred_shape(dot, pos_slice), "(1, 16, 32)");
  EXPECT_EQ(inferred_shape(dot, x), "(4, 16, 32)");

  // A learned token that is concatenated (a ViT class token: (1, 1, C) expanded to the batch and
  // put in front of the sequence) is one: the output's 17 tokens are 16 from the embedding + 1.
  DotBuilder v;
  const std::string cls = v.op("ExpandBackward0", {v.param("cls_token", "1, 1, 32")});
  const std::string emb = v.op("EmbeddingBackward0", {v.param("emb.weight", "100, 32")});
  const std::string seq = v.op("CatBackward0", {cls, emb});
  const std::string vdot = v.dot(seq, "4, 17, 32");
  EXPECT_EQ(inferred_shape(vdot, emb), "(4, 16, 32)");
  EXPECT_EQ(inferred_shape(vdot, seq), "(4, 17, 32)");
}

// GPT-2's MLP in HF transformers' Conv1D layers (weights [K, N] used by addmm without a T) on an
// input from outside the graph, output (4, 128, 768): the input's rows follow from the output
// through c_proj (K 3072 -> N 768) and c_fc (768 -> 3072): M = 4 x 128 = 512 rows of 768.
// Expand's target sizes are not in the graph. Expanding learned tokens' batch of 1 gives the batch
// (the output's first size); x.unsqueeze(1).expand(-1, b, ...) gives one copy per beam, b from the
// graph config, which the following view merges into the batch.
TEST(TorchvizShapes, ExpandGivesTheBatchOrOneCopyPerBeam) {
  DotBuilder b;
  const std::string q = b.param("query_tokens", "1, 5, 8");
  const std::string batch = b.op("ExpandBackward0", {q});
  EXPECT_EQ(inferred_shape(b.dot(batch, "4, 5, 8"), batch), "(4, 5, 8)");

  DotBuilder c;
  const std::string copies =
      c.op("ExpandBackward0", {c.op("UnsqueezeBackward0", {c.param("query_tokens", "1, 5, 8")})});
  const std::string rows = c.op("ViewBackward0", {copies});
  const std::string dot = c.dot(rows, "3, 5, 8");
  EXPECT_EQ(inferred_shape(dot, copies, "beams: 3\n"), "(1, 3, 5, 8)");
  EXPECT_EQ(inferred_shape(dot, rows, "beams: 3\n"), "(3, 5, 8)");
  EXPECT_EQ(inferred_shape(dot, rows, "beams: 4\n"), "(4, 5, 8)");
  Diagnostics d;
  infer_shapes(parse_autograd_graph("g.dot", dot), GraphConfig{}, d);
  EXPECT_TRUE(has_warning(d, "assuming 2 (graph config 'beams')"));
  EXPECT_TRUE(has_warning(d, "differs from the graph's (3, 5, 8)"));
}

// Learned tokens reach the concatenation through any number of casts and views (no hop limit):
// 4 query tokens joined with an embedding leave 10 - 4 = 6 text tokens.
TEST(TorchvizShapes, LearnedTokensThroughALongChainOfViews) {
  DotBuilder b;
  std::string q = b.op("ToCopyBackward0", {b.param("query_tokens", "1, 4, 8")});
  for (int i = 0; i < 9; ++i)
    q = b.op("ViewBackward0", {q});
  q = b.op("ExpandBackward0", {q});
  const std::string text = b.op("EmbeddingBackward0", {b.param("embed.weight", "100, 8")});
  const std::string dot = b.dot(b.op("CatBackward0", {q, text}), "2, 10, 8");
  EXPECT_EQ(inferred_shape(dot, text, "dtype: bf16\n"), "(2, 6, 8)");
  Diagnostics d;
  infer_shapes(parse_autograd_graph("g.dot", dot), parse_graph_config("dtype: bf16\n", "c.yaml"),
               d);
  EXPECT_TRUE(d.warnings().empty());
}

TEST(TorchvizShapes, Conv1dWeightsWithoutATransposeOnAnExternalInput) {
  DotBuilder b;
  const std::string h = b.op("GeluBackward0", {b.conv1d("", "mlp.c_fc", 768, 3072)});
  const std::string y = b.conv1d(h, "mlp.c_proj", 3072, 768);
  const std::string dot = b.dot(y, "4, 128, 768");
  Diagnostics d;
  const Workload w = read_with_config("optimizer: none\n", d, dot.c_str());
  EXPECT_TRUE(d.warnings().empty()) << d.warnings().front().to_string();
  // c_fc   2 x 512 x 768 x 3072 = 2,415,919,104
  // gelu   8 x 512 x 3072       =    12,582,912
  // c_proj 2 x 512 x 3072 x 768 = 2,415,919,104
  EXPECT_EQ(forward_flop(w), 2.0 * 2'415'919'104 + 12'582'912);
  const Layer& fc = layer_named(w, "mlp.c_fc:addmm");
  EXPECT_EQ(fc.forward.kernels.at(0).gemm.m, 512);
  EXPECT_EQ(fc.forward.kernels.at(0).gemm.k, 768);
  EXPECT_EQ(fc.forward.kernels.at(0).gemm.n, 3072);
  EXPECT_TRUE(fc.input_grad.kernels.empty());  // the input needs no gradient
  ASSERT_EQ(fc.weight_grad.kernels.size(), 2u);
  EXPECT_EQ(fc.weight_grad.kernels[0].flop, 2'415'919'104);  // dW = X^T dY: 2 x 768 x 3072 x 512
  // The same layers read as nn.Linear (a T in front of [N, K] weights) give the same figures.
  DotBuilder l;
  const std::string lh = l.op("GeluBackward0", {l.linear("", "mlp.c_fc", 768, 3072)});
  Diagnostics dl;
  const std::string ldot = l.dot(l.linear(lh, "mlp.c_proj", 3072, 768), "4, 128, 768");
  EXPECT_EQ(forward_flop(read_with_config("optimizer: none\n", dl, ldot.c_str())),
            2.0 * 2'415'919'104 + 12'582'912);
}

// A text classifier: embedding (1000, 64) -> LayerNorm -> mean over the tokens -> Linear(64, 10),
// output (8, 10). The output has no token dimension: its 10 is the classes, not a text length.
TEST(TorchvizShapes, TwoDimensionalOutputGivesNoTokenCount) {
  DotBuilder b;
  const std::string emb = b.op("EmbeddingBackward0", {b.param("emb.weight", "1000, 64")});
  const std::string ln =
      b.op("NativeLayerNormBackward0", {emb, b.param("ln.weight", "64"), b.param("ln.bias", "64")});
  const std::string pooled = b.op("MeanBackward1", {ln});
  const std::string cls_w = b.op("TBackward0", {b.param("cls.weight", "10, 64")});
  const std::string logits = b.op("AddmmBackward0", {b.param("cls.bias", "10"), pooled, cls_w});
  const std::string dot = b.dot(logits, "8, 10");

  Diagnostics d;
  const Workload w = read_with_config("optimizer: none\n", d, dot.c_str());
  EXPECT_TRUE(has_warning(d,
                          "the output (8, 10) has no token dimension (it is not [batch, tokens, "
                          "features]), so the graph does not give the text length; assuming 1 "
                          "token (graph config 'text_tokens')"));
  EXPECT_FALSE(has_warning(d, "differs from the graph's"));
  // 1 token: LN 8 x 8 x 64 = 4,096; mean 512; classifier 2 x 8 x 64 x 10 = 10,240.
  EXPECT_EQ(forward_flop(w), 4'096 + 512 + 10'240);
  Diagnostics d128;
  const Workload w128 = read_with_config("optimizer: none\ntext_tokens: 128\n", d128, dot.c_str());
  EXPECT_TRUE(d128.warnings().empty()) << d128.warnings().front().to_string();
  // 128 tokens: LN 8 x 8 x 128 x 64 = 524,288; mean 8 x 128 x 64 = 65,536; classifier 10,240.
  EXPECT_EQ(forward_flop(w128), 524'288 + 65'536 + 10'240);
}

// Shapes that PyTorch would refuse are errors at the node's line, not a broadcast to the larger
// size or a silent re-reading of rows.
TEST(TorchvizShapes, IncompatibleOperandsAreRefusedAtTheirNode) {
  const auto line = [](const std::string& dot, const std::string& node) {
    return "mlp.dot:" + std::to_string(dot_node_line(dot, node)) + ": node " + node;
  };
  // An FFN whose fc1 weight is (2048, 256) on 512 features, with a residual (8, 128, 512):
  // F.linear refuses it. Through the view in front of the addmm, 8 x 128 x 512 elements could be
  // 2,048 rows of 256 (said in a warning); the residual then adds (2048, 512) to (8, 128, 512),
  // which do not broadcast.
  {
    DotBuilder b;
    const std::string x = b.op("EmbeddingBackward0", {b.param("emb.weight", "1000, 512")});
    const std::string fc1 = b.linear(x, "fc1", 256, 2048);  // view(addmm n9), see DotBuilder
    const std::string h = b.op("GeluBackward0", {fc1});
    const std::string fc2 = b.linear(h, "fc2", 2048, 512);
    const std::string y = b.op("AddBackward0", {fc2, x});
    const std::string dot = b.dot(y, "8, 128, 512");
    Diagnostics d;
    try {
      read_with_config("optimizer: none\n", d, dot.c_str());
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(line(dot, y) + " (AddBackward0): expected operands that broadcast", 0), 0u)
          << m;
      EXPECT_NE(m.find("found (8, 128, 512) from node " + x +
                       " (EmbeddingBackward0) and (2048, 512) "
                       "from node " +
                       fc2 + " (ViewBackward0): dimension -2 is 128 vs 2048"),
                std::string::npos)
          << m;
      EXPECT_EQ(fc1, "n10");  // the addmm that re-rowed its input is the node just before
      EXPECT_NE(m.find("descends from node n9 (AddmmBackward0), which read its input as rows"),
                std::string::npos)
          << m;
    }
    EXPECT_TRUE(has_warning(d, "reads (8, 128, 512) as 2048 rows of K = 256 features"));
  }
  // Two embeddings of different widths added.
  {
    DotBuilder b;
    const std::string a = b.op("EmbeddingBackward0", {b.param("a.weight", "100, 32")});
    const std::string c = b.op("EmbeddingBackward0", {b.param("c.weight", "100, 64")});
    const std::string sum = b.op("AddBackward0", {a, c});
    const std::string dot = b.dot(sum, "4, 16, 32");
    EXPECT_EQ(error_reading(dot),
              line(dot, sum) +
                  " (AddBackward0): expected operands that broadcast (PyTorch matches sizes "
                  "from the last dimension back; each pair must be equal or contain a 1), found "
                  "(4, 16, 32) from node n2 (EmbeddingBackward0) and (4, 16, 64) from node n5 "
                  "(EmbeddingBackward0): dimension -1 is 32 vs 64");
  }
  // A linear layer whose input comes straight from an operator (no view) with other features.
  {
    DotBuilder b;
    const std::string x = b.op("EmbeddingBackward0", {b.param("emb.weight", "100, 512")});
    const std::string w = b.op("TBackward0", {b.param("fc.weight", "64, 256")});
    const std::string mm = b.op("MmBackward0", {x, w});
    const std::string dot = b.dot(mm, "4, 16, 64");
    EXPECT_EQ(error_reading(dot), line(dot, mm) +
                                      " (MmBackward0): expected a data operand with K = 256 "
                                      "features in its last dimension (the weight is (256, 64) "
                                      "(K x N) as the product reads it), found (4, 16, 512)");
  }
  // A bias that is not N wide, a 1-D embedding table, a layer norm of other width.
  {
    DotBuilder b;
    const std::string mm =
        b.op("AddmmBackward0",
             {b.param("fc.bias", "7"), b.op("TBackward0", {b.param("fc.weight", "4, 16")})});
    const std::string dot = b.dot(mm, "8, 4");
    EXPECT_EQ(error_reading(dot), line(dot, mm) +
                                      " (AddmmBackward0): expected a bias of N = 4 elements (the "
                                      "weight is (16, 4), K x N), found (7)");
  }
  {
    DotBuilder b;
    const std::string e = b.op("EmbeddingBackward0", {b.param("emb.weight", "3")});
    const std::string dot = b.dot(e, "4, 16, 3");
    EXPECT_EQ(error_reading(dot), line(dot, e) +
                                      " (EmbeddingBackward0): expected a 2-D embedding table "
                                      "[entries, features], found (3)");
  }
  {
    DotBuilder b;
    const std::string e = b.op("EmbeddingBackward0", {b.param("emb.weight", "100, 32")});
    const std::string ln =
        b.op("NativeLayerNormBackward0", {e, b.param("ln.weight", "64"), b.param("ln.bias", "64")});
    const std::string dot = b.dot(ln, "4, 16, 32");
    EXPECT_EQ(error_reading(dot), line(dot, ln) +
                                      " (NativeLayerNormBackward0): expected layer-norm "
                                      "parameters of the data's normalized (last) dimensions, "
                                      "found (64) for data (4, 16, 32)");
  }
}

// nanoGPT-style attention on F.scaled_dot_product_attention: q, k, v = Linear(256, 256) of an
// embedding, each .view(B, T, H, D).transpose(1, 2); the fused kernel; .transpose(1, 2)
// .contiguous().view(B, T, C); the output projection. B = 2, T = 1024, C = 256, H = 4, D = 64.
std::string sdpa_graph(const std::string& attention_label, std::string* attention = nullptr) {
  DotBuilder b;
  const std::string x = b.op("EmbeddingBackward0", {b.param("emb.weight", "100, 256")});
  const auto heads = [&](const std::string& name) {
    return b.op("TransposeBackward0", {b.op("ViewBackward0", {b.linear(x, name, 256, 256)})});
  };
  const std::string q = heads("q"), k = heads("k"), v = heads("v");
  const std::string a = b.op(attention_label, {q, k, v});
  if (attention) *attention = a;
  const std::string merged =
      b.op("ViewBackward0", {b.op("CloneBackward0", {b.op("TransposeBackward0", {a})})});
  return b.dot(b.linear(merged, "o", 256, 256), "2, 1024, 256");
}

TEST(TorchvizShapes, FusedAttention) {
  for (const std::string variant :
       {"ScaledDotProductEfficientAttentionBackward0", "ScaledDotProductFlashAttentionBackward0",
        "ScaledDotProductCudnnAttentionBackward0"}) {
    std::string node;
    const std::string dot = sdpa_graph(variant, &node);
    EXPECT_EQ(inferred_shape(dot, node, "heads: 4\n"), "(2, 4, 1024, 64)") << variant;
    Diagnostics d;
    const Workload w = read_with_config("optimizer: none\nheads: 4\n", d, dot.c_str());
    EXPECT_TRUE(d.warnings().empty()) << d.warnings().front().to_string();
    // B H = 8 heads of Sq = Sk = 1024 queries and keys, E = Ev = 64:
    //   forward  Q K^T and P V:                    4 x 8 x 1024 x 1024 x 64 =  2,147,483,648
    //   backward S again, dV, dP, dQ, dK:         10 x 8 x 1024 x 1024 x 64 =  5,368,709,120
    // Bytes (fp32, no autocast here): q, k, v, o are 8 x 1024 x 64 = 524,288 elements each, the
    // log-sum-exp 8 x 1024 fp32 = 32,768 B:
    //   forward  (q + k + v + o) 4 B + lse                   =  8,388,608 + 32,768
    //   backward (q + k + v) 2 x 4 B + (o + dO) 4 B + 3 lse  = 12,582,912 + 4,194,304 + 98,304
    const std::string name = "layer -1:";
    const Layer* attention = nullptr;
    for (const Layer& l : w.program.layers)
      if (l.op.starts_with("scaled_dot_product_")) attention = &l;
    ASSERT_TRUE(attention) << variant;
    ASSERT_EQ(attention->forward.kernels.size(), 1u);
    const ComputeDemand& f = attention->forward.kernels[0];
    EXPECT_EQ(f.kind, KernelClass::Gemm);
    EXPECT_EQ(f.flop, 2'147'483'648.0);
    EXPECT_EQ(f.bytes, 8'388'608u + 32'768u);
    ASSERT_EQ(attention->input_grad.kernels.size(), 1u);
    EXPECT_EQ(attention->input_grad.kernels[0].flop, 5'368'709'120.0);
    EXPECT_EQ(attention->input_grad.kernels[0].bytes, 12'582'912u + 4'194'304u + 98'304u);
    // Projections 4 x 2 x 2048 x 256 x 256 = 1,073,741,824; everything else is views and the
    // copy of .contiguous().
    EXPECT_EQ(forward_flop(w), 1'073'741'824.0 + 2'147'483'648.0) << variant;
  }
}

// The error reading `text` as g.dot gives, or "(no error)".
std::string dot_error_of(const std::string& text) {
  Diagnostics d;
  try {
    read_torchviz_dot("g.dot", text, {}, d);
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("(no error)");
}

TEST(TorchvizDot, EachFileIsReadAloneAndHoldsOneGraph) {
  // Reads in one process after files that end with more than their graph / each error names its
  // own file's line and each file is read alone, because cgraph's lexer kept what followed a
  // graph for the next parse: a blank line after '}' shifted the next file's error lines by one,
  // and a second graph after the first was read in place of the next file's graph (seen running
  // this executable in one process; ctest runs each test alone). What follows the graph is now
  // refused: a second graph, or text that is not DOT.
  const std::string syntax = "digraph {\n a -> \n}";
  EXPECT_EQ(dot_error_of("digraph {\n a [label=AddBackward0]\n}\n\n\n").rfind("g.dot:2: ", 0), 0u);
  EXPECT_EQ(dot_error_of(syntax).rfind("g.dot:3: expected a Graphviz DOT digraph", 0), 0u)
      << dot_error_of(syntax);
  EXPECT_EQ(dot_error_of("digraph {\n a [label=AddBackward0]\n} digraph { b }\n"),
            "g.dot:3: expected the file to end with the graph that ends here, found a second "
            "graph after it");
  EXPECT_EQ(dot_error_of(syntax).rfind("g.dot:3: expected a Graphviz DOT digraph", 0), 0u)
      << dot_error_of(syntax);
  const std::string junk = dot_error_of("digraph {\n a [label=AddBackward0]\n}\n\nx y\n");
  EXPECT_EQ(junk.rfind("g.dot:5: expected a Graphviz DOT digraph: ", 0), 0u) << junk;
  Diagnostics d;
  EXPECT_NO_THROW(read_torchviz_dot("mlp.dot", kMlp, {}, d));
}

TEST(TorchvizDot, MalformedGraphsAreInputErrors) {
  const std::string syntax = dot_error_of("digraph {\n a -> \n}");
  EXPECT_NE(syntax.find("g.dot:3: expected a Graphviz DOT digraph"), std::string::npos) << syntax;
  EXPECT_EQ(dot_error_of("digraph { 1 [label=AddBackward0] 2 [label=MulBackward0] 1 -> 2 2 -> 1 }"),
            "g.dot:1: expected an acyclic autograd graph; node 1 (AddBackward0) is on a cycle: "
            "1 -> 2 -> 1");
  EXPECT_EQ(dot_error_of("graph { 1 -- 2 }"),
            "g.dot:1: expected a directed graph (digraph), found an undirected one");
  EXPECT_EQ(dot_error_of("digraph { 1 [label=\"w\" fillcolor=lightblue] }"),
            "g.dot:1: node 1: expected a tensor label '<name> (<shape>)', found 'w'");
}

TEST(TorchvizDot, NodeErrorsNameTheNodesLine) {
  // A bad label on line 4; the node is mentioned in an edge on line 2 first.
  EXPECT_EQ(dot_error_of("digraph {\n w -> a\n a [label=AddBackward0]\n w [label=\"fc.weight\" "
                         "fillcolor=lightblue]\n}"),
            "g.dot:4: node w: expected a tensor label '<name> (<shape>)', found 'fc.weight'");
  // A newline in a label stays out of the one-line message.
  EXPECT_EQ(dot_error_of("digraph {\n\n w [label=\"fc.weight\n (4000000000, 4000000000)\" "
                         "fillcolor=lightblue]\n}"),
            "g.dot:3: node w: expected a tensor shape of at most 2^40 elements, found "
            "'fc.weight\\n (4000000000, 4000000000)'");
  // The cycle named is the one a -> b -> a, not the node o downstream of it (the first node the
  // topological sort could not place).
  EXPECT_EQ(
      dot_error_of("digraph {\n o [label=\" (2, 3)\" fillcolor=darkolivegreen1]\n a "
                   "[label=AddBackward0]\n b [label=MulBackward0]\n a -> b\n b -> a\n b -> o\n}"),
      "g.dot:3: expected an acyclic autograd graph; node a (AddBackward0) is on a cycle: "
      "a -> b -> a");
  // Operators need an input; binary operators used to crash on an empty input list.
  for (const char* op : {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0"})
    EXPECT_EQ(dot_error_of(std::string("digraph {\n\n a [label=") + op + "]\n}"),
              std::string("g.dot:3: node a (") + op +
                  "): expected at least one input edge (an autograd function exists only for an "
                  "input that needs a gradient); is an edge missing?");
  EXPECT_EQ(dot_error_of("digraph {\n g [label=AccumulateGrad]\n a [label=TBackward0]\n g -> a\n}"),
            "g.dot:2: node g (AccumulateGrad): expected exactly one input edge, from the parameter "
            "it accumulates into");
  // A linear layer without a weight.
  EXPECT_EQ(
      dot_error_of(
          "digraph {\n o [label=\" (2, 4)\" fillcolor=darkolivegreen1]\n b [label=\"fc.bias "
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
  // A key that is no name ("? :", found by fuzz_graph_config) is an error at its line, not
  // yaml-cpp's conversion exception.
  EXPECT_EQ(error_of("? :\n"), "c.yaml:1: expected a key name, found a mapping");
  EXPECT_EQ(error_of("heads: 12\nbeam: 2\n"),
            "c.yaml:2: unknown key 'beam'; expected one of: batch, text_tokens, external_tokens, "
            "heads, beams, shared_expert, dtype, bucket_size, first_bucket_size, bucket_order, "
            "optimizer");
  EXPECT_EQ(error_of("shared_expert: middle\n"),
            "c.yaml:1: 'shared_expert': expected last, first, none or an expert's number, found "
            "'middle'");
  for (const std::string value : {"last", "first", "none", "2"})
    EXPECT_EQ(
        parse_graph_config("shared_expert: " + value + "\n", "c.yaml").shared_expert->to_string(),
        value);
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
