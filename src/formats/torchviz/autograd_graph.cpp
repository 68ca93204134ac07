#include "formats/torchviz/autograd_graph.h"

#include <graphviz/cgraph.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <queue>
#include <regex>

#include "core/diagnostics.h"
#include "core/text.h"

// cgraph's lexer keeps what it has read past the end of a graph (the rest of the closing brace's
// line) for the next agread, whatever stream that reads. libcgraph exports this function, which
// drops it, but cgraph.h does not declare it.
extern "C" void aglexbad(void);

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

// cgraph's memory discipline as an arena: allocations come zeroed from large blocks, frees are
// no-ops, and closing the graph releases the blocks at once (agclose then skips its walk over
// every node and edge). For a graph of a million nodes this halves the time cgraph takes.
class Arena {
 public:
  ~Arena() {
    for (void* block : blocks_)
      std::free(block);
  }
  void* alloc(size_t size) {
    size = (size + 15) & ~size_t{15};
    if (size > kBlock / 4) return take(std::calloc(1, size));
    if (size > left_) {
      next_ = static_cast<char*>(take(std::calloc(1, kBlock)));
      left_ = kBlock;
    }
    void* result = next_;
    next_ += size;
    left_ -= size;
    return result;
  }
  void* resize(void* old, size_t old_size, size_t size) {
    if (old && size <= old_size) return old;
    void* result = alloc(size);
    if (old) std::memcpy(result, old, old_size);
    return result;
  }

  static void* open(Agdisc_t*) { return new Arena; }
  static void* alloc(void* arena, size_t size) { return static_cast<Arena*>(arena)->alloc(size); }
  static void* resize(void* arena, void* old, size_t old_size, size_t size) {
    return static_cast<Arena*>(arena)->resize(old, old_size, size);
  }
  static void free(void*, void*) {}
  static void close(void* arena) { delete static_cast<Arena*>(arena); }

 private:
  static constexpr size_t kBlock = size_t{4} << 20;
  void* take(void* block) {
    if (!block) throw std::bad_alloc();
    blocks_.push_back(block);
    return block;
  }
  std::vector<void*> blocks_;
  char* next_ = nullptr;
  size_t left_ = 0;
};

// The text to parse, handed to cgraph's lexer a line at a time (as agmemread does, so that its
// error messages count lines the same way).
struct TextReader {
  const std::string* text = nullptr;
  size_t at = 0;

  static int read(void* channel, char* buffer, int size) {
    auto* r = static_cast<TextReader*>(channel);
    const std::string& t = *r->text;
    if (size <= 0 || r->at >= t.size()) return 0;
    const size_t newline = t.find('\n', r->at);
    const size_t line_end = newline == std::string::npos ? t.size() : newline + 1;
    const size_t n = std::min(line_end - r->at, static_cast<size_t>(size));
    std::memcpy(buffer, t.data() + r->at, n);
    r->at += n;
    return static_cast<int>(n);
  }
};

// The 1-based line of `text` that holds the byte before `at` (the last byte read).
int64_t line_of(const std::string& text, size_t at) {
  const size_t end = std::min(at, text.size());
  return 1 + std::count(text.begin(),
                        text.begin() + static_cast<std::ptrdiff_t>(end > 0 ? end - 1 : 0), '\n');
}

