#include "dataflow/workload_conversion.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "dataflow/mapping_search.h"
#include "dataflow/problem_scope.h"
#include "formats/dfmodel_reader.h"
#include "formats/simai_text.h"
#include "formats/simai_text_writer.h"

namespace orrery {
namespace {

const std::string kSeed = ORRERY_SOURCE_DIR "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

struct Converted {
  DataflowProblem problem;
  SearchOutcome outcome;
  ConvertedWorkload converted;
  Converted() {
    std::ifstream in(kSeed);
    std::stringstream s;
    s << in.rdbuf();
    Diagnostics d;
    problem = read_dfmodel(kSeed, s.str(), d);
    check_modelled(problem, d);
    const DataflowGraph g = DataflowGraph::build(problem, d);
    outcome = solve_dataflow(problem, g, {}, d);
    converted = to_workload(problem, g, outcome.sharding, outcome.best);
  }
};

TEST(WorkloadConversion, SeedBecomesOnePassPerMicroBatch) {
  const Converted c;
  const Workload& w = c.converted.workload;
  EXPECT_EQ(w.parallelism.tp, 1);
  EXPECT_EQ(w.parallelism.pp, 128);
  EXPECT_EQ(w.parallelism.dp(), 32);
  EXPECT_EQ(w.parallelism.micro_batches, 96);
  // hidden 25600 x seq 2048 x 2 bytes x micro-batch 1 between stages.
  EXPECT_EQ(w.stage_boundary_bytes, Bytes{104857600});
  // One gradient row, then 96 passes of a marker, 18 forward and 23 backward configurations.
  ASSERT_EQ(w.program.before.size(), 1u);
  ASSERT_EQ(w.program.micro_batches.size(), 96u);
  EXPECT_EQ(w.program.micro_batches[0].size(), 1u + 18 + 23);
  EXPECT_EQ(w.program.layers.size(), 1u + 96 * 42);
  // The gradient: 2 x 102400 x 25600 x 2 + 4 x 25600 x 25600 x 2 bytes per chip, data-parallel.
  const Layer& grad = w.program.layers[0];
  ASSERT_TRUE(grad.weight_grad.comm);
  EXPECT_EQ(grad.weight_grad.comm->group, CommGroup::Data);
  EXPECT_EQ(grad.weight_grad.comm->bytes, Bytes{2 * 5242880000ull + 4 * 1310720000ull});
  // Pass rows: Q's forward is its compute and memory time (DFModel's per-configuration table:
  // 9717947.723372 ns); the backward rows come in reverse configuration order, weight updates in
  // the weight-gradient phase.
  const LayerRange pass = w.program.micro_batches[0];
  EXPECT_EQ(w.program.layers[pass.begin].name, "embedding_layer");
  const Layer& q = w.program.layers[pass.begin + 3];
  EXPECT_EQ(q.name, "l0.c2.Q");
  EXPECT_NEAR(q.forward.compute.nanoseconds(), 9717947.723372, 0.001);
  const Layer& last = w.program.layers[pass.end - 1];
  EXPECT_EQ(last.name, "l0.c18.Loss_bwd");
  EXPECT_GT(last.input_grad.compute, Time::zero());
  const Layer& update = w.program.layers[pass.begin + 19];
  EXPECT_EQ(update.name, "l0.c40.Q_bwd_weight_update");
  EXPECT_NEAR(update.weight_grad.compute.nanoseconds(), 9563669.743970 + 102851.986268, 0.001);
  EXPECT_EQ(update.input_grad.compute, Time::zero());
  // All compute and memory of DFModel's II is there once per micro-batch.
  Time pass_time;
  for (size_t i = pass.begin; i < pass.end; ++i) {
    const Layer& l = w.program.layers[i];
    pass_time += l.forward.compute + l.input_grad.compute + l.weight_grad.compute;
  }
  EXPECT_NEAR(pass_time.nanoseconds(), 378605103.4765335 - 12697600.0, 0.1);
  // One 25 GB/s link per chip and dimension; no tensor parallelism: a "server" of one chip.
  EXPECT_EQ(c.converted.network.chips_per_server, 1);
  EXPECT_EQ(c.converted.network.scale_out_gbps, 25.0);
  EXPECT_TRUE(c.converted.network.caveats.empty());
}

TEST(WorkloadConversion, SimaiTextRoundTrip) {
  const Converted c;
  std::ostringstream text;
  write_simai_text(text, c.converted.workload);
  Diagnostics d;
  const Workload back = read_simai_text("w.txt", text.str(), d);
  const Workload& w = c.converted.workload;
  EXPECT_EQ(back.parallelism.tp, w.parallelism.tp);
  EXPECT_EQ(back.parallelism.pp, w.parallelism.pp);
  EXPECT_EQ(back.parallelism.micro_batches, 96);
  EXPECT_EQ(back.parallelism.world_size, 4096);
  EXPECT_EQ(back.stage_boundary_bytes, w.stage_boundary_bytes);
  ASSERT_EQ(back.program.layers.size(), w.program.layers.size());
  EXPECT_EQ(back.program.micro_batches.size(), 96u);
  EXPECT_EQ(back.program.before.size(), 1u);
  for (size_t i = 0; i < w.program.layers.size(); ++i) {
    const Layer& a = w.program.layers[i];
    const Layer& b = back.program.layers[i];
    ASSERT_EQ(a.name, b.name);
    // Whole nanoseconds in the text form.
    EXPECT_LE(std::abs(a.forward.compute.ps() - b.forward.compute.ps()), 500) << a.name;
    EXPECT_LE(std::abs(a.weight_grad.compute.ps() - b.weight_grad.compute.ps()), 500) << a.name;
  }
  ASSERT_TRUE(back.program.layers[0].weight_grad.comm);
  EXPECT_EQ(back.program.layers[0].weight_grad.comm->bytes, Bytes{15728640000ull});
}

}  // namespace
}  // namespace orrery
