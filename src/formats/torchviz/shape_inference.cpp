#include "formats/torchviz/shape_inference.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

namespace orrery {
namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

// Products and sums of sizes saturate instead of wrapping; a saturated size fails validation.
int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

}  // namespace

int64_t TensorShape::numel() const {
  int64_t n = 1;
  for (const Dim& d : dims)
    n = mul(n, d.size);
  return n;
}

int TensorShape::find(Axis axis) const {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i].axis == axis) return static_cast<int>(i);
  return -1;
}

std::string TensorShape::to_string() const {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i].size);
  return text + ")";
}

namespace {

bool is_one_of(const std::string& op, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), op) != names.end();
}

bool is_reshape(const std::string& op) {
  return is_one_of(op, {"View", "UnsafeView", "ReshapeAlias", "Reshape", "Flatten"});
}

// Operators that keep their input's shape (and, except casts, its type).
bool keeps_shape(const std::string& op) {
  return is_one_of(op, {"ToCopy", "Clone",      "NativeDropout", "Dropout",  "Gelu",       "Relu",
                        "Silu",   "Tanh",       "Sigmoid",       "Softmax",  "LogSoftmax", "Exp",
                        "Log",    "Sqrt",       "Rsqrt",         "Neg",      "Abs",        "Pow",
                        "Erf",    "Sin",        "Cos",           "Hardtanh", "LeakyRelu",  "Elu",
                        "Clamp",  "MaskedFill", "Contiguous",    "Alias"});
}

bool is_binary_elementwise(const std::string& op) {
  return is_one_of(op, {"Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Where", "Lerp"});
}

class Inference {
 public:
  Inference(const AutogradGraph& graph, const GraphConfig& config, Diagnostics& diagnostics)
      : g_(graph), config_(config), diagnostics_(diagnostics) {
    result_.tensors.resize(graph.nodes.size());
    result_.external_input.assign(graph.nodes.size(), false);
    result_.from_parameter.assign(graph.nodes.size(), false);
    for (const GraphNode& n : graph.nodes) {
      if (n.kind == NodeKind::Output && !output_) output_ = &n;
      if (n.op == "ToCopy") autocast_ = true;
      if (n.kind == NodeKind::Parameter) {
        if (const auto e = expert_of(n.name))
          last_expert_[e->module] = std::max(last_expert_[e->module], e->index);
      }
    }
    mark_parameters();
    learned_tokens_ = concatenated_learned_tokens();
    settings_init();
  }

  InferredShapes run() {
    for (const NodeId id : g_.forward_order) {
      infer(id);
      validate(id);
    }
    return std::move(result_);
  }

 private:
  void warn(const std::string& message) { diagnostics_.warn({g_.path, 0}, message); }
  void warn(NodeId id, const std::string& message) {
    diagnostics_.warn(g_.where(id), g_.describe(id) + ": " + message);
  }
  [[noreturn]] void fail(NodeId id, const std::string& message) const {
    throw InputError(g_.where(id), g_.describe(id) + ": " + message);
  }
  // Every tensor: sizes non-negative, at most kMaxTensorElements elements.
  void validate(NodeId id) const {
    const TensorShape& t = result_.tensors[id];
    const bool negative =
        std::any_of(t.dims.begin(), t.dims.end(), [](const Dim& d) { return d.size < 0; });
    if (negative || t.numel() > kMaxTensorElements) {
      std::string sizes;
      for (const Dim& d : t.dims)
        sizes += (sizes.empty() ? "" : " x ") +
                 (d.size == kSaturated ? std::string("(overflow)") : std::to_string(d.size));
      fail(id, "expected a tensor of at most 2^40 elements, inferred " + sizes +
                   " (the graph's shapes contradict each other, or a graph-config size is too "
                   "large)");
    }
  }

  // Parameters, and casts and views of nothing but parameters (a weight cast for autocast, its
  // transpose), are parameters to the rules: the other inputs of an operator are its data.
  void mark_parameters() {
    for (const NodeId id : g_.forward_order) {
      const GraphNode& n = g_.nodes[id];
      const bool only_parameters =
          !n.inputs.empty() && std::all_of(n.inputs.begin(), n.inputs.end(),
                                           [&](NodeId i) { return result_.from_parameter[i]; });
      result_.from_parameter[id] =
          n.kind == NodeKind::Parameter || n.kind == NodeKind::AccumulateGrad ||
          (only_parameters &&
           (n.op == "ToCopy" || n.op == "T" || n.op == "Transpose" || is_reshape(n.op) ||
            n.op == "Permute" || n.op == "Unsqueeze" || n.op == "Clone"));
    }
  }

  // Learned tokens that the graph concatenates with the sequence (a Q-Former's query tokens, a
  // ViT's class token): 3-D parameters (1, X, C) that reach a Cat through their AccumulateGrad,
  // casts, views and an Expand to the batch. A (1, X, C) parameter used otherwise (minGPT's
  // position embedding, sliced and added) adds no tokens.
  int64_t concatenated_learned_tokens() const {
    int64_t tokens = 0;
    for (NodeId id = 0; id < g_.nodes.size(); ++id) {
      const GraphNode& n = g_.nodes[id];
      if (n.kind != NodeKind::Parameter || n.shape.size() != 3 || n.shape[0] != 1) continue;
      std::vector<NodeId> frontier = {id};
      bool joined = false;
      for (int depth = 0; depth < 6 && !frontier.empty() && !joined; ++depth) {
        std::vector<NodeId> next;
        for (const NodeId at : frontier) {
          for (const NodeId c : node(at).consumers) {
            const GraphNode& consumer = node(c);
            if (consumer.op == "Cat") joined = true;
            if (consumer.kind == NodeKind::AccumulateGrad || consumer.op == "Expand" ||
                consumer.op == "ToCopy" || consumer.op == "Clone" || is_reshape(consumer.op))
              next.push_back(c);
          }
        }
        frontier = std::move(next);
      }
      if (joined) tokens = add(tokens, n.shape[1]);
    }
    return tokens;
  }