// Owns a cgraph graph for the duration of a parse.
class DotGraph {
 public:
  DotGraph(const std::string& path, const std::string& text) {
    parse_errors().clear();
    const agusererrf previous = agseterrf(collect_error);
    const agerrlevel_t level = agseterr(AGERR);
    static Agmemdisc_t memory = {Arena::open, Arena::alloc, Arena::resize, Arena::free,
                                 Arena::close};
    static Agiodisc_t io = {TextReader::read, AgIoDisc.putstr, AgIoDisc.flush};
    Agdisc_t discipline = {&memory, &AgIdDisc, &io};
    TextReader reader{&text, 0};
    // Each file starts at line 1 with nothing left of another (cgraph counts lines across reads,
    // and its lexer would hand the next parse what followed the last graph: a second graph
    // there was read in place of the next file's).
    aglexbad();
    agreadline(1);
    graph_ = agread(&reader, &discipline);
    const int64_t closing_line = line_of(text, reader.at);
    // Nothing may follow the graph: a second graph, or text that is none, is refused.
    Agraph_t* second = graph_ && agerrors() == 0 ? agread(&reader, &discipline) : nullptr;
    aglexbad();
    agseterr(level);
    agseterrf(previous);
    if (second) {
      agclose(second);
      agclose(graph_);
      throw InputError({path, closing_line},
                       "expected the file to end with the graph that ends here, found a second "
                       "graph after it");
    }
    if (!graph_ || agerrors() > 0) {
      agreseterrors();
      std::string message =
          trim(parse_errors()).empty() ? "unreadable graph" : std::string(trim(parse_errors()));
      std::replace(message.begin(), message.end(), '\n', ' ');
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

// Newlines in a label shown as "\n", so that messages stay on one line.
std::string one_line(const std::string& text) {
  std::string result;
  for (const char c : text) {
    if (c == '\n')
      result += "\\n";
    else if (c != '\r')
      result += c;
  }
  return result;
}

bool is_id_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return std::isalnum(u) || c == '_' || c == '.' || u >= 0x80;
}

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

int64_t dot_node_line(std::string_view text, std::string_view name) {
  static constexpr std::array<std::string_view, 6> kKeywords = {"graph", "digraph",  "node",
                                                                "edge",  "subgraph", "strict"};
  int64_t line = 1, first_mention = 0;
  int depth = 0;  // inside an attribute list [...]
  size_t i = 0;
  const size_t n = text.size();
  // After an ID at the top level: is the next token '[' (an attribute list)?
  const auto attributes_follow = [&](size_t at) {
    while (at < n && std::isspace(static_cast<unsigned char>(text[at])))
      ++at;
    return at < n && text[at] == '[';
  };
  const auto candidate = [&](std::string_view id, int64_t id_line, size_t after) -> bool {
    if (depth > 0 || id != name ||
        std::find(kKeywords.begin(), kKeywords.end(), id) != kKeywords.end())
      return false;
    if (first_mention == 0) first_mention = id_line;
    return attributes_follow(after);
  };
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '"') {
      const int64_t start_line = line;
      std::string id;
      for (++i; i < n && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < n && text[i + 1] == '"') ++i;
        if (text[i] == '\n') ++line;
        id += text[i];
      }
      ++i;
      if (candidate(id, start_line, i)) return start_line;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      for (i += 2; i < n && !(text[i] == '*' && i + 1 < n && text[i + 1] == '/'); ++i)
        if (text[i] == '\n') ++line;
      i += 2;
    } else if (c == '[') {
      ++depth;
      ++i;
    } else if (c == ']') {
      depth = std::max(0, depth - 1);
      ++i;
    } else if (is_id_char(c) ||
               (c == '-' && i + 1 < n &&
                (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '.'))) {
      const size_t start = i;
      for (++i; i < n && is_id_char(text[i]); ++i) {
      }
      if (candidate(text.substr(start, i - start), line, i)) return line;
    } else {
      ++i;
    }
  }
  return first_mention > 0 ? first_mention : 1;
}

SourceLocation AutogradGraph::where(NodeId id) const {
  return {path, text ? dot_node_line(*text, nodes[id].id) : 1};
}

