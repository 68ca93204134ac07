// The validated kernel graph of a dataflow problem, with the fields DFModel derives from it:
// topological level of each kernel (rounds of Kahn's algorithm, roots at 0), buffer depth of each
// edge (level(consumer) - level(producer) + 1: how many pipeline steps the buffer spans when both
// ends share a configuration) and edge tensor sizes (the producer's output bytes).
//
// Building it checks what the file alone cannot: unique kernel and connection ids, connections
// that name existing kernels, no cycles, no edge from a backward kernel to a forward one,
// positive GEMM sizes, a sharding and tiling that agree. Errors name the file and line; where the
// file's own derived fields (topological_number, buffer_depth, tensor_size, startName/endName)
// disagree with the recomputed ones, a warning says so and the recomputed values are used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "core/diagnostics.h"
#include "workload/dataflow_problem.h"

namespace orrery {

struct GraphEdge {
  size_t from = 0, to = 0;  // kernel indices
  double tensor_bytes = 0;  // full tensor: the producer's output bytes
  int64_t buffer_depth = 1;
};

class DataflowGraph {
 public:
  // Validates `problem`'s kernels and connections; throws InputError, warns on disagreements.
  // Kernels' missing (zero) sizes are derived from their dimensions, with a warning.
  static DataflowGraph build(DataflowProblem& problem, Diagnostics& diagnostics);

  size_t size() const { return levels_.size(); }
  int64_t level(size_t kernel) const { return levels_[kernel]; }
  const std::vector<GraphEdge>& edges() const { return edges_; }  // aligned with problem.edges
  const std::vector<size_t>& in_edges(size_t kernel) const { return in_[kernel]; }
  const std::vector<size_t>& out_edges(size_t kernel) const { return out_[kernel]; }

  // Kernels in an order that respects every edge with all forward kernels first: the file order
  // when it does, else a topological order breaking ties by file order.
  const std::vector<size_t>& order() const { return order_; }
  // True when the file lists kernels in an order that respects every edge.
  bool file_order_is_topological() const { return file_order_topological_; }
  bool has_backward() const { return has_backward_; }

 private:
  // The steps of build(), in order (dataflow_graph.cpp).
  std::map<int64_t, size_t> index_kernels(DataflowProblem& problem, Diagnostics& diagnostics);
  void connect(const DataflowProblem& problem, const std::map<int64_t, size_t>& index_of);
  void level_kernels(const DataflowProblem& problem);
  void order_kernels(const DataflowProblem& problem);
  void compare_derived_fields(const DataflowProblem& problem, Diagnostics& diagnostics) const;

  std::vector<int64_t> levels_;
  std::vector<GraphEdge> edges_;
  std::vector<std::vector<size_t>> in_, out_;
  std::vector<size_t> order_;
  bool file_order_topological_ = true;
  bool has_backward_ = false;
};

}  // namespace orrery