  void settings_init() {
    GraphSettings& s = result_.settings;
    const bool output_has_batch = output_ && !output_->shape.empty();
    if (config_.batch) {
      s.batch = *config_.batch;
      batch_source_ = "graph config";
    } else if (output_has_batch) {
      s.batch = output_->shape[0];
      batch_source_ = "the output's first size";
    } else {
      defaults_.insert("batch");
      batch_source_ = "default";
    }
    if (config_.beams) s.beams = *config_.beams;
    if (config_.dtype) s.autocast = *config_.dtype;
    // The output's second size is its tokens only when it has a feature axis after them: a 2-D
    // output (a classifier's (batch, classes)) has none.
    const bool output_has_tokens = output_ && output_->shape.size() >= 3;
    if (config_.text_tokens) {
      s.text_tokens = *config_.text_tokens;
      text_tokens_source_ = "graph config";
    } else if (output_has_tokens && output_->shape[1] > learned_tokens_) {
      s.text_tokens = output_->shape[1] - learned_tokens_;
      text_tokens_source_ = learned_tokens_ > 0
                                ? "the output's tokens - " + std::to_string(learned_tokens_) +
                                      " learned tokens concatenated with them"
                                : "the output's tokens";
    } else {
      defaults_.insert("text_tokens");
      text_tokens_source_ = "default";
      TensorShape declared;
      if (output_)
        for (const int64_t size : output_->shape)
          declared.dims.push_back({Axis::Other, size});
      text_tokens_reason_ =
          !output_ ? "no output tensor gives the text length"
          : !output_has_tokens
              ? "the output " + declared.to_string() +
                    " has no token dimension (it is not [batch, tokens, features]), so the graph "
                    "does not give the text length"
              : "the output's " + std::to_string(output_->shape[1]) + " tokens are all " +
                    std::to_string(learned_tokens_) +
                    " learned tokens concatenated with the text, so the graph does not give the "
                    "text length";
    }
    if (autocast_ && !config_.dtype)
      warn("the graph casts tensors (autocast) but not to which type; assuming " +
           std::string(to_string(s.autocast)) + " (graph config 'dtype')");
  }

  // Values with a default: warn the first time the graph needs the default.
  int64_t batch() {
    if (defaults_.erase("batch"))
      warn("no output tensor gives the batch; assuming 1 (graph config 'batch')");
    return result_.settings.batch;
  }
  int64_t text_tokens() {
    if (defaults_.erase("text_tokens"))
      warn(text_tokens_reason_ + "; assuming 1 token (graph config 'text_tokens')");
    used_text_tokens_ = true;
    return result_.settings.text_tokens;
  }
  // Tokens of an input that needs no gradient and whose rows the graph does not state: the graph
  // config's, else as many as the output has (none: the input is [batch, features]).
  std::optional<int64_t> external_tokens(NodeId id) {
    used_external_ = true;
    if (config_.external_tokens) return *config_.external_tokens;
    const std::optional<int64_t> tokens = output_ && output_->shape.size() >= 3
                                              ? std::optional<int64_t>(output_->shape[1])
                                              : std::nullopt;
    if (!warned_external_) {
      warned_external_ = true;
      warn(id,
           "reads an input that needs no gradient (from outside the graph, e.g. frozen "
           "encoder features) whose size the graph does not state; assuming " +
               (tokens ? std::to_string(*tokens) + " tokens, as many as the output has"
                       : std::string("one row per sample, as the output has")) +
               " (graph config 'external_tokens')");
    }
    return tokens;
  }
  int64_t beams() {
    used_beams_ = true;
    if (!config_.beams && !warned_beams_) {
      warned_beams_ = true;
      warn("the routing beams of the mixture of experts are not in the graph; assuming " +
           std::to_string(result_.settings.beams) + " (graph config 'beams')");
    }
    return result_.settings.beams;
  }
  int64_t heads(int64_t features) {
    used_heads_ = true;
    if (config_.heads && features % *config_.heads == 0) return *config_.heads;
    const int64_t fallback = std::max<int64_t>(1, features / 64);
    if (!warned_heads_) {
      warned_heads_ = true;
      warn(config_.heads
               ? "graph config 'heads' " + std::to_string(*config_.heads) +
                     " does not divide the " + std::to_string(features) + " features; assuming " +
                     std::to_string(fallback) + " heads"
               : "attention heads are not in the graph; assuming " + std::to_string(features) +
                     " / 64 = " + std::to_string(fallback) + " heads (graph config 'heads')");
    }
    return fallback;
  }
  void unknown(NodeId id, const std::string& op) {
    if (warned_ops_.insert(op).second)
      warn(id, "no shape rule for autograd function '" + op +
                   "Backward' (first of its kind); its output is taken to have its first input's "
                   "shape and it is costed as an element-wise kernel");
  }

  const GraphNode& node(NodeId id) const { return g_.nodes[id]; }
  TensorShape& shape(NodeId id) { return result_.tensors[id]; }
  // The op of the first consumer, or "".
  std::string first_consumer_op(NodeId id) const {
    const auto& c = node(id).consumers;
    return c.empty() ? "" : node(c.front()).op;
  }
  bool has_consumer(NodeId id, const char* op) const {
    for (const NodeId c : node(id).consumers)
      if (node(c).op == op) return true;
    return false;
  }
  int count_consumers(NodeId id, const char* op) const {
    int n = 0;
    for (const NodeId c : node(id).consumers)
      n += node(c).op == op ? 1 : 0;
    return n;
  }

  // Inputs that are activations (not parameters seen through casts and views).
  std::vector<NodeId> data_inputs(NodeId id) const {
    std::vector<NodeId> result;
    for (const NodeId i : node(id).inputs)
      if (!result_.from_parameter[i]) result.push_back(i);
    return result;
  }

  void infer(NodeId id);
  void infer_op(NodeId id);
  TensorShape linear(NodeId id);
  TensorShape bmm(NodeId id);
  TensorShape broadcast(NodeId id, const std::vector<NodeId>& inputs);
  TensorShape transpose(NodeId id, TensorShape in) const;
  TensorShape attention(NodeId id);
  bool reaches_batched_matmul(NodeId id) const;
  void narrow(NodeId tensor, size_t from_end, int64_t size);
  std::string settings_summary() const;
  std::string rerow_note(const TensorShape& t) const;
  TensorShape reshape(NodeId id, TensorShape in);
  TensorShape permute(TensorShape in);
  TensorShape expand(NodeId id, TensorShape in);
  TensorShape unsqueeze(NodeId id, TensorShape in);
  TensorShape slice(NodeId id, NodeId input, TensorShape in);
  TensorShape index(NodeId id, NodeId input, TensorShape in);
  TensorShape cat(NodeId id);
  TensorShape external(NodeId id, int64_t in_features, int64_t out_features);
  // (elements of the input, the output node) when the graph states them.
  std::optional<std::pair<int64_t, NodeId>> elements_from_output(NodeId id, int64_t in_features,
                                                                 int64_t out_features) const;
  bool replica_is_indexed(NodeId expand_node) const;
  std::optional<bool> feeds_universal_expert(NodeId id) const;
  Rows rows_for(int64_t total, size_t parts) const;

