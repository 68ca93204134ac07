#include "formats/torchviz/graph_operands.h"

#include <vector>

namespace orrery {

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

std::optional<NodeId> parameter_of(const AutogradGraph& graph, const InferredShapes& shapes,
                                   NodeId tensor) {
  NodeId at = tensor;
  while (graph.nodes[at].kind != NodeKind::Parameter) {
    if (!shapes.from_parameter[at] || graph.nodes[at].inputs.empty()) return std::nullopt;
    at = graph.nodes[at].inputs.front();
  }
  return at;
}

}  // namespace orrery
