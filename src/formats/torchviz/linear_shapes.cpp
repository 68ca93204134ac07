// Linear layers, batched matmuls and fused attention; inputs from outside the graph.
#include <numeric>

#include "formats/torchviz/shape_rules.h"

namespace orrery::shape_rules {

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
    numerator = saturating_mul(numerator / b, k / a);
    denominator = saturating_mul(denominator / a, n / b);
    return numerator != kSaturatedSize && denominator != kSaturatedSize;
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
        elements = saturating_mul(elements, size);
      if (elements % denominator != 0) return std::nullopt;
      const int64_t total = saturating_mul(elements / denominator, numerator);
      if (total > kMaxTensorElements) return std::nullopt;
      return std::pair(total, next);
    }
    if (n.kind != NodeKind::Op) return std::nullopt;
    const std::vector<NodeId> data = data_inputs(next);
    if (data.size() != 1 || data.front() != at) return std::nullopt;
    if (is_linear(n.op)) {
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
      leading = saturating_mul(leading, declared[i]);
    if (declared.size() >= 2 && leading == rows) {
      for (size_t i = 0; i + 1 < declared.size(); ++i)
        t.dims.push_back({i == 0 ? Axis::Batch : i == 1 ? Axis::Token : Axis::Other, declared[i]});
    } else {
      t.dims.push_back({Axis::Batch, rows});
    }
    t.dims.push_back({Axis::Feature, in_features});
    settings_.external_tokens_unused(id, t.to_string());
    return t;
  }
  t.dims.push_back({Axis::Batch, settings_.batch()});
  if (const auto tokens = settings_.external_tokens(id)) t.dims.push_back({Axis::Token, *tokens});
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
  const int64_t a_batch =
      a.numel() / std::max<int64_t>(1, saturating_mul(a.dims[a.dims.size() - 2].size, k));
  const int64_t b_rows = b.dims[b.dims.size() - 2].size;
  const int64_t b_batch =
      b.numel() / std::max<int64_t>(1, saturating_mul(b_rows, b.dims.back().size));
  if (b_rows != k || a_batch != b_batch)
    fail(id, "expected operands that chain ([..., m, k] x [..., k, n], equal batches), found " +
                 a.to_string() + " x " + b.to_string());
  TensorShape out = a;
  out.dims.back() = b.dims.back();
  return out;
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
           std::max<int64_t>(1, saturating_mul(t.dims[t.dims.size() - 2].size, t.dims.back().size));
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

}  // namespace orrery::shape_rules