  const AutogradGraph& g_;
  const GraphConfig& config_;
  Diagnostics& diagnostics_;
  InferredShapes result_;
  const GraphNode* output_ = nullptr;
  bool autocast_ = false;
  int64_t learned_tokens_ = 0;
  std::string batch_source_, text_tokens_source_, text_tokens_reason_;
  bool used_text_tokens_ = false, used_external_ = false, used_beams_ = false, used_heads_ = false;
  std::map<std::string, int64_t> last_expert_;  // expert module -> its highest expert index
  std::set<std::string> defaults_;              // settings still at an unreported default
  std::set<std::string> warned_ops_;
  bool warned_external_ = false, warned_external_config_ = false, warned_beams_ = false,
       warned_heads_ = false;
};

void Inference::infer(NodeId id) {
  const GraphNode& n = node(id);
  TensorShape& t = shape(id);
  switch (n.kind) {
    case NodeKind::Parameter: {
      for (const int64_t size : n.shape)
        t.dims.push_back({Axis::Other, size});
      if (n.shape.size() == 3) {
        t.dims[0].axis = Axis::Batch;  // learned tokens, e.g. a Q-Former's query tokens
        t.dims[1].axis = Axis::Token;
      }
      if (!t.dims.empty()) t.dims.back().axis = Axis::Feature;
      return;
    }
    case NodeKind::AccumulateGrad:
      if (!n.inputs.empty()) t = shape(n.inputs.front());
      return;
    case NodeKind::Output: {
      if (n.inputs.empty()) return;
      // A lost slice's bound dimensions take the sizes the graph gives the output.
      const TensorShape& last = shape(n.inputs.front());
      if (last.dims.size() == n.shape.size())
        for (size_t i = 0; i < n.shape.size(); ++i)
          if (last.dims[i].bound && n.shape[i] < last.dims[i].size)
            narrow(n.inputs.front(), n.shape.size() - 1 - i, n.shape[i]);
      t = shape(n.inputs.front());
      std::vector<int64_t> sizes;
      for (const Dim& d : t.dims)
        sizes.push_back(d.size);
      if (sizes != n.shape) {
        TensorShape declared;
        for (const int64_t size : n.shape)
          declared.dims.push_back({Axis::Other, size});
        std::string where;
        if (sizes.size() != n.shape.size()) {
          where = std::to_string(sizes.size()) + " dimensions inferred, " +
                  std::to_string(n.shape.size()) + " in the graph";
        } else {
          for (size_t i = 0; i < sizes.size(); ++i)
            if (sizes[i] != n.shape[i])
              where += (where.empty() ? "" : "; ") + std::string("dimension ") + std::to_string(i) +
                       ": " + std::to_string(sizes[i]) + " inferred, " +
                       std::to_string(n.shape[i]) + " in the graph";
        }
        warn(id, "the inferred shape " + t.to_string() + " differs from the graph's " +
                     declared.to_string() + " (" + where + "); the rules used " +
                     settings_summary() +
                     ": one of these, or an operator attribute the graph does not keep, does not "
                     "fit this graph" +
                     rerow_note(t));
      }
      return;
    }
    case NodeKind::Op:
      infer_op(id);
      return;
  }
}

void Inference::infer_op(NodeId id) {
  const GraphNode& n = node(id);
  const std::string& op = n.op;
  const std::vector<NodeId> data = data_inputs(id);
  const NodeId first = n.inputs.empty() ? id : n.inputs.front();
  TensorShape in = n.inputs.empty() ? TensorShape{} : shape(first);
  TensorShape out;

  if (op == "Addmm" || op == "Mm" || op == "Linear") {
    out = linear(id);
  } else if (op == "Bmm") {
    out = bmm(id);
  } else if (op == "NativeLayerNorm" || op == "LayerNorm") {
    if (data.empty()) {
      // The data input needs no gradient: features are the size of the weight.
      const int64_t width = in.dims.empty() ? 1 : in.dims.back().size;
      result_.external_input[id] = true;
      out = external(id, width, width);
    } else {
      out = shape(data.front());
      // The affine parameters have the normalized shape: the data's last dimensions.
      for (const NodeId i : n.inputs) {
        if (!result_.from_parameter[i]) continue;
        const TensorShape& p = shape(i);
        bool fits = p.dims.size() <= out.dims.size();
        for (size_t j = 1; fits && j <= p.dims.size(); ++j) {
          Dim& d = out.dims[out.dims.size() - j];
          const int64_t size = p.dims[p.dims.size() - j].size;
          if (d.bound && d.size > size) {
            narrow(data.front(), j - 1, size);
            d = {d.axis, size};
          }
          fits = d.size == size;
        }
        if (!fits)
          fail(id,
               "expected layer-norm parameters of the data's normalized (last) dimensions, "
               "found " +
                   p.to_string() + " for data " + out.to_string());
      }
    }
    out.dtype = autocast_ ? DType::FP32 : out.dtype;
  } else if (op == "Embedding") {
    // torch.nn.functional.embedding requires a 2-D table [num_embeddings, embedding_dim].
    if (in.dims.size() != 2)
      fail(id, "expected a 2-D embedding table [entries, features], found " + in.to_string());
    out.dims = {
        {Axis::Batch, batch()}, {Axis::Token, text_tokens()}, {Axis::Feature, in.dims[1].size}};
  } else if (is_fused_attention(op)) {
    out = attention(id);
  } else if (keeps_shape(op)) {
    out = in;
    if (op == "ToCopy")
      out.dtype = in.dtype == DType::FP32 ? result_.settings.autocast : DType::FP32;
    if ((op == "Softmax" || op == "LogSoftmax") && autocast_) out.dtype = DType::FP32;
  } else if (is_binary_elementwise(op)) {
    out = n.inputs.size() >= 2 ? broadcast(id, n.inputs) : in;
  } else if (op == "T") {
    out = in;
    std::reverse(out.dims.begin(), out.dims.end());
  } else if (op == "Transpose") {
    out = transpose(id, in);
  } else if (op == "Permute") {
    out = permute(in);
  } else if (is_reshape(op)) {
    out = reshape(id, in);
  } else if (op == "Expand") {
    out = expand(id, in);
  } else if (op == "Unsqueeze") {
    out = unsqueeze(id, in);
  } else if (op == "Squeeze") {
    out = in;
    std::erase_if(out.dims, [](const Dim& d) { return d.size == 1; });
  } else if (op == "Select") {
    out = in;
    const int b = in.find(Axis::Batch);
    if (!out.dims.empty()) out.dims.erase(out.dims.begin() + (b >= 0 ? b : 0));
  } else if (op == "Slice") {
    out = slice(id, first, in);
  } else if (op == "Index") {
    out = index(id, first, in);
  } else if (op == "Cat") {
    out = cat(id);
  } else if (op == "Stack") {
    out = in;
    out.dims.insert(out.dims.begin(), Dim{Axis::Stack, static_cast<int64_t>(n.inputs.size())});
  } else if (op == "Split" || op == "SplitWithSizes" || op == "Chunk") {
    // Each consumer takes one equal part of the features.
    out = in;
    const auto parts = std::max<int64_t>(1, static_cast<int64_t>(n.consumers.size()));
    if (!out.dims.empty()) out.dims.back().size /= parts;
  } else if (op == "Unbind") {
    out = in;
    if (!out.dims.empty()) out.dims.erase(out.dims.begin());
  } else if (op == "Mean" || op == "Sum") {
    out = in;
    if (n.label.ends_with("Backward0")) {
      out.dims.clear();  // over every element
    } else {
      int axis = op == "Sum" ? in.find(Axis::Stack) : -1;
      if (axis < 0) axis = in.find(Axis::Token);
      if (axis < 0) axis = static_cast<int>(in.dims.size()) - 1;
      if (axis >= 0) out.dims.erase(out.dims.begin() + axis);
    }
  } else {
    unknown(id, op);
    out = data.empty() ? in : shape(data.front());
  }
  shape(id) = std::move(out);
}

