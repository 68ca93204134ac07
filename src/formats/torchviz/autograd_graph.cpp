#include "formats/torchviz/autograd_graph.h"

#include <graphviz/cgraph.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <queue>
#include <regex>

#include "core/diagnostics.h"
#include "core/text.h"

namespace orrery {
namespace {

// cgraph reports errors through a global callback; this collects them during one parse.
std::string& parse_errors() {
  static std::string errors;
  return errors;
}

int collect_error(char* message) {
  parse_errors() += message;
  return 0;
}

// Owns a cgraph graph for the duration of a parse.
class DotGraph {
 public:
  DotGraph(const std::string& path, const std::string& text) {
    parse_errors().clear();
    const agusererrf previous = agseterrf(collect_error);
    const agerrlevel_t level = agseterr(AGERR);
    graph_ = agmemread(text.c_str());
    agseterr(level);
    agseterrf(previous);
    if (!graph_ || agerrors() > 0) {
      agreseterrors();
      std::string message =
          trim(parse_errors()).empty() ? "unreadable graph" : std::string(trim(parse_errors()));
      std::smatch m;
      int64_t line = 1;
      if (std::regex_search(message, m, std::regex("line ([0-9]+)"))) line = std::stoll(m[1]);
      if (graph_) agclose(graph_);
      throw InputError({path, line}, "expected a Graphviz DOT digraph: " + message);
    }
    if (!agisdirected(graph_)) {
      agclose(graph_);
      throw InputError({path, 1}, "expected a directed graph (digraph), found an undirected one");
    }
  }
  ~DotGraph() { agclose(graph_); }
  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;

  Agraph_t* get() const { return graph_; }

 private:
  Agraph_t* graph_ = nullptr;
};

// The first line of a label ("AddmmBackward0\n---\nalpha: 1" -> "AddmmBackward0").
std::string first_line(const std::string& label) {
  size_t end = label.find("\\n");
  end = std::min(end, label.find('\n'));
  return std::string(trim(std::string_view(label).substr(0, end)));
}

// Splits "encoder.layer.0.attention.self.query.weight (768, 768)" into name and shape.
bool split_tensor_label(const std::string& label, std::string& name, std::vector<int64_t>& shape) {
  const std::string_view text = trim(label);
  if (text.empty() || text.back() != ')') return false;
  const size_t open = text.rfind('(');
  if (open == std::string_view::npos) return false;
  shape.clear();
  for (const std::string_view item : split(text.substr(open + 1, text.size() - open - 2), ',')) {
    if (trim(item).empty()) continue;
    const auto size = parse_int64(trim(item));
    if (!size || *size < 0) return false;
    shape.push_back(*size);
  }
  std::string_view before = trim(text.substr(0, open));
  if (before.ends_with("\\n")) before.remove_suffix(2);
  name = std::string(trim(before));
  return true;
}

// "AddmmBackward0" -> "Addmm"; names without the suffix are kept.
std::string forward_op(const std::string& label) {
  constexpr std::string_view kSuffix = "Backward";
  std::string_view op = label;
  while (!op.empty() && std::isdigit(static_cast<unsigned char>(op.back())))
    op.remove_suffix(1);
  if (!op.ends_with(kSuffix) || op.size() == kSuffix.size()) return label;
  op.remove_suffix(kSuffix.size());
  return std::string(op);
}

}  // namespace

std::optional<ExpertId> expert_of(std::string_view parameter_name) {
  const auto parts = split(parameter_name, '.');
  for (size_t i = parts.size(); i-- > 1;) {
    const auto index = parse_int64(parts[i]);
    if (!index || parts[i - 1] != "experts") continue;
    ExpertId id;
    for (size_t k = 0; k < i; ++k)
      id.module += (k ? "." : "") + std::string(parts[k]);
    id.index = *index;
    return id;
  }
  return std::nullopt;
}

int64_t layer_index_of(std::string_view parameter_name) {
  static constexpr std::array<std::string_view, 5> kWords = {"layer", "layers", "h", "block",
                                                             "blocks"};
  const auto parts = split(parameter_name, '.');
  std::optional<int64_t> first;
  for (size_t i = 0; i < parts.size(); ++i) {
    const auto index = parse_int64(parts[i]);
    if (!index) continue;
    if (i > 0 && std::find(kWords.begin(), kWords.end(), parts[i - 1]) != kWords.end())
      return *index;
    if (!first) first = index;
  }
  return first.value_or(-1);
}

std::map<std::string, int64_t> AutogradGraph::label_counts() const {
  std::map<std::string, int64_t> counts;
  for (const GraphNode& n : nodes) {
    if (n.kind == NodeKind::Parameter)
      ++counts["(parameter)"];
    else if (n.kind == NodeKind::Output)
      ++counts["(output)"];
    else
      ++counts[n.label];
  }
  return counts;
}

AutogradGraph parse_autograd_graph(const std::string& path, std::string_view content) {
  const DotGraph dot(path, std::string(content));
  Agraph_t* g = dot.get();
  Agsym_t* const label_attribute = agattr(g, AGNODE, const_cast<char*>("label"), nullptr);
  Agsym_t* const fill_attribute = agattr(g, AGNODE, const_cast<char*>("fillcolor"), nullptr);
  const auto attribute = [](Agnode_t* n, Agsym_t* symbol) {
    return std::string(symbol ? agxget(n, symbol) : "");
  };

  // cgraph numbers nodes 1, 2, ... in order of first mention (AGSEQ); ids_ maps those numbers
  // to ours, which skip saved-tensor nodes.
  constexpr NodeId kSkipped = std::numeric_limits<NodeId>::max();
  AutogradGraph graph;
  const auto count = static_cast<size_t>(agnnodes(g));
  std::vector<NodeId> ids(count + 1, kSkipped);
  std::vector<Agnode_t*> by_id;
  graph.nodes.reserve(count);
  by_id.reserve(count);
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    const std::string fill = attribute(n, fill_attribute);
    if (fill == "orange") continue;  // a saved tensor (show_saved=True)
    GraphNode node;
    const std::string label = attribute(n, label_attribute);
    node.label = first_line(label);
    if (fill == "lightblue" || fill == "darkolivegreen1") {
      node.kind = fill == "lightblue" ? NodeKind::Parameter : NodeKind::Output;
      if (!split_tensor_label(label, node.name, node.shape))
        throw InputError({path, 1}, "node " + std::string(agnameof(n)) +
                                        ": expected a tensor label '<name> (<shape>)', found '" +
                                        label + "'");
      if (node.kind == NodeKind::Output) node.name.clear();
    } else if (node.label == "AccumulateGrad") {
      node.kind = NodeKind::AccumulateGrad;
    } else {
      if (node.label.empty())
        throw InputError({path, 1}, "node " + std::string(agnameof(n)) +
                                        ": expected a label naming an autograd function");
      node.op = forward_op(node.label);
    }
    ids.at(AGSEQ(n)) = static_cast<NodeId>(graph.nodes.size());
    by_id.push_back(n);
    graph.nodes.push_back(std::move(node));
  }
  if (graph.nodes.empty())
    throw InputError({path, 1}, "expected a torchviz autograd graph, found no nodes");

