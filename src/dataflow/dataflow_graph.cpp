#include "dataflow/dataflow_graph.h"

#include <cmath>
#include <map>
#include <queue>
#include <string>
#include <utility>
#include <vector>

namespace orrery {
namespace {

std::string label(const DataflowKernel& k) {
  return "kernel '" + k.name + "' (id " + std::to_string(k.id) + ")";
}

bool is_elementwise(const DataflowKernel& k) {
  return k.variant == KernelVariant::Elementwise ||
         k.variant == KernelVariant::ElementwiseInputInput;
}

std::string_view axis_name(TensorAxis a) {
  switch (a) {
    case TensorAxis::Outer:
      return "outer";
    case TensorAxis::M:
      return "M";
    case TensorAxis::K:
      return "K";
    case TensorAxis::N:
      return "N";
    case TensorAxis::None:
      return "none";
  }
  return "?";
}

// Summarises the disagreements of one derived field in a single warning.
class Disagreements {
 public:
  explicit Disagreements(std::string field) : field_(std::move(field)) {}
  void add(const SourceLocation& where, const std::string& what) {
    if (count_++ == 0) {
      first_where_ = where;
      first_ = what;
    }
  }
  void report(Diagnostics& d) const {
    if (count_ == 0) return;
    std::string message = field_ + ": " + first_;
    if (count_ > 1) message += " (and " + std::to_string(count_ - 1) + " more)";
    d.warn(first_where_, message + "; the recomputed values are used");
  }

