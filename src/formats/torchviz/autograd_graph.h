// A PyTorch autograd graph as torchviz's make_dot draws it, read from Graphviz DOT with cgraph.
//
// Node kinds: operator nodes (label = autograd function, e.g. "AddmmBackward0"), parameters
// (fillcolor lightblue, label "<name> (<shape>)"), AccumulateGrad nodes (one per parameter that
// receives a gradient) and output tensors (fillcolor darkolivegreen1, label " (<shape>)").
// Saved-tensor nodes (fillcolor orange, make_dot(show_saved=True)) are ignored. Edges run from
// producer to consumer, i.e. in forward data-flow direction, and an operator's incoming edges are
// in the order of its arguments (torchviz walks next_functions in order; cgraph keeps it).
//
// Nodes keep the order of their first mention in the file: torchviz writes the graph depth-first
// from the output, following each operator's inputs in argument order.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"

namespace orrery {

using NodeId = uint32_t;

enum class NodeKind : uint8_t { Op, Parameter, AccumulateGrad, Output };

// Tensors larger than this (elements) are refused: 4 TiB at fp32, beyond any accelerator's memory.
// Bounding every tensor keeps element counts, bytes and FLOPs far from 64-bit overflow.
constexpr int64_t kMaxTensorElements = int64_t{1} << 40;

struct GraphNode {
  NodeKind kind = NodeKind::Op;
  std::string id;                 // the DOT node name (torchviz: a CPython object address)
  std::string label;              // the label's first line, e.g. "AddmmBackward0"
  std::string op;                 // Op: the forward operator, "Addmm" for "AddmmBackward0"
  std::string name;               // Parameter: its name ("" when make_dot was given no params)
  std::vector<int64_t> shape;     // Parameter and Output
  std::vector<NodeId> inputs;     // producers, in argument order
  std::vector<NodeId> consumers;  // in order of their first mention
  // Model layer: the largest layer index among the parameters it depends on (a parameter's from
  // its name, e.g. 6 for "encoder.layer.6.attention..."); -1 for the prologue.
  int64_t layer = -1;
};

struct AutogradGraph {
  std::vector<GraphNode> nodes;       // in order of first mention
  std::vector<NodeId> forward_order;  // topological; layer by layer, then file order
  size_t edges = 0;
  std::string path;                         // the file, for messages
  std::shared_ptr<const std::string> text;  // its DOT text, to locate nodes in messages

  // Node count per label (parameters under "(parameter)", outputs under "(output)").
  std::map<std::string, int64_t> label_counts() const;
  // Where node `id` is defined in the file (its `name [...]` statement, else its first mention).
  SourceLocation where(NodeId id) const;
  // "node 140193 (AddmmBackward0)" for messages.
  std::string describe(NodeId id) const;
};

// Throws InputError ("path:line: expected ...") for text that is not a DOT digraph, for a graph
// with a cycle (naming a node on it), for parameter or output labels without a shape (or with one
// too large), and for operators or AccumulateGrad nodes without the inputs they must have.
AutogradGraph parse_autograd_graph(const std::string& path, std::string_view content);

// The 1-based line of DOT `text` where node `name` is defined: its first statement with an
// attribute list (`name [label=...]`), else its first mention (e.g. in an edge), else 1.
int64_t dot_node_line(std::string_view text, std::string_view name);

// An expert of a mixture of experts, from a parameter name with an `experts.<k>` component:
// "encoder.layer.7.experts.experts.2.dense1.weight" -> {"encoder.layer.7.experts.experts", 2}.
struct ExpertId {
  std::string module;  // the expert list
  int64_t index = 0;   // the expert's position in it
};
std::optional<ExpertId> expert_of(std::string_view parameter_name);

// The layer index in a parameter name: the number after "layer", "layers", "h", "block" or
// "blocks" ("encoder.layer.6.output.dense.weight" -> 6), else the first numeric component, else -1.
int64_t layer_index_of(std::string_view parameter_name);

}  // namespace orrery
