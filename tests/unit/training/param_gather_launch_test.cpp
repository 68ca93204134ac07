#include "training/param_gather_launch.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

// PP 4, VPP 3, 8 micro-batches: the interleaved schedule runs the forwards of micro-batches 0-3
// through chunk 0 (forwards 0-3), chunk 1 (4-7) and chunk 2 (8-11), then micro-batches 4-7
// likewise. Stage s warms up with 2 (3 - s) + 2 x 4 >= 8 forwards, so the first 8 entries of its
// order are forwards 0-7. Chunk 1's first forward is forward 4 on every stage, so stage s launches
// chunk 2 at forward 4 - s: stage 0 as chunk 1's micro-batch 0 starts, stage 3 as chunk 0's
// micro-batch 1 starts (Megatron-LM: forward k with k + s = 4, the first micro-batch of chunk 1,
// launches chunk 1 + 1). Chunks 0 and 1 are launched before the first forward.
TEST(AlignedGatherLaunches, InterleavedPp4Vpp3EightMicroBatches) {
  const PipelineOp launcher[] = {{true, 0, 1}, {true, 3, 0}, {true, 2, 0}, {true, 1, 0}};
  for (int64_t s = 0; s < 4; ++s) {
    const std::vector<PipelineOp> order = pipeline_order(ScheduleKind::Interleaved, 4, s, 8, 3);
    const std::vector<int64_t> launches = aligned_gather_launches(order, s, 3);
    ASSERT_EQ(launches.size(), 3u);
    EXPECT_EQ(launches[0], -1) << s;
    EXPECT_EQ(launches[1], -1) << s;
    EXPECT_EQ(launches[2], 4 - s) << s;
    EXPECT_EQ(order[static_cast<size_t>(launches[2])], launcher[s]) << s;
  }
}

// With one or two chunks every gather is launched before the first forward.
TEST(AlignedGatherLaunches, TwoChunksLaunchAtTheStart) {
  const std::vector<PipelineOp> order = pipeline_order(ScheduleKind::Interleaved, 2, 1, 4, 2);
  EXPECT_EQ(aligned_gather_launches(order, 1, 2), (std::vector<int64_t>{-1, -1}));
}

}  // namespace
}  // namespace orrery