 private:
  std::string field_;
  int64_t count_ = 0;
  SourceLocation first_where_;
  std::string first_;
};

void check_kernel(DataflowKernel& k, int64_t word, const std::string& file, Diagnostics& d) {
  const SourceLocation at{file, k.line};
  if (k.outer < 1) {
    d.warn(at, label(k) + ": outer missing or < 1; taken as 1");
    k.outer = 1;
  }
  if (k.m < 1 || k.n < 1) throw InputError(at, label(k) + ": expected M >= 1 and N >= 1");
  constexpr int64_t kLargest = 2147483647;  // keeps products of sizes exact in 64 bits
  if (k.outer > kLargest || k.m > kLargest || k.k > kLargest || k.n > kLargest)
    throw InputError(at, label(k) + ": expected outer, M, K and N <= 2147483647");
  if (is_elementwise(k)) {
    k.k = 1;
  } else if (k.k < 1) {
    throw InputError(at, label(k) + ": expected K >= 1");
  }
  if (is_elementwise(k) && (k.tiling == TensorAxis::K || k.sharding == TensorAxis::K))
    throw InputError(at, label(k) + ": element-wise kernels have no K axis to tile or shard");
  if (k.sharding && *k.sharding != TensorAxis::None && *k.sharding == k.tiling)
    throw InputError(at, label(k) + ": expected different sharding and tiling axes, found " +
                             std::string(axis_name(k.tiling)) + " for both");
  if (k.num_input < 0) throw InputError(at, label(k) + ": expected num_input >= 0");
  for (const double v : {k.input1_bytes, k.input2_bytes, k.weight_bytes, k.output_bytes,
                         k.memory_bytes, k.collective_bytes})
    if (!std::isfinite(v) || v < 0)
      throw InputError(at, label(k) + ": expected finite tensor sizes >= 0");
  if (k.output_bytes == 0) {
    k.output_bytes = static_cast<double>(k.outer) * static_cast<double>(k.m) *
                     static_cast<double>(k.n) * static_cast<double>(word);
    d.warn(at, label(k) + ": no output_tensor_size; taking outer*M*N*word = " +
                   std::to_string(static_cast<int64_t>(k.output_bytes)) + " bytes");
  }
  if (k.memory_bytes < 0) throw InputError(at, label(k) + ": expected memory_size >= 0");
}

// DFModel's generators write each tensor size as the full tensor's bytes from the kernel's
// dimensions (seed 004 and DFModel's SN30 example agree to float32 rounding): the output
// outer M N word; an element-wise kernel's inputs the same; a GEMM's operands outer M K word and
// K N word (the input of a GEMM with a weight is K N word, shared by the outer products: the
// Q/K/V projections' outer is the heads). The first size that matches none of these, as
// "input_tensor_size 5 B, expected K*N*word = 104857600 B", or "".
std::string tensor_size_disagreement(const DataflowKernel& k, int64_t word) {
  const double o = static_cast<double>(k.outer), m = static_cast<double>(k.m),
               kk = static_cast<double>(k.k), n = static_cast<double>(k.n),
               w = static_cast<double>(word);
  const double mn = o * m * n * w, mk = m * kk * w, kn = kk * n * w;
  const auto near = [](double value, double want) {
    return std::abs(value - want) <= 1e-6 * std::max(1.0, want);
  };
  struct Expect {
    double value;
    const char* field;
    std::vector<std::pair<const char*, double>> sizes;  // what the field may be
  };
  const bool two = k.variant == KernelVariant::GemmInputInput ||
                   k.variant == KernelVariant::ElementwiseInputInput;
  const char* first = two ? "input_tensor_1_size" : "input_tensor_size";
  std::vector<Expect> expects = {{k.output_bytes, "output_tensor_size", {{"outer*M*N*word", mn}}}};
  switch (k.variant) {
    case KernelVariant::Elementwise:
      expects.push_back({k.input1_bytes, first, {{"outer*M*N*word", mn}}});
      break;
    case KernelVariant::ElementwiseInputInput:
      expects.push_back({k.input1_bytes, first, {{"outer*M*N*word", mn}}});
      expects.push_back({k.input2_bytes, "input_tensor_2_size", {{"outer*M*N*word", mn}}});
      break;
    case KernelVariant::GemmInputWeight:
      expects.push_back({k.input1_bytes, first, {{"K*N*word", kn}, {"outer*K*N*word", o * kn}}});
      expects.push_back(
          {k.weight_bytes, "weight_tensor_size", {{"outer*M*K*word", o * mk}, {"M*K*word", mk}}});
      break;
    case KernelVariant::GemmInputInput:
      for (const auto& [value, field] :
           {std::pair{k.input1_bytes, first}, std::pair{k.input2_bytes, "input_tensor_2_size"}})
        expects.push_back({value,
                           field,
                           {{"outer*M*K*word", o * mk},
                            {"outer*K*N*word", o * kn},
                            {"M*K*word", mk},
                            {"K*N*word", kn}}});
      break;
  }
  for (const Expect& e : expects) {
    if (e.value == 0) continue;  // absent (the output's is filled in above)
    bool fits = false;
    std::string list;
    for (const auto& [name, size] : e.sizes) {
      fits = fits || near(e.value, size);
      list += (list.empty() ? "" : " or ") + std::string(name) + " = " +
              std::to_string(static_cast<int64_t>(size)) + " B";
    }
    if (!fits)
      return std::string(e.field) + " " + std::to_string(static_cast<int64_t>(e.value)) +
             " B, expected " + list;
  }
  return "";
}

}  // namespace

DataflowGraph DataflowGraph::build(DataflowProblem& problem, Diagnostics& diagnostics) {
  DataflowGraph g;
  const std::map<int64_t, size_t> index_of = g.index_kernels(problem, diagnostics);
  g.connect(problem, index_of);
  g.level_kernels(problem);
  g.order_kernels(problem);
  g.compare_derived_fields(problem, diagnostics);
  return g;
}

// Checks each kernel and indexes the kernels by id (unique, and given when connections need it).
std::map<int64_t, size_t> DataflowGraph::index_kernels(DataflowProblem& problem,
                                                       Diagnostics& diagnostics) {
  const std::string& file = problem.source;
  auto& kernels = problem.kernels;
  const size_t n = kernels.size();
  std::map<int64_t, size_t> index_of;
  std::string size_mismatch;
  SourceLocation size_mismatch_at;
  int64_t size_mismatches = 0;
  for (size_t i = 0; i < n; ++i) {
    check_kernel(kernels[i], problem.run.word_bytes, file, diagnostics);
    if (const std::string what = tensor_size_disagreement(kernels[i], problem.run.word_bytes);
        !what.empty() && size_mismatches++ == 0) {
      size_mismatch = label(kernels[i]) + ": " + what;
      size_mismatch_at = {file, kernels[i].line};
    }
    const auto [it, fresh] = index_of.emplace(kernels[i].id, i);
    if (!fresh && kernels[i].id == 0)
      throw InputError({file, kernels[i].line},
                       label(kernels[i]) + ": expected an id (connections name kernels by id), " +
                           "found none (or 0), like '" + kernels[it->second].name + "'");
    if (!fresh)
      throw InputError({file, kernels[i].line},
                       "expected unique kernel ids, found id " + std::to_string(kernels[i].id) +
                           " again (first: '" + kernels[it->second].name + "')");
    has_backward_ = has_backward_ || kernels[i].backward;
  }
  if (size_mismatches > 0)
    diagnostics.warn(
        size_mismatch_at,
        size_mismatch + " (word " + std::to_string(problem.run.word_bytes) + ")" +
            (size_mismatches > 1 ? " (and " + std::to_string(size_mismatches - 1) + " more kernels)"
                                 : std::string()) +
            ": DFModel writes full tensor bytes from outer, M, K, N and word; "
            "Orrery uses output_tensor_size as given and reads no other size");

  return index_of;
}

// The edges, each from an existing kernel to another, never from backward to forward.
void DataflowGraph::connect(const DataflowProblem& problem,
                            const std::map<int64_t, size_t>& index_of) {
  const std::string& file = problem.source;
  const auto& kernels = problem.kernels;
  const size_t n = kernels.size();
  in_.resize(n);
  out_.resize(n);
  std::map<int64_t, size_t> edge_ids;
  for (size_t e = 0; e < problem.edges.size(); ++e) {
    const DataflowEdge& edge = problem.edges[e];
    const SourceLocation at{file, edge.line};
    const std::string name = "connection " + std::to_string(edge.id);
    if (!edge_ids.emplace(edge.id, e).second)
      throw InputError(
          at, "expected unique connection ids, found id " + std::to_string(edge.id) + " again");
    const auto from = index_of.find(edge.from_id), to = index_of.find(edge.to_id);
    if (from == index_of.end() || to == index_of.end()) {
      // A kernel without an id (0 in the file's proto3 encoding) is the likelier mistake.
      const auto unnamed = index_of.find(0);
      if (unnamed != index_of.end() && edge.from_id != 0 && edge.to_id != 0)
        throw InputError({file, kernels[unnamed->second].line},
                         label(kernels[unnamed->second]) +
                             ": expected an id (connections name kernels by id), found none "
                             "(or 0); " +
                             name + " names kernel id " +
                             std::to_string(from == index_of.end() ? edge.from_id : edge.to_id) +
                             ", which no kernel has");
      throw InputError(at, name + ": expected startIdx and endIdx to name kernel ids, found " +
                               std::to_string(edge.from_id) + " -> " + std::to_string(edge.to_id));
    }
    if (from->second == to->second)
      throw InputError(at, name + ": expected an acyclic graph, found a connection from " +
                               label(kernels[from->second]) + " to itself");
    if (kernels[from->second].backward && !kernels[to->second].backward)
      throw InputError(at, name +
                               ": expected forward kernels before backward ones, found a "
                               "connection from backward " +
                               label(kernels[from->second]) + " to forward " +
                               label(kernels[to->second]));
    edges_.push_back({from->second, to->second, kernels[from->second].output_bytes, 1});
    out_[from->second].push_back(e);
    in_[to->second].push_back(e);
  }
}

// Each kernel's level and each edge's buffer depth; a cycle is an error at one of its kernels.
void DataflowGraph::level_kernels(const DataflowProblem& problem) {
  const std::string& file = problem.source;
  const auto& kernels = problem.kernels;
  const size_t n = kernels.size();
  // Kahn's algorithm in rounds: every kernel that becomes free in round r has level r.
  levels_.assign(n, -1);
  std::vector<size_t> indegree(n);
  for (size_t i = 0; i < n; ++i)
    indegree[i] = in_[i].size();
  std::vector<size_t> frontier;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) frontier.push_back(i);
  size_t placed = 0;
  for (int64_t round = 0; !frontier.empty(); ++round) {
    std::vector<size_t> next;
    for (const size_t k : frontier) {
      levels_[k] = round;
      ++placed;
      for (const size_t e : out_[k])
        if (--indegree[edges_[e].to] == 0) next.push_back(edges_[e].to);
    }
    frontier = std::move(next);
  }
  if (placed != n) {
    for (size_t i = 0; i < n; ++i)
      if (levels_[i] < 0)
        throw InputError({file, kernels[i].line},
                         "expected an acyclic graph, found a cycle through " + label(kernels[i]));
  }
  for (GraphEdge& e : edges_)
    e.buffer_depth = levels_[e.to] - levels_[e.from] + 1;
}

