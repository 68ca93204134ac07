#include "dataflow/dataflow_graph.h"

#include <gtest/gtest.h>

#include "tiny_problem.h"

namespace orrery {
namespace {

using test::edge;
using test::gemm;
using test::simd;

// a -> b -> d, a -> c -> d, a -> d (a residual), in file order a, b, c, d.
DataflowProblem diamond() {
  DataflowProblem p = test::tiny_problem("r", {{LinkKind::Ring, 1, 10, ParallelRole::Data}});
  p.kernels = {simd(1, "a", 8, 4), simd(2, "b", 8, 4), gemm(3, "c", 6, 8, 4, TensorAxis::M),
               simd(4, "d", 6, 4)};
  p.kernels[3].variant = KernelVariant::ElementwiseInputInput;
  p.edges = {edge(1, 1, 2), edge(2, 1, 3), edge(3, 2, 4), edge(4, 3, 4), edge(5, 1, 4)};
  return p;
}

std::string error_of(DataflowProblem p) {
  Diagnostics d;
  try {
    DataflowGraph::build(p, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DataflowGraph, LevelsBufferDepthsAndTensorSizes) {
  DataflowProblem p = diamond();
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  EXPECT_EQ(g.level(0), 0);
  EXPECT_EQ(g.level(1), 1);
  EXPECT_EQ(g.level(2), 1);
  EXPECT_EQ(g.level(3), 2);
  EXPECT_EQ(g.edges()[4].buffer_depth, 3);  // residual a -> d spans levels 0..2
  EXPECT_EQ(g.edges()[0].buffer_depth, 2);
  EXPECT_EQ(g.edges()[3].tensor_bytes, 6.0 * 4 * 2);  // c's output
  EXPECT_EQ(g.order(), (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(g.file_order_is_topological());
  EXPECT_EQ(g.in_edges(3).size(), 3u);
  EXPECT_TRUE(d.warnings().empty());
}

TEST(DataflowGraph, OrderPutsForwardFirstAndRespectsEdges) {
  DataflowProblem p = diamond();
  std::swap(p.kernels[1], p.kernels[3]);  // file order a, d, c, b: d before its producers
  p.kernels[2].backward = true;           // c is backward, so is its consumer d
  p.kernels[1].backward = true;
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  EXPECT_FALSE(g.file_order_is_topological());
  // a, b (forward), then c, d (backward, d after c).
  EXPECT_EQ(g.order(), (std::vector<size_t>{0, 3, 2, 1}));
}

TEST(DataflowGraph, ValidationErrorsNameTheLine) {
  DataflowProblem p = diamond();
  p.edges.push_back(edge(6, 4, 2));  // d -> b closes a cycle b -> d -> b
  EXPECT_EQ(error_of(p),
            "tiny.txt:20: expected an acyclic graph, found a cycle through kernel "
            "'b' (id 2)");
  p = diamond();
  p.edges[1].to_id = 9;
  EXPECT_EQ(error_of(p),
            "tiny.txt:1002: connection 2: expected startIdx and endIdx to name "
            "kernel ids, found 1 -> 9");
  p = diamond();
  p.kernels[2].id = 1;
  EXPECT_EQ(error_of(p), "tiny.txt:30: expected unique kernel ids, found id 1 again (first: 'a')");
  p = diamond();
  p.edges[4].id = 1;
  EXPECT_EQ(error_of(p), "tiny.txt:1005: expected unique connection ids, found id 1 again");
  p = diamond();
  p.kernels[0].backward = true;
  EXPECT_EQ(error_of(p),
            "tiny.txt:1001: connection 1: expected forward kernels before backward "
            "ones, found a connection from backward kernel 'a' (id 1) to forward "
            "kernel 'b' (id 2)");
  p = diamond();
  p.kernels[2].sharding = TensorAxis::N;
  EXPECT_EQ(error_of(p),
            "tiny.txt:30: kernel 'c' (id 3): expected different sharding and tiling "
            "axes, found N for both");
  p = diamond();
  p.kernels[2].k = 0;
  EXPECT_EQ(error_of(p), "tiny.txt:30: kernel 'c' (id 3): expected K >= 1");
}

TEST(DataflowGraph, DisagreeingDerivedFieldsAreWarnings) {
  DataflowProblem p = diamond();
  p.kernels[1].topological_number = 1;
  p.kernels[2].topological_number = 1;
  p.kernels[3].topological_number = 5;
  p.edges[4].buffer_depth = 2;
  p.edges[2].buffer_depth = 9;
  p.edges[0].from_name = "x";
  p.edges[0].to_name = "b";
  p.edges[3].tensor_bytes = 1;
  Diagnostics d;
  DataflowGraph::build(p, d);
  ASSERT_EQ(d.warnings().size(), 4u);
  EXPECT_EQ(d.warnings()[0].to_string(),
            "tiny.txt:40: topological_number: kernel 'd' (id 4) has 5, recomputed 2; the "
            "recomputed values are used");
  EXPECT_EQ(d.warnings()[1].to_string(),
            "tiny.txt:1003: buffer_depth: connection 3 has 9, recomputed 2 (and 1 more); the "
            "recomputed values are used");
  EXPECT_NE(d.warnings()[2].to_string().find("tensor_size: connection 4 has 1"), std::string::npos);
  EXPECT_NE(d.warnings()[3].to_string().find("names 'x' -> 'b'"), std::string::npos);
}

TEST(DataflowGraph, MissingSizesAreDerivedWithAWarning) {
  DataflowProblem p = diamond();
  p.kernels[0].output_bytes = 0;
  p.kernels[1].outer = 0;
  Diagnostics d;
  const DataflowGraph g = DataflowGraph::build(p, d);
  EXPECT_EQ(p.kernels[0].output_bytes, 8.0 * 4 * 2);
  EXPECT_EQ(g.edges()[0].tensor_bytes, 64.0);
  EXPECT_EQ(p.kernels[1].outer, 1);
  EXPECT_EQ(d.warnings().size(), 2u);
}

// DFModel writes each tensor size as the full tensor's bytes from the kernel's dimensions; a size
// that matches none of them is named once, with how many more kernels disagree.
TEST(DataflowGraph, TensorSizesAreCheckedAgainstTheDimensions) {
  DataflowProblem p = diamond();
  p.kernels[2].input1_bytes = 5;  // c: GEMM 6 x 8 x 4, input K x N x word = 8 x 4 x 2 = 64 B
  p.kernels[3].output_bytes = 1;  // d: 6 x 4 x 2 = 48 B
  Diagnostics d;
  DataflowGraph::build(p, d);
  ASSERT_EQ(d.warnings().size(), 1u);
  EXPECT_EQ(d.warnings()[0].to_string(),
            "tiny.txt:30: kernel 'c' (id 3): input_tensor_size 5 B, expected K*N*word = 64 B or "
            "outer*K*N*word = 64 B (word 2) (and 1 more kernels): DFModel writes full tensor "
            "bytes from outer, M, K, N and word; Orrery uses output_tensor_size as given and "
            "reads no other size");
  Diagnostics clean;
  DataflowProblem q = diamond();
  DataflowGraph::build(q, clean);
  EXPECT_TRUE(clean.warnings().empty());
}

TEST(DataflowGraph, KernelWithoutIdIsNamed) {
  // proto3 reads an absent id as 0; the connections that name the kernel then dangle.
  DataflowProblem p = diamond();
  p.kernels[0].id = 0;
  EXPECT_EQ(error_of(p),
            "tiny.txt:10: kernel 'a' (id 0): expected an id (connections name kernels by id), "
            "found none (or 0); connection 1 names kernel id 1, which no kernel has");
  p = diamond();
  p.kernels[1].id = 0;
  p.kernels[2].id = 0;
  EXPECT_EQ(error_of(p),
            "tiny.txt:30: kernel 'c' (id 0): expected an id (connections name kernels by id), "
            "found none (or 0), like 'b'");
}

TEST(DataflowGraph, NegativeTensorSizesAreErrors) {
  // Zero is "absent" and derived; a negative size is a mistake, not a missing value.
  DataflowProblem p = diamond();
  p.kernels[0].output_bytes = -64;
  EXPECT_EQ(error_of(p), "tiny.txt:10: kernel 'a' (id 1): expected finite tensor sizes >= 0");
}

}  // namespace
}  // namespace orrery
