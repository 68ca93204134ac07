#include "training/pipeline_schedule.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

PipelineOp F(int64_t mb, int64_t chunk = 0) {
  return {true, mb, chunk};
}
PipelineOp B(int64_t mb, int64_t chunk = 0) {
  return {false, mb, chunk};
}

TEST(PipelineSchedule, OneFOneBWarmsUpByDistanceToTheLastStage) {
  // 4 stages, 4 micro-batches. Stage 0 runs 3 warm-up forwards, stage 3 none.
  EXPECT_EQ(pipeline_order(ScheduleKind::OneFOneB, 4, 0, 4, 1),
            (std::vector<PipelineOp>{F(0), F(1), F(2), F(3), B(0), B(1), B(2), B(3)}));
  EXPECT_EQ(pipeline_order(ScheduleKind::OneFOneB, 4, 3, 4, 1),
            (std::vector<PipelineOp>{F(0), B(0), F(1), B(1), F(2), B(2), F(3), B(3)}));
  EXPECT_EQ(pipeline_order(ScheduleKind::OneFOneB, 4, 2, 4, 1),
            (std::vector<PipelineOp>{F(0), F(1), B(0), F(2), B(1), F(3), B(2), B(3)}));
}

TEST(PipelineSchedule, GPipeRunsAllForwardsFirst) {
  EXPECT_EQ(pipeline_order(ScheduleKind::GPipe, 2, 1, 2, 2),
            (std::vector<PipelineOp>{F(0, 0), F(1, 0), F(0, 1), F(1, 1), B(0, 1), B(1, 1), B(0, 0),
                                     B(1, 0)}));
}

TEST(PipelineSchedule, InterleavedFollowsMegatronsOrder) {
  // 2 stages, 2 chunks, 4 micro-batches: groups of 2 micro-batches go through chunk 0 then 1.
  // Forward sequence: (0,0) (1,0) (0,1) (1,1) (2,0) (3,0) (2,1) (3,1); backward mirrors chunks.
  // Stage 0 warms up 2(2-0-1) + (2-1)*2 = 4 forwards; stage 1 warms up 2.
  EXPECT_EQ(pipeline_order(ScheduleKind::Interleaved, 2, 0, 4, 2),
            (std::vector<PipelineOp>{F(0, 0), F(1, 0), F(0, 1), F(1, 1), F(2, 0), B(0, 1), F(3, 0),
                                     B(1, 1), F(2, 1), B(0, 0), F(3, 1), B(1, 0), B(2, 1), B(3, 1),
                                     B(2, 0), B(3, 0)}));
  EXPECT_EQ(pipeline_order(ScheduleKind::Interleaved, 2, 1, 4, 2),
            (std::vector<PipelineOp>{F(0, 0), F(1, 0), F(0, 1), B(0, 1), F(1, 1), B(1, 1), F(2, 0),
                                     B(0, 0), F(3, 0), B(1, 0), F(2, 1), B(2, 1), F(3, 1), B(3, 1),
                                     B(2, 0), B(3, 0)}));
}

TEST(PipelineSchedule, EveryPassExactlyOnce) {
  for (const auto kind : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved})
    for (int64_t p : {1, 2, 3, 4, 8})
      for (int64_t m : {1, 2, 3, 5, 8, 16})
        for (int64_t v : {1, 2, 3}) {
          if (kind == ScheduleKind::OneFOneB && v > 1) continue;
          for (int64_t s = 0; s < p; ++s) {
            const auto order = pipeline_order(kind, p, s, m, v);
            ASSERT_EQ(order.size(), static_cast<size_t>(2 * m * v));
            for (int64_t mb = 0; mb < m; ++mb)
              for (int64_t c = 0; c < v; ++c) {
                const auto f = std::find(order.begin(), order.end(), F(mb, c));
                const auto b = std::find(order.begin(), order.end(), B(mb, c));
                ASSERT_NE(f, order.end());
                ASSERT_NE(b, order.end());
                EXPECT_LT(f, b) << "forward before backward";
              }
          }
        }
}

TEST(PipelineSchedule, RejectsChunksWithOneFOneBAndAuto) {
  EXPECT_THROW(pipeline_order(ScheduleKind::OneFOneB, 2, 0, 2, 2), std::invalid_argument);
  EXPECT_THROW(pipeline_order(ScheduleKind::Auto, 2, 0, 2, 1), std::invalid_argument);
}

}  // namespace
}  // namespace orrery
