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

// The pair's time for a GEMM of 80 us holding `sms` of `units` SMs beside `comm`.
Time total(GemmOverlapMethod method, int64_t chunks, Time comm, int64_t sms = 20,
           int64_t units = 0) {
  return gemm_overlap_time(overlap(method, chunks, sms, us(80)), comm, units, 0).total;
}

// Without a slowdown (units unknown): bulk max(G, C); pipelined in k chunks max(G, C) +
// min(G, C) / k; ring exchange over t ranks max(G (t - 1) / t, C) + G / t.
// G = 80 us, C = 40 us: bulk 80; 4 chunks 80 + 10 = 90; ring over 4: max(60, 40) + 20 = 80.
// C = 200 us: bulk 200; 4 chunks 200 + 20 = 220; ring over 4: max(60, 200) + 20 = 220.
TEST(GemmOverlapTime, WithoutContentionThePipelineOfChunks) {
  EXPECT_EQ(total(GemmOverlapMethod::Bulk, 1, us(40)), us(80));
  EXPECT_EQ(total(GemmOverlapMethod::Pipelined, 4, us(40)), us(90));
  EXPECT_EQ(total(GemmOverlapMethod::RingExchange, 4, us(40)), us(80));
  EXPECT_EQ(total(GemmOverlapMethod::Bulk, 1, us(200)), us(200));
  EXPECT_EQ(total(GemmOverlapMethod::Pipelined, 4, us(200)), us(220));
  EXPECT_EQ(total(GemmOverlapMethod::RingExchange, 4, us(200)), us(220));
  // One chunk is the two in series; a ring of two ranks multiplies half while the other arrives.
  EXPECT_EQ(total(GemmOverlapMethod::Pipelined, 1, us(40)), us(120));
  EXPECT_EQ(total(GemmOverlapMethod::RingExchange, 2, us(40)), us(80));
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
  EXPECT_EQ(total(GemmOverlapMethod::Bulk, 1, us(40), 20, 100), us(88));
  EXPECT_EQ(total(GemmOverlapMethod::Pipelined, 4, us(40), 20, 100), us(98));
  EXPECT_EQ(total(GemmOverlapMethod::RingExchange, 4, us(40), 20, 100), us(88));
  EXPECT_EQ(total(GemmOverlapMethod::Bulk, 1, us(200), 20, 100), us(200));
  EXPECT_EQ(total(GemmOverlapMethod::Pipelined, 4, us(200), 20, 100), us(225));
  EXPECT_EQ(total(GemmOverlapMethod::RingExchange, 4, us(200), 20, 100), us(225));

  const GemmOverlap bulk = overlap(GemmOverlapMethod::Bulk, 1, 20, us(80));
  EXPECT_EQ(gemm_overlap_time(bulk, us(130), 100, 0.25).total, us(130));
  EXPECT_EQ(gemm_overlap_time(bulk, us(100), 100, 0.25).total, us(116));
  const GemmOverlap margin = overlap(GemmOverlapMethod::Bulk, 1, 20, us(80), true);
  EXPECT_EQ(gemm_overlap_time(margin, us(40), 100, 0.25).total, us(88));
}

// The slowed GEMM G' beside the pair's time: what the GEMM does not hide is total - G'. Bulk
// beside 200 us: G' = 100 (slowed throughout, above), 100 us exposed; beside 40 us: G' = 88 =
// total, nothing exposed. Pipelined in 4 beside 40 us: G' = 88, total 98, 10 us exposed.
TEST(GemmOverlapTime, TheSlowedGemmIsWhatTheCollectiveHides) {
  const auto split = [](GemmOverlapMethod m, int64_t chunks, Time comm) {
    return gemm_overlap_time(overlap(m, chunks, 20, us(80)), comm, 100, 0);
  };
  EXPECT_EQ(split(GemmOverlapMethod::Bulk, 1, us(200)).gemm, us(100));
  EXPECT_EQ(split(GemmOverlapMethod::Bulk, 1, us(40)).gemm, us(88));
  const GemmOverlapTime pipelined = split(GemmOverlapMethod::Pipelined, 4, us(40));
  EXPECT_EQ(pipelined.total - pipelined.gemm, us(10));
}

}  // namespace
}  // namespace orrery
