// The GPU kernels of one autograd-graph operator in a training step, as compute demands (FLOPs,
// bytes moved, kernel class, data type), from the inferred tensor shapes:
// - forward: the operator's kernel (views, slices and expands have none);
// - input gradient: the kernels computing the gradients of its activation inputs (linear and
//   batched matmul: a GEMM per input that needs one; a zero-filled scatter for slices, selects
//   and indexes; a sum for broadcasts and expands; nothing for views, clones and concatenation);
// - weight gradient: the dW GEMM and bias reduction of a linear layer, the gamma/beta reduction
//   of a layer norm, the zero-fill and index-add of an embedding table.
// FLOPs count 2 per multiply-add; bytes count each operand read and each result written once.
// The formulas per operator are in docs/formats.md.
#pragma once

#include <vector>

#include "core/compute_demand.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/shape_inference.h"

namespace orrery {

struct OpKernels {
  std::vector<ComputeDemand> forward;
  std::vector<ComputeDemand> input_grad;
  std::vector<ComputeDemand> weight_grad;

  bool empty() const { return forward.empty() && input_grad.empty() && weight_grad.empty(); }
};

OpKernels op_kernels(const AutogradGraph& graph, const InferredShapes& shapes, NodeId op);

// The kernels that sum the gradients of a tensor read by `readers` operators (readers - 1
// element-wise additions of its size), run before its producer's backward.
std::vector<ComputeDemand> gradient_accumulation(const TensorShape& tensor, int64_t readers);

}  // namespace orrery
