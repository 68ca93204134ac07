// Structural queries about an operator's operands in an autograd graph: which input is a linear
// layer's weight, data and bias, the weight's [K, N] layout, the parameter behind a tensor. They
// read only `InferredShapes::from_parameter`, so they hold before the shapes are inferred.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/inferred_shapes.h"

namespace orrery {

// The operands of a linear layer (Addmm, Mm): the weight [K, N] (a 2-D parameter seen through its
// cast and transpose, or the second activation of a product of two), the data input (absent when
// it needs no gradient) and the bias. nn.Linear's weight is [N, K] and reaches the product through
// a T; HF transformers' Conv1D weight is [K, N] and reaches it directly.
struct LinearOperands {
  std::optional<NodeId> weight;
  std::optional<NodeId> data;
  std::optional<NodeId> bias;
  bool weight_is_parameter = false;
};
LinearOperands linear_operands(const AutogradGraph& graph, const InferredShapes& shapes, NodeId op);

// [K, N] of a linear layer's weight operand, from the graph's structure alone: the 2-D parameter
// behind it, swapped once for each T, Transpose or Permute on the way. nullopt when a reshape of
// the parameter lies on the way or the operand is not a 2-D parameter.
std::optional<std::pair<int64_t, int64_t>> weight_k_n(const AutogradGraph& graph,
                                                      const InferredShapes& shapes,
                                                      NodeId weight_operand);

// The parameter node behind a parameter-derived tensor (the parameter, its AccumulateGrad, casts
// and views of it), or nullopt.
std::optional<NodeId> parameter_of(const AutogradGraph& graph, const InferredShapes& shapes,
                                   NodeId tensor);

}  // namespace orrery
