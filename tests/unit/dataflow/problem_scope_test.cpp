#include "dataflow/problem_scope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tiny_problem.h"

namespace orrery {
namespace {

using test::simd;

// X on a 2-D torus of 8 chips (x 2 PP, y 4 DP); the problem's blocks on lines 1 (system), 2
// (run), 3 (topology) and 4 (llm).
DataflowProblem torus() {
  DataflowProblem p = test::tiny_problem("r_r", {{LinkKind::Ring, 2, 10, ParallelRole::Pipeline},
                                                 {LinkKind::Ring, 4, 20, ParallelRole::Data}});
  p.kernels = {simd(1, "X", 8, 4)};
  p.system.topology_line = 3;
  p.run.llm_line = 4;
  return p;
}

std::string error_of(const DataflowProblem& p) {
  Diagnostics d;
  try {
    check_modelled(p, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ProblemScope, FixedSizesWhoseProductOverflowsAreAnError) {
  // 2^32 x 2^32 wrapped to 0 in 64 bits, and num_chip % 0 stopped the process (SIGFPE).
  DataflowProblem p = torus();
  p.system.dimensions[0].size = p.system.dimensions[1].size = int64_t{1} << 32;
  EXPECT_EQ(error_of(p), "tiny.txt:3: r_r: expected x between 0 (free) and 2147483647");
  // Within range, the product is checked against num_chip as it grows.
  p.system.dimensions[0].size = p.system.dimensions[1].size = 65536;
  EXPECT_EQ(error_of(p),
            "tiny.txt:3: r_r: the fixed dimension sizes (product 65536 at x) exceed num_chip 8");
  p = torus();
  p.system.dimensions[1].size = 3;
  EXPECT_EQ(error_of(p),
            "tiny.txt:3: r_r: the fixed dimension sizes (product 6) do not divide num_chip 8");
}

TEST(ProblemScope, ValuesThatAreNotNumbersAreErrorsAtTheirBlock) {
  DataflowProblem p = torus();
  p.run.compute_util = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of(p), "tiny.txt:2: expected compute_util in [0, 1] (0: cycle model)");
  p = torus();
  p.system.dimensions[1].link_gbps = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(p), "tiny.txt:3: r_r: expected a finite link_bw_y > 0");
  p = torus();
  p.system.dram_bytes = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(error_of(p), "tiny.txt:1: memory: expected a finite dram_cap > 0");
  p = torus();
  p.cost.chip_price = -1;
  EXPECT_EQ(error_of(p), "tiny.txt: cost: expected finite prices and powers >= 0");
  p = torus();
  p.system.chips = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(error_of(p), "tiny.txt:1: system: expected num_chip between 1 and 2147483647");
  p = torus();
  p.run.llm->seq_len = int64_t{1} << 40;
  EXPECT_EQ(error_of(p), "tiny.txt:4: llm: expected sizes <= 2147483647, found 1099511627776");
  p = torus();
  p.run.word_bytes = -2;
  EXPECT_EQ(error_of(p), "tiny.txt:2: expected word between 1 and 2147483647 bytes, found -2");
}

}  // namespace
}  // namespace orrery
