// What shape inference gives the kernel model: every tensor's shape and type, by node.
#pragma once

#include <vector>

#include "formats/torchviz/graph_settings.h"
#include "formats/torchviz/tensor_shape.h"

namespace orrery {

struct InferredShapes {
  std::vector<TensorShape> tensors;  // by node id; parameters and AccumulateGrad: the parameter's
  GraphSettings settings;
  // Nodes whose data input needs no gradient (it comes from outside the graph) and has no
  // input-gradient kernel. Its shape: what the graph states (rows carried through to an output),
  // else [batch, external_tokens, features] (graph config), else [batch, the output's tokens,
  // features] with a warning.
  std::vector<bool> external_input;  // by node id
  std::vector<bool> from_parameter;  // by node id: the tensor is a parameter, cast or viewed
};

}  // namespace orrery