  for (NodeId id = 0; id < graph.nodes.size(); ++id) {
    for (Agedge_t* e = agfstin(g, by_id[id]); e; e = agnxtin(g, e)) {
      const NodeId tail = ids.at(AGSEQ(agtail(e)));
      if (tail == kSkipped) continue;  // from a saved tensor
      graph.nodes[id].inputs.push_back(tail);
      graph.nodes[tail].consumers.push_back(id);
      ++graph.edges;
    }
  }

  // Layers: a parameter's from its name, an operator's the largest among its inputs'. The sort
  // below computes them in topological order.
  std::vector<size_t> pending(graph.nodes.size());
  using Entry = std::pair<int64_t, NodeId>;  // (layer, node): smallest first
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
  for (NodeId id = 0; id < graph.nodes.size(); ++id) {
    GraphNode& node = graph.nodes[id];
    pending[id] = node.inputs.size();
    if (node.kind == NodeKind::Parameter) node.layer = layer_index_of(node.name);
    if (pending[id] == 0) ready.emplace(node.layer, id);
  }
  graph.forward_order.reserve(graph.nodes.size());
  while (!ready.empty()) {
    const NodeId id = ready.top().second;
    ready.pop();
    graph.forward_order.push_back(id);
    for (const NodeId c : graph.nodes[id].consumers) {
      GraphNode& consumer = graph.nodes[c];
      consumer.layer = std::max(consumer.layer, graph.nodes[id].layer);
      if (--pending[c] == 0) ready.emplace(consumer.layer, c);
    }
  }
  if (graph.forward_order.size() != graph.nodes.size()) {
    const auto stuck = static_cast<NodeId>(
        std::find_if(pending.begin(), pending.end(), [](size_t p) { return p > 0; }) -
        pending.begin());
    throw InputError({path, 1}, "expected an acyclic autograd graph; node " +
                                    std::string(agnameof(by_id[stuck])) + " (" +
                                    graph.nodes[stuck].label + ") is on a cycle");
  }
  return graph;
}

}  // namespace orrery