// The elements of an operator's input from outside the graph, when the graph states them: the
// operator's result reaches an output through a chain of operators, each the only reader of the
// one before and reading nothing else but parameters, that keep the rows (element-wise functions,
// casts, layer norms, views, linear layers, which turn K features into N). Then
// elements(input) = elements(output) x the product of K / N along the chain.
std::optional<std::pair<int64_t, NodeId>> Inference::elements_from_output(
    NodeId id, int64_t in_features, int64_t out_features) const {
  // The fraction numerator / denominator, kept reduced; products that would overflow give up.
  int64_t numerator = 1, denominator = 1;
  const auto scale = [&](int64_t k, int64_t n) {
    if (k <= 0 || n <= 0) return false;
    const int64_t a = std::gcd(k, denominator), b = std::gcd(n, numerator);
    numerator = mul(numerator / b, k / a);
    denominator = mul(denominator / a, n / b);
    return numerator != kSaturated && denominator != kSaturated;
  };
  if (!scale(in_features, out_features)) return std::nullopt;
  NodeId at = id;
  for (size_t step = 0; step < g_.nodes.size(); ++step) {
    const auto& readers = node(at).consumers;
    if (readers.size() != 1) return std::nullopt;
    const NodeId next = readers.front();
    const GraphNode& n = node(next);
    if (n.kind == NodeKind::Output) {
      int64_t elements = 1;
      for (const int64_t size : n.shape)
        elements = mul(elements, size);
      if (elements % denominator != 0) return std::nullopt;
      const int64_t total = mul(elements / denominator, numerator);
      if (total > kMaxTensorElements) return std::nullopt;
      return std::pair(total, next);
    }
    if (n.kind != NodeKind::Op) return std::nullopt;
    const std::vector<NodeId> data = data_inputs(next);
    if (data.size() != 1 || data.front() != at) return std::nullopt;
    if (n.op == "Addmm" || n.op == "Mm" || n.op == "Linear") {
      const LinearOperands operands = linear_operands(g_, result_, next);
      if (!operands.weight_is_parameter) return std::nullopt;
      // K features in, N out, from the weight's layout in the graph (T or not).
      const auto kn = weight_k_n(g_, result_, *operands.weight);
      if (!kn || !scale(kn->first, kn->second)) return std::nullopt;
    } else if (!(keeps_shape(n.op) || is_reshape(n.op) || n.op == "NativeLayerNorm" ||
                 n.op == "LayerNorm" || is_binary_elementwise(n.op))) {
      return std::nullopt;
    }
    at = next;
  }
  return std::nullopt;
}

// The input of operator `id` that needs no gradient, with `in_features` features; the operator
// turns them into `out_features`.
TensorShape Inference::external(NodeId id, int64_t in_features, int64_t out_features) {
  TensorShape t;
  if (const auto found = elements_from_output(id, in_features, out_features);
      found && in_features > 0 && found->first % in_features == 0) {
    const int64_t rows = found->first / in_features;
    // The output's leading sizes when they hold exactly these rows, else one flat row axis.
    const std::vector<int64_t>& declared = node(found->second).shape;
    int64_t leading = 1;
    for (size_t i = 0; i + 1 < declared.size(); ++i)
      leading = mul(leading, declared[i]);
    if (declared.size() >= 2 && leading == rows) {
      for (size_t i = 0; i + 1 < declared.size(); ++i)
        t.dims.push_back({i == 0 ? Axis::Batch : i == 1 ? Axis::Token : Axis::Other, declared[i]});
    } else {
      t.dims.push_back({Axis::Batch, rows});
    }
    t.dims.push_back({Axis::Feature, in_features});
    if (config_.external_tokens && !warned_external_config_) {
      warned_external_config_ = true;
      warn(id,
           "graph config 'external_tokens' not used here: the graph's output gives this "
           "input's size, " +
               t.to_string());
    }
    return t;
  }
  t.dims.push_back({Axis::Batch, batch()});
  if (const auto tokens = external_tokens(id)) t.dims.push_back({Axis::Token, *tokens});
  t.dims.push_back({Axis::Feature, in_features});
  return t;
}

