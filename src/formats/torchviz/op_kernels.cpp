#include "formats/torchviz/op_kernels.h"

#include <algorithm>
#include <map>

namespace orrery {
namespace {

constexpr int64_t kMaskBytes = 1;  // dropout keeps a boolean mask per element
constexpr int64_t kFp32 = 4;

Bytes bytes_of(const TensorShape& t) {
  return static_cast<Bytes>(t.numel() * size_in_bytes(t.dtype));
}

ComputeDemand gemm(int64_t batch, int64_t m, int64_t n, int64_t k, DType dtype) {
  ComputeDemand d;
  d.kind = KernelClass::Gemm;
  d.dtype = dtype;
  d.gemm = {batch, m, n, k};
  d.flop = 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
           static_cast<double>(k);
  d.bytes = static_cast<Bytes>(batch * (m * k + k * n + m * n) * size_in_bytes(dtype));
  return d;
}

ComputeDemand kernel(KernelClass kind, DType dtype, double flop, Bytes bytes) {
  ComputeDemand d;
  d.kind = kind;
  d.dtype = dtype;
  d.flop = flop;
  d.bytes = bytes;
  return d;
}

// Arithmetic per element of the element-wise functions (forward; the backward is alike).
double flop_per_element(const std::string& op) {
  static const std::map<std::string, double> kFlop = {
      {"Gelu", 8},  {"Silu", 4}, {"Tanh", 4},      {"Sigmoid", 4},  {"Exp", 4},
      {"Log", 4},   {"Erf", 8},  {"Sqrt", 2},      {"Rsqrt", 2},    {"Pow", 2},
      {"Sin", 4},   {"Cos", 4},  {"Relu", 1},      {"Neg", 1},      {"Abs", 1},
      {"Clamp", 2}, {"Elu", 4},  {"LeakyRelu", 2}, {"Hardtanh", 2}, {"MaskedFill", 1}};
  const auto it = kFlop.find(op);
  return it == kFlop.end() ? 1 : it->second;
}

bool is_view(const std::string& op) {
  static const std::vector<std::string> kViews = {
      "View",      "UnsafeView", "ReshapeAlias",   "Reshape",   "Flatten", "Permute",
      "Transpose", "T",          "Expand",         "Unsqueeze", "Squeeze", "Slice",
      "Select",    "Split",      "SplitWithSizes", "Chunk",     "Unbind",  "Alias",
      "Contiguous"};
  return std::find(kViews.begin(), kViews.end(), op) != kViews.end();
}

class Builder {
 public:
  Builder(const AutogradGraph& graph, const InferredShapes& shapes, NodeId id)
      : g_(graph), s_(shapes), id_(id), node_(graph.nodes[id]), out_(shapes.tensors[id]) {}

  OpKernels build();

 private:
  const TensorShape& in(NodeId i) const { return s_.tensors[i]; }
  std::vector<NodeId> data_inputs() const {
    std::vector<NodeId> result;
    for (const NodeId i : node_.inputs)
      if (!s_.from_parameter[i]) result.push_back(i);
    return result;
  }
  std::vector<NodeId> parameter_inputs() const {
    std::vector<NodeId> result;
    for (const NodeId i : node_.inputs)
      if (s_.from_parameter[i]) result.push_back(i);
    return result;
  }
  double e() const { return static_cast<double>(out_.numel()); }
  Bytes out_bytes() const { return bytes_of(out_); }

  void linear();
  void bmm();
  void attention();
  void layer_norm();
  void elementwise_binary();
  void scatter_back(NodeId input);  // zeros of the input's size, then the gradient written in