void DataflowGraph::order_kernels(const DataflowProblem& problem) {
  const auto& kernels = problem.kernels;
  const size_t n = kernels.size();
  // Execution order: the file's when it respects every edge and lists forward kernels first.
  std::vector<size_t> position(n);
  for (size_t i = 0; i < n; ++i)
    position[i] = i;
  for (const GraphEdge& e : edges_)
    if (e.from > e.to) file_order_topological_ = false;
  bool forward_first = true;
  for (size_t i = 1; i < n; ++i)
    if (kernels[i - 1].backward && !kernels[i].backward) forward_first = false;
  if (file_order_topological_ && forward_first) {
    order_ = position;
  } else {
    // Smallest (backward?, file index) first among the free kernels.
    std::vector<size_t> indegree(n);
    for (size_t i = 0; i < n; ++i)
      indegree[i] = in_[i].size();
    using Key = std::pair<bool, size_t>;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ready;
    for (size_t i = 0; i < n; ++i)
      if (indegree[i] == 0) ready.push({kernels[i].backward, i});
    while (!ready.empty()) {
      const size_t k = ready.top().second;
      ready.pop();
      order_.push_back(k);
      for (const size_t e : out_[k])
        if (--indegree[edges_[e].to] == 0)
          ready.push({kernels[edges_[e].to].backward, edges_[e].to});
    }
  }
}

