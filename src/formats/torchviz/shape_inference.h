// Shapes and data types of every tensor of a torchviz autograd graph, inferred in forward order
// with one rule per operator from the parameter shapes, the output shape and the graph config.
//
// The graph keeps no operator attributes (view targets, permutations, slice bounds, index
// lengths), so every dimension carries a role (tensor_shape.h), and an operator whose attribute is
// lost acts on the dimension whose role its idiom names: a view before a permute splits the
// features into attention heads, a slice of concatenated tokens takes back one part, and so on.
// What no operator's semantics can give (the copies of an expand, the rows of an advanced index in
// a beam-search mixture of experts) comes from the graph config (graph_settings.h), each default
// warned. docs/formats.md lists every rule. The rules live by concern: shape_rules.h declares them;
// linear_shapes.cpp, broadcast_shapes.cpp, layout_shapes.cpp and beam_routing.cpp define them.
#pragma once

#include "core/diagnostics.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"
#include "formats/torchviz/graph_operands.h"
#include "formats/torchviz/graph_settings.h"
#include "formats/torchviz/inferred_shapes.h"
#include "formats/torchviz/op_classes.h"
#include "formats/torchviz/tensor_shape.h"

namespace orrery {

// Warnings (each default the graph needed, each operator without a rule, a linear layer that reads
// its input through a view as rows of another width, an output shape that differs from the
// graph's) go to `diagnostics`, located at the node in `graph.path`. Throws InputError naming the
// node's line when the graph contradicts itself as PyTorch would refuse it (an operator without
// the operands its function has; operands that do not broadcast, chain or fit the weight; an
// embedding table that is not 2-D) or a tensor would exceed kMaxTensorElements (e.g. from
// graph-config sizes).
InferredShapes infer_shapes(const AutogradGraph& graph, const GraphConfig& config,
                            Diagnostics& diagnostics);

}  // namespace orrery