  const AutogradGraph& g_;
  const InferredShapes& s_;
  NodeId id_;
  const GraphNode& node_;
  const TensorShape& out_;
  OpKernels k_;
};

void Builder::linear() {
  const LinearOperands operands = linear_operands(g_, s_, id_);
  if (!operands.weight || out_.dims.empty()) return;
  const TensorShape& w = in(*operands.weight);
  if (w.dims.size() != 2) return;  // shape inference refuses such graphs
  const int64_t k = w.dims[0].size, n = w.dims[1].size;
  const int64_t m = out_.numel() / std::max<int64_t>(1, n);
  const DType dtype = operands.data ? in(*operands.data).dtype : w.dtype;
  k_.forward.push_back(gemm(1, m, n, k, dtype));
  if (operands.data && !s_.external_input[id_])
    k_.input_grad.push_back(gemm(1, m, k, n, dtype));  // dX = dY W
  if (operands.weight_is_parameter)
    k_.weight_grad.push_back(gemm(1, n, k, m, dtype));  // dW = dY^T X
  else
    k_.input_grad.push_back(gemm(1, k, n, m, dtype));  // the second activation's gradient
  if (operands.bias)                                   // a sum of dY over the rows
    k_.weight_grad.push_back(
        kernel(KernelClass::Reduction, dtype, e(), out_bytes() + static_cast<Bytes>(n * kFp32)));
}

void Builder::bmm() {
  if (node_.inputs.size() < 2) return;
  const TensorShape& a = in(node_.inputs[0]);
  if (a.dims.size() < 2 || out_.dims.empty()) return;
  const int64_t m = a.dims[a.dims.size() - 2].size, k = a.dims.back().size;
  const int64_t n = out_.dims.back().size;
  const int64_t batch = a.numel() / std::max<int64_t>(1, m * k);
  k_.forward.push_back(gemm(batch, m, n, k, a.dtype));
  k_.input_grad.push_back(gemm(batch, m, k, n, a.dtype));  // dA = dC B^T
  k_.input_grad.push_back(gemm(batch, k, n, m, a.dtype));  // dB = A^T dC
}

// Fused attention (FlashAttention-2 style; the memory-efficient and cuDNN kernels do the same
// arithmetic), per head of BH = batch x heads, query length Sq, key length Sk, head dims E (query,
// key) and Ev (value):
// - forward: S = Q K^T (2 Sq Sk E) and O = P V (2 Sq Sk Ev), softmax in between on chip:
//   2 BH Sq Sk (E + Ev) FLOP = 4 B H Sq Sk E for E = Ev; reads Q, K, V, writes O and the fp32
//   log-sum-exp of each query row; S and P never reach device memory;
// - backward: S recomputed (2 Sq Sk E), dV = P^T dO (2 Sq Sk Ev), dP = dO V^T (2 Sq Sk Ev),
//   dQ = dS K (2 Sq Sk E), dK = dS^T Q (2 Sq Sk E): 2 BH Sq Sk (3E + 2Ev) FLOP = 10 B H Sq Sk E,
//   2.5 times the forward; reads Q, K, V, O, dO, the log-sum-exp and the row sums of dO * O
//   (written by a pre-pass), writes dQ, dK, dV.
// Both are priced as one GEMM-class kernel of BH (Sq x (E + Ev or 3E + 2Ev)) . (.. x Sk)
// products: tiles of the Sq x Sk score matrix of each head. Softmax exponentials are not counted
// (as FlashAttention's own FLOP figures), nor a causal mask's skipped blocks (the graph does not
// say whether the attention is causal).
void Builder::attention() {
  const TensorShape& q = in(node_.inputs.front());
  const bool all = node_.inputs.size() >= 3;
  const TensorShape& k = all ? in(node_.inputs[1]) : q;
  const TensorShape& v = all ? in(node_.inputs[2]) : q;
  if (q.dims.size() < 2 || k.dims.size() < 2 || v.dims.size() < 2) return;
  const int64_t sq = q.dims[q.dims.size() - 2].size, e = q.dims.back().size;
  const int64_t sk = k.dims[k.dims.size() - 2].size, ev = v.dims.back().size;
  const int64_t heads = q.numel() / std::max<int64_t>(1, sq * e);
  const int64_t b = size_in_bytes(q.dtype);
  const auto lse = static_cast<Bytes>(heads * sq * kFp32);
  const auto qkv = static_cast<Bytes>((q.numel() + k.numel() + v.numel()) * b);
  ComputeDemand forward = gemm(heads, sq, sk, e + ev, q.dtype);
  forward.bytes = qkv + out_bytes() + lse;
  k_.forward.push_back(forward);
  ComputeDemand backward = gemm(heads, sq, sk, 3 * e + 2 * ev, q.dtype);
  backward.bytes = 2 * qkv + 2 * out_bytes() + 3 * lse;
  k_.input_grad.push_back(backward);
}

void Builder::layer_norm() {
  const int64_t features = out_.dims.empty() ? 1 : out_.dims.back().size;
  const std::vector<NodeId> data = data_inputs();
  const Bytes in_bytes =
      data.empty() ? static_cast<Bytes>(out_.numel() * kFp32) : bytes_of(in(data.front()));
  const Bytes params = static_cast<Bytes>(2 * features * kFp32);
  k_.forward.push_back(
      kernel(KernelClass::LayerNorm, DType::FP32, 8 * e(), in_bytes + out_bytes() + params));
  if (!s_.external_input[id_])  // dX: reads x and dY, writes dX
    k_.input_grad.push_back(
        kernel(KernelClass::LayerNorm, DType::FP32, 10 * e(), 2 * in_bytes + out_bytes() + params));
  if (!parameter_inputs().empty())  // d(gamma), d(beta): sums over the rows of x and dY
    k_.weight_grad.push_back(
        kernel(KernelClass::Reduction, DType::FP32, 4 * e(), in_bytes + out_bytes() + params));
}

void Builder::elementwise_binary() {
  const auto& inputs = node_.inputs;
  if (inputs.empty()) return;  // the graph reader refuses operators without inputs
  Bytes read = 0;
  for (const NodeId i : inputs)
    read += bytes_of(in(i));
  if (inputs.size() < 2) read = bytes_of(in(inputs.front()));
  k_.forward.push_back(kernel(KernelClass::Elementwise, out_.dtype, e(), read + out_bytes()));
  const bool product = node_.op == "Mul" || node_.op == "Div";
  for (const NodeId i : inputs) {
    const TensorShape& x = in(i);
    if (product)  // d(a * b)/da = dY * b: reads dY and the other operand
      k_.input_grad.push_back(kernel(KernelClass::Elementwise, out_.dtype,
                                     node_.op == "Div" ? 3 * e() : e(), 3 * out_bytes()));
    if (x.numel() < out_.numel())  // a broadcast operand: its gradient is a sum
      k_.input_grad.push_back(
          kernel(KernelClass::Reduction, x.dtype, e(), out_bytes() + bytes_of(x)));
  }
}

void Builder::scatter_back(NodeId input) {
  const TensorShape& x = in(input);
  k_.input_grad.push_back(kernel(KernelClass::Copy, x.dtype, 0, bytes_of(x) + 2 * out_bytes()));
}

OpKernels Builder::build() {
  const std::string& op = node_.op;
  const NodeId first = node_.inputs.empty() ? id_ : node_.inputs.front();
  const TensorShape& x = in(first);
  if (op == "Addmm" || op == "Mm" || op == "Linear") {
    linear();
  } else if (op == "Bmm") {
    bmm();
  } else if (is_fused_attention(op)) {
    attention();
  } else if (op == "NativeLayerNorm" || op == "LayerNorm") {
    layer_norm();
  } else if (op == "Softmax" || op == "LogSoftmax") {
    k_.forward.push_back(
        kernel(KernelClass::Softmax, out_.dtype, 5 * e(), bytes_of(x) + out_bytes()));
    k_.input_grad.push_back(kernel(KernelClass::Softmax, out_.dtype, 4 * e(), 3 * out_bytes()));
  } else if (op == "NativeDropout" || op == "Dropout") {
    const auto mask = static_cast<Bytes>(out_.numel() * kMaskBytes);
    k_.forward.push_back(
        kernel(KernelClass::Elementwise, out_.dtype, 2 * e(), bytes_of(x) + out_bytes() + mask));
    k_.input_grad.push_back(
        kernel(KernelClass::Elementwise, out_.dtype, e(), 2 * out_bytes() + mask));
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    elementwise_binary();
  } else if (op == "ToCopy") {
    k_.forward.push_back(kernel(KernelClass::Copy, out_.dtype, 0, bytes_of(x) + out_bytes()));
    k_.input_grad.push_back(kernel(KernelClass::Copy, x.dtype, 0, bytes_of(x) + out_bytes()));
  } else if (op == "Clone" || op == "Cat" || op == "Stack") {
    k_.forward.push_back(kernel(KernelClass::Copy, out_.dtype, 0, 2 * out_bytes()));
  } else if (op == "Index") {
    k_.forward.push_back(kernel(KernelClass::Copy, out_.dtype, 0, 2 * out_bytes()));
    scatter_back(first);
  } else if (op == "Slice" || op == "Select") {
    scatter_back(first);
  } else if (op == "Expand") {
    if (out_.numel() > x.numel())
      k_.input_grad.push_back(
          kernel(KernelClass::Reduction, out_.dtype, e(), out_bytes() + bytes_of(x)));
  } else if (op == "Mean" || op == "Sum") {
    const auto n = static_cast<double>(x.numel());
    k_.forward.push_back(kernel(KernelClass::Reduction, x.dtype, n, bytes_of(x) + out_bytes()));
    if (op == "Mean")  // the gradient spread back, divided by the count
      k_.input_grad.push_back(
          kernel(KernelClass::Elementwise, x.dtype, n, bytes_of(x) + out_bytes()));
  } else if (op == "Embedding") {
    const Bytes table = bytes_of(x);
    k_.forward.push_back(kernel(KernelClass::Copy, out_.dtype, 0, 2 * out_bytes()));
    k_.weight_grad.push_back(kernel(KernelClass::Copy, x.dtype, 0, table));  // zero the table
    k_.weight_grad.push_back(kernel(KernelClass::Elementwise, x.dtype, e(), 3 * out_bytes()));
  } else if (op == "Split" || op == "SplitWithSizes" || op == "Chunk" || op == "Unbind") {
    k_.input_grad.push_back(kernel(KernelClass::Copy, x.dtype, 0, 2 * bytes_of(x)));
  } else if (!is_view(op)) {
    // Element-wise functions, and operators without a rule (costed alike).
    const double f = flop_per_element(op);
    k_.forward.push_back(
        kernel(KernelClass::Elementwise, out_.dtype, f * e(), bytes_of(x) + out_bytes()));
    if (!data_inputs().empty())
      k_.input_grad.push_back(
          kernel(KernelClass::Elementwise, out_.dtype, f * e(), bytes_of(x) + 2 * out_bytes()));
  }
  return std::move(k_);
}

}  // namespace

OpKernels op_kernels(const AutogradGraph& graph, const InferredShapes& shapes, NodeId op) {
  if (graph.nodes[op].kind != NodeKind::Op) return {};
  return Builder(graph, shapes, op).build();
}

std::vector<ComputeDemand> gradient_accumulation(const TensorShape& tensor, int64_t readers) {
  std::vector<ComputeDemand> adds;
  for (int64_t r = 1; r < readers; ++r)
    adds.push_back(kernel(KernelClass::Elementwise, tensor.dtype,
                          static_cast<double>(tensor.numel()), 3 * bytes_of(tensor)));
  return adds;
}

}  // namespace orrery
