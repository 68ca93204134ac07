// PyTorch's broadcasting, and the narrowing of dimensions bound by a lost slice.
#include <algorithm>

#include "formats/torchviz/shape_rules.h"

namespace orrery::shape_rules {

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

}  // namespace orrery::shape_rules