void DataflowGraph::compare_derived_fields(const DataflowProblem& problem,
                                           Diagnostics& diagnostics) const {
  const std::string& file = problem.source;
  const auto& kernels = problem.kernels;
  const size_t n = kernels.size();
  // Compare the file's derived fields with the recomputed ones (only where the file has them).
  bool file_has_levels = false;
  for (const DataflowKernel& k : kernels)
    file_has_levels = file_has_levels || k.topological_number != 0;
  Disagreements level("topological_number");
  if (file_has_levels)
    for (size_t i = 0; i < n; ++i)
      if (kernels[i].topological_number != levels_[i])
        level.add({file, kernels[i].line}, label(kernels[i]) + " has " +
                                               std::to_string(kernels[i].topological_number) +
                                               ", recomputed " + std::to_string(levels_[i]));
  level.report(diagnostics);

  Disagreements depth("buffer_depth"), size("tensor_size"), names("startName/endName");
  for (size_t e = 0; e < problem.edges.size(); ++e) {
    const DataflowEdge& edge = problem.edges[e];
    const GraphEdge& ge = edges_[e];
    const SourceLocation at{file, edge.line};
    const std::string name = "connection " + std::to_string(edge.id);
    if (edge.buffer_depth != 0 && edge.buffer_depth != ge.buffer_depth)
      depth.add(at, name + " has " + std::to_string(edge.buffer_depth) + ", recomputed " +
                        std::to_string(ge.buffer_depth));
    if (edge.tensor_bytes != 0 &&
        static_cast<float>(edge.tensor_bytes) != static_cast<float>(ge.tensor_bytes))
      size.add(at, name + " has " + std::to_string(edge.tensor_bytes) +
                       " bytes, its producer's output is " + std::to_string(ge.tensor_bytes));
    const bool names_given = !edge.from_name.empty() || !edge.to_name.empty();
    if (names_given &&
        (edge.from_name != kernels[ge.from].name || edge.to_name != kernels[ge.to].name))
      names.add(at, name + " names '" + edge.from_name + "' -> '" + edge.to_name +
                        "', its kernels are '" + kernels[ge.from].name + "' -> '" +
                        kernels[ge.to].name + "'");
  }
  depth.report(diagnostics);
  size.report(diagnostics);
  names.report(diagnostics);
}

}  // namespace orrery