TensorShape Inference::linear(NodeId id) {
  const LinearOperands operands = linear_operands(g_, result_, id);
  if (!operands.weight)
    fail(id,
         "expected a weight operand: a 2-D parameter (through its cast and transpose) or a "
         "second activation");
  const TensorShape w = shape(*operands.weight);
  if (w.dims.size() != 2)
    fail(id, "expected a 2-D weight operand, found " + w.to_string() +
                 (operands.weight_is_parameter ? "" : " (an activation)"));
  const int64_t k = w.dims[0].size;
  const int64_t n_out = w.dims[1].size;
  TensorShape out;
  if (operands.bias) {
    // addmm adds the bias to every row: it broadcasts to [M, N].
    const TensorShape& b = shape(*operands.bias);
    if (b.dims.size() != 1 || (b.dims[0].size != n_out && b.dims[0].size != 1))
      fail(id, "expected a bias of N = " + std::to_string(n_out) + " elements (the weight is " +
                   w.to_string() + ", K x N), found " + b.to_string());
  }
  if (!operands.data) {
    result_.external_input[id] = true;
    out = external(id, k, n_out);
  } else {
    out = shape(*operands.data);
  }
  if (!out.dims.empty() && out.dims.back().bound && out.dims.back().size > k) {
    // A slice of the features whose bounds the graph lost: the product takes K of them.
    narrow(*operands.data, 0, k);
    out.dims.back().size = k;
    out.dims.back().bound = false;
  }
  if (out.dims.empty() || out.dims.back().size != k) {
    // torch.addmm / mm need [M, K] x [K, N]. nn.Linear flattens its input to rows of its last
    // dimension, so a last dimension other than K is refused, as PyTorch refuses it; only an
    // explicit view (whose target the graph does not keep) can make rows of K features of it.
    const bool through_view = operands.data && is_reshape(node(*operands.data).op);
    const int64_t elements = out.numel();
    const std::string weight =
        "the weight is " + w.to_string() + " (K x N) as the product reads it";
    if (!through_view)
      fail(id, "expected a data operand with K = " + std::to_string(k) +
                   " features in its last dimension (" + weight + "), found " + out.to_string());
    if (k <= 0 || elements % k != 0)
      fail(id, "expected a data operand with K = " + std::to_string(k) +
                   " features in its last dimension, or a view of it that divides into rows of " +
                   std::to_string(k) + " (" + weight + "), found " + out.to_string());
    warn(id, "reads " + out.to_string() + " as " + std::to_string(elements / k) +
                 " rows of K = " + std::to_string(k) + " features (" + weight +
                 "): the view before it is taken to reshape it so; nn.Linear would refuse a last "
                 "dimension other than K, so check the weight's shape");
    out.dims = {{Axis::Other, elements / k}, {Axis::Feature, k}};
    out.rerowed_by = id;
  }
  out.dims.back() = {Axis::Feature, n_out};
  return out;
}

TensorShape Inference::bmm(NodeId id) {
  const GraphNode& n = node(id);
  if (n.inputs.size() < 2) {
    if (warned_ops_.insert("Bmm").second)
      warn(id,
           "a batched matmul has an operand that needs no gradient, whose shape the graph does "
           "not give; it is taken to produce its other operand's shape");
    return shape(n.inputs.front());
  }
  const TensorShape& a = shape(n.inputs[0]);
  const TensorShape& b = shape(n.inputs[1]);
  if (a.dims.size() < 2 || b.dims.size() < 2)
    fail(id, "expected batched matrices ([..., m, k] x [..., k, n]), found " + a.to_string() +
                 " x " + b.to_string());
  const int64_t k = a.dims.back().size;
  const int64_t a_batch = a.numel() / std::max<int64_t>(1, mul(a.dims[a.dims.size() - 2].size, k));
  const int64_t b_rows = b.dims[b.dims.size() - 2].size;
  const int64_t b_batch = b.numel() / std::max<int64_t>(1, mul(b_rows, b.dims.back().size));
  if (b_rows != k || a_batch != b_batch)
    fail(id, "expected operands that chain ([..., m, k] x [..., k, n], equal batches), found " +
                 a.to_string() + " x " + b.to_string());
  TensorShape out = a;
  out.dims.back() = b.dims.back();
  return out;
}

// PyTorch's broadcasting: sizes are matched from the last dimension back, and each pair must be
// equal or contain a 1. A dimension bound by a lost slice (Dim::bound) may be smaller than it
// says: matched against a smaller size, it takes that size (the slice must have cut it so).
TensorShape Inference::broadcast(NodeId id, const std::vector<NodeId>& inputs) {
  TensorShape out = shape(inputs.front());
  for (size_t k = 1; k < inputs.size(); ++k) {
    const TensorShape other = shape(inputs[k]);
    std::vector<Dim> dims(std::max(out.dims.size(), other.dims.size()));
    std::vector<std::pair<size_t, int64_t>> narrow_out, narrow_other;  // (from the end, size)
    std::optional<size_t> clash;
    for (size_t i = 0; i < dims.size() && !clash; ++i) {
      const auto pick = [&](const TensorShape& t) -> std::optional<Dim> {
        if (i >= t.dims.size()) return std::nullopt;
        return t.dims[t.dims.size() - 1 - i];
      };
      const auto x = pick(out), y = pick(other);
      Dim d;
      if (!x || !y) {
        d = x ? *x : *y;
      } else if (x->size == y->size) {
        // Equal sizes: the more specific role (a parameter's dimensions have none but features).
        d = (x->axis == Axis::Other || x->axis == Axis::Unit) ? *y : *x;
        d.bound = x->bound && y->bound;
      } else if (x->size == 1 || y->size == 1) {
        d = x->size == 1 ? *y : *x;
      } else if (x->bound && y->size < x->size) {
        d = *y;
        narrow_out.emplace_back(i, y->size);
      } else if (y->bound && x->size < y->size) {
        d = *x;
        narrow_other.emplace_back(i, x->size);
      } else {
        clash = i;
        break;
      }
      dims[dims.size() - 1 - i] = d;
    }
    if (clash) {
      // Equal element counts with the same features: one operand is a view of the other's shape
      // whose target the graph does not keep (a linear layer's flattened rows, an input from
      // outside the graph); the one with more dimensions says more.
      if (out.numel() == other.numel() && !out.dims.empty() && !other.dims.empty() &&
          out.dims.back().size == other.dims.back().size) {
        if (other.dims.size() > out.dims.size()) out.dims = other.dims;
        if (!out.rerowed_by) out.rerowed_by = other.rerowed_by;
        continue;
      }
      const size_t i = *clash;
      const auto size_at = [&](const TensorShape& t) { return t.dims[t.dims.size() - 1 - i].size; };
      const std::string first =
          k == 1 ? " from " + g_.describe(inputs.front()) : " (the operands before it)";
      fail(id,
           "expected operands that broadcast (PyTorch matches sizes from the last dimension "
           "back; each pair must be equal or contain a 1), found " +
               out.to_string() + first + " and " + other.to_string() + " from " +
               g_.describe(inputs[k]) + ": dimension -" + std::to_string(i + 1) + " is " +
               std::to_string(size_at(out)) + " vs " + std::to_string(size_at(other)) +
               rerow_note(out) + rerow_note(other));
    }
    if (k == 1)
      for (const auto& [from_end, size] : narrow_out)
        narrow(inputs.front(), from_end, size);
    for (const auto& [from_end, size] : narrow_other)
      narrow(inputs[k], from_end, size);
    if (other.numel() > out.numel()) out.rows = other.rows;
    if (out.segments.empty()) out.segments = other.segments;
    if (other.dtype == DType::FP32) out.dtype = DType::FP32;
    if (!out.rerowed_by) out.rerowed_by = other.rerowed_by;
    out.dims = std::move(dims);
  }
  return out;
}

