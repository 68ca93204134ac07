#include "formats/torchviz/shape_inference.h"

#include <algorithm>

#include "formats/torchviz/shape_rules.h"

namespace orrery {
namespace shape_rules {
namespace {

bool casts(const AutogradGraph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(),
                     [](const GraphNode& n) { return n.op == "ToCopy"; });
}

}  // namespace

Inference::Inference(const AutogradGraph& graph, const GraphConfig& config,
                     Diagnostics& diagnostics)
    : g_(graph),
      diagnostics_(diagnostics),
      autocast_(casts(graph)),
      settings_(graph, config, diagnostics, concatenated_learned_tokens(graph), autocast_) {
  result_.tensors.resize(graph.nodes.size());
  result_.external_input.assign(graph.nodes.size(), false);
  result_.from_parameter.assign(graph.nodes.size(), false);
  mark_parameters();
}

InferredShapes Inference::run() {
  for (const NodeId id : g_.forward_order) {
    infer(id);
    validate(id);
  }
  result_.settings = settings_.settings();
  return std::move(result_);
}

// Every tensor: sizes non-negative, at most kMaxTensorElements elements.
void Inference::validate(NodeId id) const {
  const TensorShape& t = result_.tensors[id];
  const bool negative =
      std::any_of(t.dims.begin(), t.dims.end(), [](const Dim& d) { return d.size < 0; });
  if (negative || t.numel() > kMaxTensorElements) {
    std::string sizes;
    for (const Dim& d : t.dims)
      sizes += (sizes.empty() ? "" : " x ") +
               (d.size == kSaturatedSize ? std::string("(overflow)") : std::to_string(d.size));
    fail(id, "expected a tensor of at most 2^40 elements, inferred " + sizes +
                 " (the graph's shapes contradict each other, or a graph-config size is too "
                 "large)");
  }
}

// Parameters, and casts and views of nothing but parameters (a weight cast for autocast, its
// transpose), are parameters to the rules: the other inputs of an operator are its data.
void Inference::mark_parameters() {
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

std::string Inference::first_consumer_op(NodeId id) const {
  const auto& c = node(id).consumers;
  return c.empty() ? "" : node(c.front()).op;
}

std::vector<NodeId> Inference::data_inputs(NodeId id) const {
  std::vector<NodeId> result;
  for (const NodeId i : node(id).inputs)
    if (!result_.from_parameter[i]) result.push_back(i);
  return result;
}

std::optional<NodeId> Inference::chain_end(
    NodeId id, const std::function<bool(const std::string&)>& through) const {
  NodeId at = id;
  for (size_t step = 0; step < g_.nodes.size(); ++step) {
    const auto& readers = node(at).consumers;
    if (readers.size() != 1) return std::nullopt;
    at = readers.front();
    if (!through(node(at).op)) return at;
  }
  return std::nullopt;
}

void Inference::unknown(NodeId id, const std::string& op) {
  if (warned_ops_.insert(op).second)
    warn(id, "no shape rule for autograd function '" + op +
                 "Backward' (first of its kind); its output is taken to have its first input's "
                 "shape and it is costed as an element-wise kernel");
}

std::string Inference::rerow_note(const TensorShape& t) const {
  if (!t.rerowed_by) return "";
  return "; " + t.to_string() + " descends from " + g_.describe(*t.rerowed_by) +
         ", which read its input as rows of its weight's K features";
}

void Inference::infer(NodeId id) {
  const GraphNode& n = node(id);
  TensorShape& t = shape(id);
  switch (n.kind) {
    case NodeKind::Parameter: {
      t = plain_shape(n.shape);
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
    case NodeKind::Output:
      if (!n.inputs.empty()) check_output(id);
      return;
    case NodeKind::Op:
      infer_op(id);
      return;
  }
}

// The output node takes its producer's inferred shape; where it differs from the one the graph
// states, a warning names the dimensions and the settings the rules used.
void Inference::check_output(NodeId id) {
  const GraphNode& n = node(id);
  // A lost slice's bound dimensions take the sizes the graph gives the output.
  const TensorShape& last = shape(n.inputs.front());
  if (last.dims.size() == n.shape.size())
    for (size_t i = 0; i < n.shape.size(); ++i)
      if (last.dims[i].bound && n.shape[i] < last.dims[i].size)
        narrow(n.inputs.front(), n.shape.size() - 1 - i, n.shape[i]);
  TensorShape& t = shape(id);
  t = shape(n.inputs.front());
  std::vector<int64_t> sizes;
  for (const Dim& d : t.dims)
    sizes.push_back(d.size);
  if (sizes == n.shape) return;
  std::string where;
  if (sizes.size() != n.shape.size()) {
    where = std::to_string(sizes.size()) + " dimensions inferred, " +
            std::to_string(n.shape.size()) + " in the graph";
  } else {
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i] != n.shape[i])
        where += (where.empty() ? "" : "; ") + std::string("dimension ") + std::to_string(i) +
                 ": " + std::to_string(sizes[i]) + " inferred, " + std::to_string(n.shape[i]) +
                 " in the graph";
  }
  warn(id, "the inferred shape " + t.to_string() + " differs from the graph's " +
               plain_shape(n.shape).to_string() + " (" + where + "); the rules used " +
               settings_.summary() +
               ": one of these, or an operator attribute the graph does not keep, does not "
               "fit this graph" +
               rerow_note(t));
}

// A layer norm: its data input, checked against the affine parameters (the normalized shape is the
// data's last dimensions); without a data input, an input from outside the graph of the weight's
// width.
TensorShape Inference::layer_norm(NodeId id, const TensorShape& in) {
  const GraphNode& n = node(id);
  const std::vector<NodeId> data = data_inputs(id);
  TensorShape out;
  if (data.empty()) {
    const int64_t width = in.dims.empty() ? 1 : in.dims.back().size;
    result_.external_input[id] = true;
    out = external(id, width, width);
  } else {
    out = shape(data.front());
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
  return out;
}

// Mean and Sum over a dimension the graph does not keep: Sum removes a stack dimension, Mean the
// tokens (else the last dimension); the full reductions (...Backward0) give a scalar.
TensorShape Inference::reduction(NodeId id, TensorShape in) const {
  const GraphNode& n = node(id);
  if (n.label.ends_with("Backward0")) {
    in.dims.clear();
    return in;
  }
  int axis = n.op == "Sum" ? in.find(Axis::Stack) : -1;
  if (axis < 0) axis = in.find(Axis::Token);
  if (axis < 0) axis = static_cast<int>(in.dims.size()) - 1;
  if (axis >= 0) in.dims.erase(in.dims.begin() + axis);
  return in;
}

void Inference::infer_op(NodeId id) {
  const GraphNode& n = node(id);
  const std::string& op = n.op;
  const NodeId first = n.inputs.empty() ? id : n.inputs.front();
  const TensorShape in = n.inputs.empty() ? TensorShape{} : shape(first);
  TensorShape out = in;

  if (is_linear(op)) {
    out = linear(id);
  } else if (op == "Bmm") {
    out = bmm(id);
  } else if (op == "NativeLayerNorm" || op == "LayerNorm") {
    out = layer_norm(id, in);
  } else if (op == "Embedding") {
    // torch.nn.functional.embedding requires a 2-D table [num_embeddings, embedding_dim].
    if (in.dims.size() != 2)
      fail(id, "expected a 2-D embedding table [entries, features], found " + in.to_string());
    out = {};
    out.dims = {{Axis::Batch, settings_.batch()},
                {Axis::Token, settings_.text_tokens()},
                {Axis::Feature, in.dims[1].size}};
  } else if (is_fused_attention(op)) {
    out = attention(id);
  } else if (keeps_shape(op)) {
    if (op == "ToCopy")
      out.dtype = in.dtype == DType::FP32 ? settings_.settings().autocast : DType::FP32;
    if ((op == "Softmax" || op == "LogSoftmax") && autocast_) out.dtype = DType::FP32;
  } else if (is_binary_elementwise(op)) {
    if (n.inputs.size() >= 2) out = broadcast(id, n.inputs);
  } else if (op == "T") {
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
    std::erase_if(out.dims, [](const Dim& d) { return d.size == 1; });
  } else if (op == "Select") {
    const int b = in.find(Axis::Batch);
    if (!out.dims.empty()) out.dims.erase(out.dims.begin() + (b >= 0 ? b : 0));
  } else if (op == "Slice") {
    out = slice(id, first, in);
  } else if (op == "Index") {
    out = index(id, first, in);
  } else if (op == "Cat") {
    out = cat(id);
  } else if (op == "Stack") {
    out.dims.insert(out.dims.begin(), Dim{Axis::Stack, static_cast<int64_t>(n.inputs.size())});
  } else if (op == "Split" || op == "SplitWithSizes" || op == "Chunk") {
    // Each consumer takes one equal part of the features.
    const auto parts = std::max<int64_t>(1, static_cast<int64_t>(n.consumers.size()));
    if (!out.dims.empty()) out.dims.back().size /= parts;
  } else if (op == "Unbind") {
    if (!out.dims.empty()) out.dims.erase(out.dims.begin());
  } else if (op == "Mean" || op == "Sum") {
    out = reduction(id, in);
  } else {
    unknown(id, op);
    const std::vector<NodeId> data = data_inputs(id);
    if (!data.empty()) out = shape(data.front());
  }
  shape(id) = std::move(out);
}

}  // namespace shape_rules

InferredShapes infer_shapes(const AutogradGraph& graph, const GraphConfig& config,
                            Diagnostics& diagnostics) {
  return shape_rules::Inference(graph, config, diagnostics).run();
}

}  // namespace orrery