std::string AutogradGraph::describe(NodeId id) const {
  const GraphNode& n = nodes[id];
  const std::string what = n.kind == NodeKind::Parameter ? "parameter"
                           : n.kind == NodeKind::Output  ? "output"
                                                         : one_line(n.label);
  return "node " + n.id + " (" +
         (n.kind == NodeKind::Parameter && !n.name.empty() ? n.name : what) + ")";
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
  AutogradGraph graph;
  graph.path = path;
  graph.text = std::make_shared<const std::string>(content);
  const DotGraph dot(path, *graph.text);
  Agraph_t* g = dot.get();
  Agsym_t* const label_attribute = agattr(g, AGNODE, const_cast<char*>("label"), nullptr);
  Agsym_t* const fill_attribute = agattr(g, AGNODE, const_cast<char*>("fillcolor"), nullptr);
  const auto attribute = [](Agnode_t* n, Agsym_t* symbol) {
    return std::string(symbol ? agxget(n, symbol) : "");
  };

  // cgraph numbers nodes 1, 2, ... in order of first mention (AGSEQ); ids_ maps those numbers
  // to ours, which skip saved-tensor nodes.
  constexpr NodeId kSkipped = std::numeric_limits<NodeId>::max();
  const auto count = static_cast<size_t>(agnnodes(g));
  std::vector<NodeId> ids(count + 1, kSkipped);
  std::vector<Agnode_t*> by_id;
  graph.nodes.reserve(count);
  by_id.reserve(count);
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    const std::string fill = attribute(n, fill_attribute);
    if (fill == "orange") continue;  // a saved tensor (show_saved=True)
    GraphNode node;
    node.id = agnameof(n);
    const auto fail = [&](const std::string& message) {
      throw InputError({path, dot_node_line(*graph.text, node.id)},
                       "node " + node.id + ": " + message);
    };
    const std::string label = attribute(n, label_attribute);
    node.label = first_line(label);
    if (fill == "lightblue" || fill == "darkolivegreen1") {
      node.kind = fill == "lightblue" ? NodeKind::Parameter : NodeKind::Output;
      if (!split_tensor_label(label, node.name, node.shape))
        fail("expected a tensor label '<name> (<shape>)', found '" + one_line(label) + "'");
      int64_t elements = 1;
      for (const int64_t size : node.shape)
        if (__builtin_mul_overflow(elements, size, &elements) || elements > kMaxTensorElements)
          fail("expected a tensor shape of at most 2^40 elements, found '" + one_line(label) + "'");
      if (node.kind == NodeKind::Output) node.name.clear();
    } else if (node.label == "AccumulateGrad") {
      node.kind = NodeKind::AccumulateGrad;
    } else {
      if (node.label.empty()) fail("expected a label naming an autograd function");
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
  // What torchviz always draws: every autograd function has an input that needs a gradient (else
  // it would not exist), every AccumulateGrad the parameter it accumulates into, and parameters
  // are leaves.
  for (NodeId id = 0; id < graph.nodes.size(); ++id) {
    const GraphNode& node = graph.nodes[id];
    const auto fail = [&](const std::string& message) {
      throw InputError(graph.where(id), graph.describe(id) + ": " + message);
    };
    if (node.kind == NodeKind::Op && node.inputs.empty())
      fail(
          "expected at least one input edge (an autograd function exists only for an input "
          "that needs a gradient); is an edge missing?");
    if (node.kind == NodeKind::AccumulateGrad &&
        (node.inputs.size() != 1 || graph.nodes[node.inputs[0]].kind != NodeKind::Parameter))
      fail("expected exactly one input edge, from the parameter it accumulates into");
    if (node.kind == NodeKind::Parameter && !node.inputs.empty())
      fail("expected no input edges: a parameter is a leaf of the graph");
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
    // Every node left has an input left; walking inputs backwards from one must repeat a node,
    // and the walk from that node's first visit is a cycle.
    NodeId at = static_cast<NodeId>(
        std::find_if(pending.begin(), pending.end(), [](size_t p) { return p > 0; }) -
        pending.begin());
    std::vector<size_t> visited(graph.nodes.size(), std::numeric_limits<size_t>::max());
    std::vector<NodeId> walk;
    while (visited[at] == std::numeric_limits<size_t>::max()) {
      visited[at] = walk.size();
      walk.push_back(at);
      for (const NodeId i : graph.nodes[at].inputs) {
        if (pending[i] > 0) {
          at = i;
          break;
        }
      }
    }
    std::vector<NodeId> cycle(walk.begin() + static_cast<ptrdiff_t>(visited[at]), walk.end());
    std::reverse(cycle.begin(), cycle.end());  // in forward (edge) direction
    const NodeId first = *std::min_element(cycle.begin(), cycle.end());  // in file order
    std::rotate(cycle.begin(), std::find(cycle.begin(), cycle.end(), first), cycle.end());
    std::string path_text;
    for (size_t k = 0; k < cycle.size() && k < 8; ++k)
      path_text += graph.nodes[cycle[k]].id + " -> ";
    path_text += cycle.size() > 8 ? "..." : graph.nodes[first].id;
    throw InputError(graph.where(first), "expected an acyclic autograd graph; " +
                                             graph.describe(first) +
                                             " is on a cycle: " + path_text);
  }
  return graph;
}

}  // namespace orrery