// A dimension that a lost slice bound turned out to have `size`: the tensor, and the tensors it
// copies its shape from back to the slice (casts, clones, element-wise functions), take it.
void Inference::narrow(NodeId tensor, size_t from_end, int64_t size) {
  NodeId at = tensor;
  for (size_t step = 0; step < g_.nodes.size(); ++step) {
    TensorShape& t = shape(at);
    if (from_end >= t.dims.size()) return;
    Dim& d = t.dims[t.dims.size() - 1 - from_end];
    if (!d.bound) return;
    d.size = size;
    d.bound = false;
    const GraphNode& n = node(at);
    if (n.op == "Slice") return;
    if (n.kind != NodeKind::Op || !keeps_shape(n.op) || n.inputs.empty()) return;
    at = n.inputs.front();
  }
}

std::string Inference::settings_summary() const {
  const GraphSettings& s = result_.settings;
  std::string text = "batch " + std::to_string(s.batch) + " (" + batch_source_ + ")";
  if (used_text_tokens_)
    text += ", text_tokens " + std::to_string(s.text_tokens) + " (" + text_tokens_source_ + ")";
  if (used_external_)
    text +=
        config_.external_tokens
            ? ", external_tokens " + std::to_string(*config_.external_tokens) + " (graph config)"
            : std::string(", external_tokens (default: the output's tokens)");
  if (used_heads_) text += config_.heads ? ", heads (graph config)" : ", heads (default)";
  if (used_beams_)
    text +=
        ", beams " + std::to_string(s.beams) + (config_.beams ? " (graph config)" : " (default)");
  return text;
}

std::string Inference::rerow_note(const TensorShape& t) const {
  if (!t.rerowed_by) return "";
  return "; " + t.to_string() + " descends from " + g_.describe(*t.rerowed_by) +
         ", which read its input as rows of its weight's K features";
}

// transpose(d0, d1) keeps no dimensions in the graph. Attention code transposes in two idioms:
// the key before a matmul (k.transpose(-2, -1): the last two dimensions) and heads against tokens
// ([b, t, h, d] <-> [b, h, t, d], q.view(b, t, h, d).transpose(1, 2) and back). A transpose of a
// tensor with heads next to its tokens that does not lead to a batched matmul is the second.
TensorShape Inference::transpose(NodeId id, TensorShape in) const {
  const int h = in.find(Axis::Head), t = in.find(Axis::Token);
  if (h >= 0 && t >= 0 && (h == t + 1 || t == h + 1) && !reaches_batched_matmul(id)) {
    std::swap(in.dims[h], in.dims[t]);
  } else if (in.dims.size() >= 2) {
    std::swap(in.dims[in.dims.size() - 1], in.dims[in.dims.size() - 2]);
  }
  return in;
}

// Whether `id`'s result reaches a Bmm through expands, copies and views only (torch.matmul of
// batched operands: expand, reshape, bmm).
bool Inference::reaches_batched_matmul(NodeId id) const {
  NodeId at = id;
  for (int step = 0; step < 6; ++step) {
    const auto& c = node(at).consumers;
    if (c.size() != 1) return false;
    at = c.front();
    const std::string& op = node(at).op;
    if (op == "Bmm") return true;
    if (op != "Expand" && op != "Clone" && op != "ToCopy" && !is_reshape(op)) return false;
  }
  return false;
}

// Fused attention: q [..., Sq, E], k [..., Sk, E], v [..., Sk, Ev] -> [..., Sq, Ev]; the leading
// sizes of k and v equal, q's a multiple of them (grouped-query attention). Inputs that need no
// gradient have no edge; with fewer than three, which ones are missing is not known, and the
// first is taken as the query of a self-attention (keys and values of its shape).
TensorShape Inference::attention(NodeId id) {
  const GraphNode& n = node(id);
  const TensorShape q = shape(n.inputs.front());
  if (q.dims.size() < 2)
    fail(id, "expected a query of at least 2 dimensions [..., tokens, features], found " +
                 q.to_string());
  TensorShape out = q;
  if (n.inputs.size() < 3) {
    if (warned_ops_.insert(n.op).second)
      warn(id, "a fused attention with " + std::to_string(n.inputs.size()) +
                   " input edge(s) instead of query, key and value (the others need no gradient "
                   "and the graph does not say which); taken as a self-attention whose keys and "
                   "values have the first input's shape " +
                   q.to_string());
    return out;
  }
  const TensorShape k = shape(n.inputs[1]), v = shape(n.inputs[2]);
  const auto leading = [](const TensorShape& t) {
    return t.numel() /
           std::max<int64_t>(1, mul(t.dims[t.dims.size() - 2].size, t.dims.back().size));
  };
  const bool ranks = k.dims.size() == q.dims.size() && v.dims.size() == q.dims.size();
  if (!ranks || q.dims.back().size != k.dims.back().size ||
      k.dims[k.dims.size() - 2].size != v.dims[v.dims.size() - 2].size ||
      leading(k) != leading(v) || leading(k) == 0 || leading(q) % leading(k) != 0)
    fail(id,
         "expected query [..., Sq, E], key [..., Sk, E] and value [..., Sk, Ev] of one rank, "
         "with equal leading sizes for key and value (the query's a multiple of them), found " +
             q.to_string() + ", " + k.to_string() + " and " + v.to_string());
  out.dims.back() = v.dims.back();
  return out;
}

