// What a GEMM and a collective cost when Transformer Engine runs them together
// (training/gemm_overlap_time.h), each expectation derived by hand from the formulas there.
#include "training/gemm_overlap_time.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

Time us(int64_t v) {
  return Time::from_us(v);
}

GemmOverlap overlap(GemmOverlapMethod method, int64_t chunks, int64_t sms, Time gemm,
                    bool sm_margin = false) {
  return {{}, method, chunks, sms, sm_margin, gemm};
}

// Without a slowdown (units unknown): bulk max(G, C); pipelined in k chunks max(G, C) +
// min(G, C) / k; ring exchange over t ranks max(G (t - 1) / t, C) + G / t.
// G = 80 us, C = 40 us: bulk 80; 4 chunks 80 + 10 = 90; ring over 4: max(60, 40) + 20 = 80.
// C = 200 us: bulk 200; 4 chunks 200 + 20 = 220; ring over 4: max(60, 200) + 20 = 220.
TEST(GemmOverlapTime, WithoutContentionThePipelineOfChunks) {
  const Time gemm = us(80);
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::Bulk, 1, 4, gemm), us(40), 0, 0), us(80));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::Pipelined, 4, 24, gemm), us(40), 0, 0),
            us(90));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::RingExchange, 4, 1, gemm), us(40), 0, 0),
            us(80));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::Bulk, 1, 4, gemm), us(200), 0, 0),
            us(200));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::Pipelined, 4, 24, gemm), us(200), 0, 0),
            us(220));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::RingExchange, 4, 1, gemm), us(200), 0, 0),
            us(220));
  // One chunk is the two in series; a ring of two ranks multiplies half while the other arrives.
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::Pipelined, 1, 24, gemm), us(40), 0, 0),
            us(120));
  EXPECT_EQ(gemm_overlap_time(overlap(GemmOverlapMethod::RingExchange, 2, 1, gemm), us(40), 0, 0),
            us(80));
}

// 20 of 100 SMs held, no overhead: share 0.2. G = 80 us beside C = 40 us is slowed by
// min(40 x 0.2, 80 x 0.2 / 0.8) = 8 us: G' = 88; bulk 88, 4 chunks 88 + 10 = 98, ring over 4
// max(66, 40) + 22 = 88. Beside C = 200 us the GEMM is slowed throughout: min(40, 20) = 20 us,
// G' = 100; bulk 200, 4 chunks 200 + 25 = 225, ring over 4 max(75, 200) + 25 = 225.
// With an overhead f = 0.25 the share is (0.2 + 0.25) / 1.25 = 0.36: beside C = 100 us the GEMM
// ends min(36, 80 x 0.36 / 0.64 = 45) = 36 us later, 116 us; beside 130 us the collective is
// longer than the GEMM slowed throughout (125 us). Launched for the SMs left (TE's
// set_sm_margin) the GEMM loses the held share only, 0.2 again: 88 us beside 40.
TEST(GemmOverlapTime, TheHeldSmsSlowTheGemm) {
  const Time gemm = us(80);
  const auto time = [&](GemmOverlapMethod m, int64_t chunks, Time comm) {
    return gemm_overlap_time(overlap(m, chunks, 20, gemm), comm, 100, 0);
  };
  EXPECT_EQ(time(GemmOverlapMethod::Bulk, 1, us(40)), us(88));
  EXPECT_EQ(time(GemmOverlapMethod::Pipelined, 4, us(40)), us(98));
  EXPECT_EQ(time(GemmOverlapMethod::RingExchange, 4, us(40)), us(88));
  EXPECT_EQ(time(GemmOverlapMethod::Bulk, 1, us(200)), us(200));
  EXPECT_EQ(time(GemmOverlapMethod::Pipelined, 4, us(200)), us(225));
  EXPECT_EQ(time(GemmOverlapMethod::RingExchange, 4, us(200)), us(225));

  const GemmOverlap bulk = overlap(GemmOverlapMethod::Bulk, 1, 20, gemm);
  EXPECT_EQ(gemm_overlap_time(bulk, us(130), 100, 0.25), us(130));
  EXPECT_EQ(gemm_overlap_time(bulk, us(100), 100, 0.25), us(116));
  const GemmOverlap margin = overlap(GemmOverlapMethod::Bulk, 1, 20, gemm, true);
  EXPECT_EQ(gemm_overlap_time(margin, us(40), 100, 0.25), us(88));
}

}  // namespace
}  // namespace orrery
