// The SM-contention share (training/sm_contention.h) against GEMMs measured beside a kernel that
// holds some of the GPU's SMs, as a collective's channels do (tests/data/h200_sm_contention.csv,
// one H200; method in docs/references/h200-kernels.md).
#include "training/sm_contention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "test_data.h"

namespace orrery {
namespace {

// No channels, no known units / no share, because nothing is held or nothing is known; 16 of 132
// / 16/132; more channels than units / all of them.
TEST(SmContention, ShareIsTheHeldFractionOfTheUnits) {
  EXPECT_EQ(sm_contention_share(0, 132), 0);
  EXPECT_EQ(sm_contention_share(16, 0), 0);
  EXPECT_DOUBLE_EQ(sm_contention_share(16, 132), 16.0 / 132.0);
  EXPECT_EQ(sm_contention_share(200, 132), 1);
}

// Five BF16 GEMMs of transformer layers beside 1 to 66 held SMs, in two runs, the stand-in only
// holding its SMs (spin) or also streaming memory (copy), every point counted (the two start-up
// artefacts at 0.89 and 0.90 too) / the model's U / (U - c) is slow of the
// measurement on average, by 5 to 20 %, because cuBLAS's persistent kernels, sized for every SM,
// lose more than the held units (sm_contention.h, Scope and limitations); a change of the model
// that closes the gap, or a regression that widens it, moves the figure out of the band and must
// update the header and docs. Measured today: -13.0 % on average, largest 35.7 % (a 2048 x 6144 x
// 12288 GEMM beside 4 held SMs).
TEST(SmContention, ModelAgainstGemmsBesideHeldSms) {
  double signed_sum = 0, largest = 0;
  int n = 0;
  for (const char* file : {"h200_sm_contention.csv", "h200_sm_contention_few.csv"})
    for (const auto& c : test_data::rows(file)) {
      const int64_t held = std::stoll(c[5]), units = std::stoll(c[6]);
      const double measured = std::stod(c[9]);
      const double model = 1 / (1 - sm_contention_share(held, units));
      const double error = model / measured - 1;
      signed_sum += error;
      largest = std::max(largest, std::fabs(error));
      ++n;
    }
  ASSERT_EQ(n, 160);
  const double mean = signed_sum / n;
  std::printf("model / measured slowdown - 1: mean %+.1f %%, largest %.1f %%\n", 100 * mean,
              100 * largest);
  EXPECT_LT(mean, -0.05);
  EXPECT_GT(mean, -0.20);
  EXPECT_LT(largest, 0.40);
}

}  // namespace
}  // namespace orrery