TensorShape Inference::reshape(NodeId id, TensorShape in) {
  // (a) merge a replica axis into the batch: copies become rows.
  if (const int r = in.find(Axis::Replica); r >= 0) {
    const int64_t copies = in.dims[r].size;
    in.dims.erase(in.dims.begin() + r);
    if (const int b = in.find(Axis::Batch); b >= 0) {
      in.dims[b].size = mul(in.dims[b].size, copies);
    } else {
      in.dims.insert(in.dims.begin(), Dim{Axis::Batch, copies});
    }
    if (in.rows == Rows::Samples) in.rows = copies == beams() ? Rows::Beams : Rows::Routed;
    return in;
  }
  // (b) merge heads back into features: [.., token, head, head_dim] -> [.., token, features].
  const int h = in.find(Axis::Head);
  if (h >= 1 && h + 1 < static_cast<int>(in.dims.size()) && in.dims[h + 1].axis == Axis::HeadDim &&
      in.dims[h - 1].axis == Axis::Token) {
    in.dims[h] = {Axis::Feature, mul(in.dims[h].size, in.dims[h + 1].size)};
    in.dims.erase(in.dims.begin() + h + 1);
    return in;
  }
  // (c) a view before a permute splits the features into heads.
  const std::string next = first_consumer_op(id);
  if ((next == "Permute" || next == "Transpose") && h < 0 && !in.dims.empty() &&
      in.dims.back().axis == Axis::Feature) {
    const int64_t features = in.dims.back().size;
    const int64_t heads_count = heads(features);
    in.dims.back() = {Axis::Head, heads_count};
    in.dims.push_back({Axis::HeadDim, features / heads_count});
  }
  return in;  // (d) otherwise the view keeps the logical shape
}

TensorShape Inference::permute(TensorShape in) {
  const int h = in.find(Axis::Head);
  const auto swap = [&](int a, int b) { std::swap(in.dims[a], in.dims[b]); };
  if (h >= 2 && in.dims[h - 1].axis == Axis::Token) {
    swap(h - 1, h);  // [b, t, h, d] -> [b, h, t, d]
  } else if (h >= 1 && h + 1 < static_cast<int>(in.dims.size()) &&
             in.dims[h + 1].axis == Axis::Token) {
    swap(h, h + 1);  // [b, h, t, d] -> [b, t, h, d]
  } else if (in.find(Axis::Stack) == 0 && in.dims.size() >= 2) {
    swap(0, 1);  // stacked outputs: [stack, batch, ...] -> [batch, stack, ...]
  }
  return in;
}

bool Inference::replica_is_indexed(NodeId expand_node) const {
  NodeId at = expand_node;
  for (int step = 0; step < 6; ++step) {
    const auto& c = node(at).consumers;
    if (c.size() != 1) return false;
    at = c.front();
    const std::string& op = node(at).op;
    if (op == "Index") return true;
    if (op != "Clone" && !is_reshape(op) && op != "Permute" && op != "Transpose") return false;
  }
  return false;
}

TensorShape Inference::expand(NodeId id, TensorShape in) {
  if (const int r = in.find(Axis::Replica); r >= 0 && in.dims[r].size == 1) {
    // Replicated per beam; the candidates that a beam index picks from only per routed beam.
    in.dims[r].size = replica_is_indexed(id) ? beams() - 1 : beams();
    return in;
  }
  if (const int b = in.find(Axis::Batch); b >= 0 && in.dims[b].size == 1) in.dims[b].size = batch();
  return in;
}

TensorShape Inference::unsqueeze(NodeId id, TensorShape in) {
  const std::string next = first_consumer_op(id);
  const int b = in.find(Axis::Batch);
  if (next == "Expand") {
    in.dims.insert(in.dims.begin() + (b >= 0 ? b + 1 : 0), Dim{Axis::Replica, 1});
  } else if (next == "Cat" || next == "Stack") {
    if (b >= 0) {
      in.dims.insert(in.dims.begin(), Dim{Axis::Stack, 1});
    } else {
      in.dims.insert(in.dims.begin(), Dim{Axis::Batch, 1});  // a selected row, one of a sample's
      in.rows = Rows::Part;
    }
  } else {
    in.dims.push_back({Axis::Unit, 1});
  }
  return in;
}

TensorShape Inference::slice(NodeId id, NodeId input, TensorShape in) {
  // The slices of one tensor, in file order.
  std::vector<NodeId> siblings;
  for (const NodeId c : node(input).consumers)
    if (node(c).op == "Slice") siblings.push_back(c);
  std::sort(siblings.begin(), siblings.end());
  const int t = in.find(Axis::Token);
  int64_t joined = 0;
  for (const int64_t part : in.segments)
    joined += part;
  if (in.segments.size() >= 2 && t >= 0 && joined == in.dims[t].size) {
    // Concatenated tokens: each slice takes back its part, in the concatenation's order.
    const size_t k =
        static_cast<size_t>(std::find(siblings.begin(), siblings.end(), id) - siblings.begin());
    in.dims[t].size = in.segments[std::min(k, in.segments.size() - 1)];
    in.segments.clear();
    return in;
  }
  const int b = in.find(Axis::Batch);
  const auto parts = static_cast<int64_t>(siblings.size());
  if (parts >= 2 && b >= 0 && in.dims[b].size % parts == 0) {
    in.dims[b].size /= parts;  // sibling slices tile the rows: one sample's each
    in.rows = Rows::Part;
    return in;
  }
  // x[:, a:b, :] makes one Slice per dimension it names; after the one a rule above sized, the
  // others are the full slices of the same expression.
  if (node(input).op == "Slice" &&
      std::none_of(in.dims.begin(), in.dims.end(), [](const Dim& d) { return d.bound; }))
    return in;
  // The bounds are lost: every size is an upper bound until an operator needs less of it.
  for (Dim& d : in.dims)
    d.bound = d.size > 1;
  return in;
}

std::optional<bool> Inference::feeds_universal_expert(NodeId id) const {
  // Follow casts and views to a linear layer that takes this tensor as its data operand.
  std::vector<NodeId> frontier = {id};
  for (int depth = 0; depth < 4 && !frontier.empty(); ++depth) {
    std::vector<NodeId> next;
    for (const NodeId at : frontier) {
      for (const NodeId c : node(at).consumers) {
        const std::string& op = node(c).op;
        if (op == "Addmm" || op == "Mm") {
          const LinearOperands operands = linear_operands(g_, result_, c);
          const auto p = operands.weight_is_parameter ? parameter_of(g_, result_, *operands.weight)
                                                      : std::nullopt;
          if (const auto e = p ? expert_of(node(*p).name) : std::nullopt)
            return e->index == last_expert_.at(e->module);
        } else if (op == "ToCopy" || is_reshape(op) || op == "Clone") {
          next.push_back(c);
        }
      }
    }
    frontier = std::move(next);
  }
  return std::nullopt;
}

