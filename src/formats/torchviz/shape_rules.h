// Internal to shape inference (shape_inference.h): the per-operator rules and the state they share.
// One concern per file: shape_inference.cpp walks the graph and dispatches, linear_shapes.cpp sizes
// products and inputs from outside the graph, broadcast_shapes.cpp broadcasts and narrows bounds,
// layout_shapes.cpp handles views, permutes, slices and concatenations, beam_routing.cpp the copies
// and row selections of a beam-search mixture of experts.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"
#include "formats/torchviz/graph_operands.h"
#include "formats/torchviz/graph_settings.h"
#include "formats/torchviz/inferred_shapes.h"
#include "formats/torchviz/op_classes.h"
#include "formats/torchviz/tensor_shape.h"

namespace orrery::shape_rules {

class Inference {
 public:
  Inference(const AutogradGraph& graph, const GraphConfig& config, Diagnostics& diagnostics);
  InferredShapes run();

  // shape_inference.cpp: the walk and the dispatch.
 private:
  void warn(NodeId id, const std::string& message) {
    diagnostics_.warn(g_.where(id), g_.describe(id) + ": " + message);
  }
  [[noreturn]] void fail(NodeId id, const std::string& message) const {
    throw InputError(g_.where(id), g_.describe(id) + ": " + message);
  }
  void validate(NodeId id) const;
  void mark_parameters();
  void infer(NodeId id);
  void infer_op(NodeId id);
  void check_output(NodeId id);
  TensorShape layer_norm(NodeId id, const TensorShape& in);
  TensorShape reduction(NodeId id, TensorShape in) const;
  void unknown(NodeId id, const std::string& op);
  std::string rerow_note(const TensorShape& t) const;

  const GraphNode& node(NodeId id) const { return g_.nodes[id]; }
  TensorShape& shape(NodeId id) { return result_.tensors[id]; }
  // The op of the first consumer, or "".
  std::string first_consumer_op(NodeId id) const;
  // Inputs that are activations (not parameters seen through casts and views).
  std::vector<NodeId> data_inputs(NodeId id) const;
  // The end of the chain of single readers from `id` through operators `through` accepts: the
  // first reader it does not accept, or nullopt where the chain forks or ends. No hop limit: the
  // graph is acyclic.
  std::optional<NodeId> chain_end(NodeId id,
                                  const std::function<bool(const std::string&)>& through) const;

  // linear_shapes.cpp
  TensorShape linear(NodeId id);
  TensorShape bmm(NodeId id);
  TensorShape attention(NodeId id);
  TensorShape external(NodeId id, int64_t in_features, int64_t out_features);
  // (elements of the input, the output node) when the graph states them.
  std::optional<std::pair<int64_t, NodeId>> elements_from_output(NodeId id, int64_t in_features,
                                                                 int64_t out_features) const;

  // broadcast_shapes.cpp
  TensorShape broadcast(NodeId id, const std::vector<NodeId>& inputs);
  void narrow(NodeId tensor, size_t from_end, int64_t size);

  // layout_shapes.cpp
  TensorShape transpose(NodeId id, TensorShape in) const;
  bool reaches_batched_matmul(NodeId id) const;
  TensorShape reshape(NodeId id, TensorShape in);
  TensorShape permute(TensorShape in);
  TensorShape unsqueeze(NodeId id, TensorShape in);
  TensorShape slice(NodeId id, NodeId input, TensorShape in);
  TensorShape cat(NodeId id);

  // beam_routing.cpp
  TensorShape expand(NodeId id, TensorShape in);
  bool replica_is_indexed(NodeId expand_node) const;
  TensorShape index(NodeId id, NodeId input, TensorShape in);
  std::optional<bool> feeds_shared_expert(NodeId id);
  Rows rows_of_replicas(int64_t copies);
  Rows rows_for(int64_t total, size_t parts) const;

  const AutogradGraph& g_;
  Diagnostics& diagnostics_;
  InferredShapes result_;
  bool autocast_ = false;
  GraphSettingsResolver settings_;
  std::set<std::string> warned_ops_;
};

// Tokens of learned parameters that the graph concatenates with the sequence (layout_shapes.cpp).
int64_t concatenated_learned_tokens(const AutogradGraph& graph);

}  // namespace orrery::shape_rules