TensorShape Inference::index(NodeId id, NodeId input, TensorShape in) {
  const int b = std::max(0, in.find(Axis::Batch));
  if (in.dims.empty() || (in.rows != Rows::Beams && in.rows != Rows::Routed)) return in;
  const bool indexed_again = has_consumer(id, "Index");
  Rows rows = in.rows;
  if (in.rows == Rows::Beams) {
    // Every beam of every sample: the routed beams go to the routed experts (and a best one is
    // picked from them later), the universal beam to the universal expert or to the final sum.
    if (const auto universal = feeds_universal_expert(id))
      rows = *universal ? Rows::Samples : Rows::Routed;
    else if (indexed_again)
      rows = Rows::Routed;
    else if (count_consumers(input, "Index") >= 2)
      rows = Rows::Samples;
  } else if (node(input).op == "Index" && !indexed_again) {
    rows = Rows::Samples;  // the best routed beam of each sample
  }
  const int64_t samples = result_.settings.batch;
  in.dims[b].size = rows == Rows::Samples  ? samples
                    : rows == Rows::Routed ? mul(samples, beams() - 1)
                                           : mul(samples, beams());
  in.rows = rows;
  return in;
}

Rows Inference::rows_for(int64_t total, size_t parts) const {
  const int64_t samples = result_.settings.batch;
  const int64_t beams = result_.settings.beams;
  if (static_cast<int64_t>(parts) != samples) return Rows::Part;
  if (total == mul(samples, beams)) return Rows::Beams;
  if (total == mul(samples, beams - 1)) return Rows::Routed;
  return total == samples ? Rows::Samples : Rows::Part;
}

TensorShape Inference::cat(NodeId id) {
  const GraphNode& n = node(id);
  if (n.inputs.empty()) return {};
  std::vector<const TensorShape*> parts;
  for (const NodeId i : n.inputs)
    parts.push_back(&shape(i));
  TensorShape out = *parts.front();
  const size_t rank = out.dims.size();
  if (rank == 0) return out;
  int axis = -1;
  for (size_t i = 0; i < rank && axis < 0; ++i)
    for (const TensorShape* p : parts)
      if (p->dims.size() == rank && p->dims[i].size != out.dims[i].size) axis = static_cast<int>(i);
  const bool all_parts = std::all_of(parts.begin(), parts.end(),
                                     [](const TensorShape* p) { return p->rows == Rows::Part; });
  if (axis < 0) {
    // Equal shapes: along the first size-1 axis (stacking); rows of one sample's parts join
    // along the batch; otherwise along the tokens.
    for (size_t i = 0; i < rank && axis < 0; ++i)
      if (out.dims[i].size == 1) axis = static_cast<int>(i);
    if (axis < 0 && !all_parts) axis = out.find(Axis::Token);
    if (axis < 0) axis = std::max(0, out.find(Axis::Batch));
  }
  int64_t total = 0;
  std::vector<int64_t> segments;
  for (const TensorShape* p : parts) {
    const int64_t size = p->dims.size() == rank ? p->dims[axis].size : 0;
    total = add(total, size);
    if (!p->segments.empty())
      segments.insert(segments.end(), p->segments.begin(), p->segments.end());
    else
      segments.push_back(size);
  }
  out.dims[axis].size = total;
  if (out.dims[axis].axis == Axis::Unit) out.dims[axis].axis = Axis::Other;
  if (out.dims[axis].axis == Axis::Token) out.segments = segments;
  if (out.dims[axis].axis == Axis::Batch && all_parts) out.rows = rows_for(total, parts.size());
  return out;
}

}  // namespace

LinearOperands linear_operands(const AutogradGraph& graph, const InferredShapes& shapes,
                               NodeId op) {
  LinearOperands result;
  std::vector<NodeId> data;
  for (const NodeId i : graph.nodes[op].inputs) {
    const auto p = parameter_of(graph, shapes, i);
    const size_t rank = p ? graph.nodes[*p].shape.size() : 0;
    if (!shapes.from_parameter[i])
      data.push_back(i);
    else if (rank == 2 && !result.weight)
      result.weight = i;
    else if (rank == 1)
      result.bias = i;
  }
  result.weight_is_parameter = result.weight.has_value();
  if (!result.weight && data.size() == 2) {  // a product of two activations
    result.weight = data.back();
    data.pop_back();
  }
  if (!data.empty()) result.data = data.front();
  return result;
}

std::optional<std::pair<int64_t, int64_t>> weight_k_n(const AutogradGraph& graph,
                                                      const InferredShapes& shapes,
                                                      NodeId weight_operand) {
  bool swapped = false;
  NodeId at = weight_operand;
  while (graph.nodes[at].kind != NodeKind::Parameter) {
    const GraphNode& n = graph.nodes[at];
    if (!shapes.from_parameter[at] || n.inputs.empty()) return std::nullopt;
    if (n.op == "T" || n.op == "Transpose" || n.op == "Permute")
      swapped = !swapped;
    else if (n.kind != NodeKind::AccumulateGrad && n.op != "ToCopy" && n.op != "Clone" &&
             n.op != "Contiguous" && n.op != "Alias")
      return std::nullopt;  // a reshape of the weight: its layout is not known
    at = n.inputs.front();
  }
  const std::vector<int64_t>& p = graph.nodes[at].shape;
  if (p.size() != 2) return std::nullopt;
  return swapped ? std::pair(p[1], p[0]) : std::pair(p[0], p[1]);
}

bool is_fused_attention(const std::string& op) {
  return is_one_of(op, {"ScaledDotProductFlashAttention", "ScaledDotProductEfficientAttention",
                        "ScaledDotProductCudnnAttention", "ScaledDotProductFlashAttentionForCpu"});
}

std::optional<NodeId> parameter_of(const AutogradGraph& graph, const InferredShapes& shapes,
                                   NodeId tensor) {
  NodeId at = tensor;
  while (graph.nodes[at].kind != NodeKind::Parameter) {
    if (!shapes.from_parameter[at] || graph.nodes[at].inputs.empty()) return std::nullopt;
    at = graph.nodes[at].inputs.front();
  }
  return at;
}

InferredShapes infer_shapes(const AutogradGraph& graph, const GraphConfig& config,
                            Diagnostics& diagnostics) {
  return Inference(graph, config, diagnostics).run();
}

}  // namespace orrery
