// The H100 and H200 presets against this project's own measurements of one H100 SXM and one H200
// SXM held at their 700 W power limit (tests/data/h100_*.csv, h200_*.csv; method and figures in
// docs/references/h100-kernels.md and h200-kernels.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "hardware/device_file.h"
#include "hardware/op_cost.h"
#include "measured_gemm.h"
#include "test_data.h"

namespace orrery {
namespace {

using test_data::measured_gemm;
using test_data::median;

// H100, 8192^3 GEMMs: after an idle pause the first calls run at 1980 MHz; held for 20 s the board
// sits at 700 W and the SM clock at 1245-1365 MHz. The preset's sustained_matrix is the ratio of
// the medians (calls 1-10 against the last 10 s), BF16 0.879 and FP8 0.885: in-sample, it holds
// the constant to the data it came from.
TEST(SustainedLoad, PresetFractionIsTheMeasuredBurstToSustainedRatio) {
  std::vector<double> burst[2], held[2];
  for (const auto& c : test_data::rows("h100_gemm_burst_sustained.csv")) {
    const int type = c[0] == "fp8" ? 1 : 0;
    const int call = std::stoi(c[2]);
    if (c[1] == "burst" && call >= 1 && call <= 10) burst[type].push_back(std::stod(c[4]));
    if (c[1] == "sustained" && std::stod(c[3]) >= 10) held[type].push_back(std::stod(c[4]));
  }
  const double fraction = load_device("H100-SXM5-80GB").sustained_matrix;
  for (int type : {0, 1}) {
    ASSERT_EQ(burst[type].size(), 10u);
    ASSERT_GT(held[type].size(), 50u);
    const double ratio = median(held[type]) / median(burst[type]);
    std::printf("%s: sustained / burst %.3f\n", type ? "fp8" : "bf16", ratio);
    EXPECT_NEAR(fraction, ratio, 0.01);
  }
}

// The H200 preset keeps the H100's 0.88; one H200 measured the same way held BF16 at 0.892 and
// FP8 at 0.837 of its burst rate (docs/references/h200-kernels.md): a check, each within 0.05.
TEST(SustainedLoad, H200FractionNearTheMeasuredRatio) {
  std::vector<double> burst[2], held[2];
  for (const auto& c : test_data::rows("h200_gemm_burst_sustained.csv")) {
    const int type = c[0] == "fp8" ? 1 : 0;
    const int call = std::stoi(c[2]);
    if (c[1] == "burst" && call >= 1 && call <= 10) burst[type].push_back(std::stod(c[4]));
    if (c[1] == "sustained" && std::stod(c[3]) >= 10) held[type].push_back(std::stod(c[4]));
  }
  const double fraction = load_device("H200-SXM-141GB").sustained_matrix;
  for (int type : {0, 1}) {
    ASSERT_EQ(burst[type].size(), 10u);
    ASSERT_GT(held[type].size(), 50u);
    const double ratio = median(held[type]) / median(burst[type]);
    std::printf("h200 %s: sustained / burst %.3f\n", type ? "fp8" : "bf16", ratio);
    EXPECT_NEAR(fraction, ratio, 0.05);
  }
}

// A check on data the constants were not fitted on: GEMM shapes (the NeMo runs' linear layers in
// forward, input-gradient and weight-gradient form, square and M sweeps) timed one after another
// under load, against the preset with its burst fit (tables 2-2 .. 2-5, table 2-1's FP8 ratio)
// times sustained_matrix. Calls under kLaunchBound were timed at the rate eager PyTorch issues
// them, not the GPU's (1024^3 takes 13-15 us in every data type), and are left out. Mean absolute
// error BF16 and FP8 each under kMeanBand, every shape under kLargestBand.
void expect_gemms_under_load_match(const std::string& device_name, const std::string& file) {
  constexpr double kMeanBand = 0.08, kLargestBand = 0.35, kLaunchBound = 30;  // us
  const Device device = load_device(device_name);
  struct Column {
    DType type;
    size_t index;
    const char* name;
  };
  for (const Column& col : {Column{DType::BF16, 4, "bf16"}, Column{DType::FP8, 6, "fp8"}}) {
    double abs_sum = 0, signed_sum = 0, largest = 0;
    size_t n = 0;
    for (const auto& c : test_data::rows(file)) {
      const double measured = std::stod(c[col.index]);
      if (measured < kLaunchBound) continue;
      const ComputeDemand d =
          measured_gemm(std::stoll(c[1]), std::stoll(c[2]), std::stoll(c[3]), col.type);
      const double error = kernel_time(device, d).microseconds() / measured - 1;
      EXPECT_LT(std::fabs(error), kLargestBand)
          << col.name << " " << c[0] << " " << c[1] << "x" << c[2] << "x" << c[3];
      abs_sum += std::fabs(error);
      signed_sum += error;
      largest = std::max(largest, std::fabs(error));
      ++n;
    }
    ASSERT_GT(n, 110u);
    std::printf("%s %s: %zu shapes", device_name.c_str(), col.name, n);
    const double mean = abs_sum / static_cast<double>(n);
    std::printf(", mean absolute error %.1f %%, signed mean %+.1f %%, largest %.1f %%\n",
                100 * mean, 100 * signed_sum / static_cast<double>(n), 100 * largest);
    EXPECT_LT(mean, kMeanBand) << col.name;
  }
}

// Today: BF16 4.6 % (signed -0.8 %), FP8 6.6 % (signed +5.8 %: the FP8 efficiency from table 2-1's
// best shapes is slow for these), largest 31 % (4096 x 2304 x 18432 in FP8: 2.2 waves of tiles
// rounded up to 3).
TEST(SustainedLoad, GemmsUnderLoadMatchThePreset) {
  expect_gemms_under_load_match("H100-SXM5-80GB", "h100_gemm_under_load.csv");
}

// The H200 preset takes every efficiency from the H100 (same die, same 700 W limit); the same
// shapes measured on one H200 check that. Today: BF16 5.1 % (signed -3.2 %), FP8 3.7 % (signed
// +1.5 %), largest 21.7 %.
TEST(SustainedLoad, H200GemmsUnderLoadMatchTheH100Efficiencies) {
  expect_gemms_under_load_match("H200-SXM-141GB", "h200_gemm_under_load.csv");
}

// Transformer Engine's FP8 GEMMs pass by pass (tests/data/h100_fp8_operands.csv, cuBLASLt, the
// same 123 shapes, both passes): the forward with fast accumulation, the input gradient with the
// output gradient in e5m2, against the one FP8 rate of the preset / each variant within kFp8Band
// on average (today: split 6.1 % (signed +5.0), fast 6.7 % (+6.4), e5m2 4.6 % (+3.8); the
// variants differ from the split accumulator by -2 to +2 % on average, so one rate serves every
// pass, a few percent slow on each) and BF16 within kBf16Band (3.9 %, -2.0).
TEST(SustainedLoad, Fp8GemmsOfEveryPassShareOneRate) {
  constexpr double kFp8Band = 0.08, kBf16Band = 0.08, kLaunchBound = 30;  // us
  const Device h100 = load_device("H100-SXM5-80GB");
  struct Sum {
    double abs = 0, sum = 0;
    int n = 0;
  };
  std::map<std::string, Sum> by_variant;
  for (const auto& c : test_data::rows("h100_fp8_operands.csv")) {
    const double measured = std::stod(c[6]);
    if (measured < kLaunchBound) continue;
    const DType type = c[4] == "fp8" ? DType::FP8 : DType::BF16;
    const double modelled =
        kernel_time(h100, measured_gemm(std::stoll(c[1]), std::stoll(c[2]), std::stoll(c[3]), type))
            .microseconds();
    Sum& s = by_variant[c[5]];
    s.abs += std::fabs(modelled / measured - 1);
    s.sum += modelled / measured - 1;
    ++s.n;
  }
  ASSERT_EQ(by_variant.size(), 4u);
  for (const auto& [variant, s] : by_variant) {
    std::printf("h100 %s: %d GEMMs, mean absolute error %.1f %%, signed %+.1f %%\n",
                variant.c_str(), s.n, 100 * s.abs / s.n, 100 * s.sum / s.n);
    EXPECT_GT(s.n, 200) << variant;
    EXPECT_LT(s.abs / s.n, variant == "bf16" ? kBf16Band : kFp8Band) << variant;
  }
}

ComputeDemand causal_attention(int64_t batch, int64_t heads, int64_t seq, bool backward) {
  ComputeDemand d;
  d.kind = backward ? KernelClass::AttentionBackward : KernelClass::Attention;
  d.dtype = DType::BF16;
  d.gemm = {batch * heads, seq, seq, 128};
  d.flop = (backward ? 2.5 : 1.0) * 2.0 * static_cast<double>(batch * heads) *
           static_cast<double>(seq * seq) * 128;
  d.bytes = static_cast<Bytes>(4 * 2 * batch * heads * seq * 128);
  return d;
}

// cuDNN's fused causal attention, forward and backward alternating under load, is what the H100
// preset's attention constants were fitted on: in-sample, each point within 5 % (the preset's
// header: largest 2.3 % forward, 3.1 % backward).
TEST(SustainedLoad, CudnnAttentionFit) {
  constexpr double kTolerance = 0.05;
  const Device h100 = load_device("H100-SXM5-80GB");
  size_t n = 0;
  for (const auto& c : test_data::rows("h100_attention_under_load.csv")) {
    const int64_t seq = std::stoll(c[0]), batch = std::stoll(c[1]), heads = std::stoll(c[2]);
    for (const bool backward : {false, true}) {
      const double measured = std::stod(c[backward ? 6 : 5]);
      const double modelled =
          kernel_time(h100, causal_attention(batch, heads, seq, backward)).microseconds();
      std::printf("seq %lld %s: %+.1f %%\n", static_cast<long long>(seq),
                  backward ? "backward" : "forward", 100 * (modelled / measured - 1));
      EXPECT_NEAR(modelled, measured, measured * kTolerance) << seq << " " << backward;
      ++n;
    }
  }
  EXPECT_EQ(n, 12u);
}

// The same kernel measured the same way on one H200, against the H200 preset: the forward pass
// keeps the H100's constants (a check: each point within 8 %, today largest 5.8 % at 512 tokens),
// the backward pass is fitted on these points (in-sample: each within 5 %, today largest 2.8 %).
TEST(SustainedLoad, H200CudnnAttention) {
  constexpr double kForwardCheck = 0.08, kBackwardFit = 0.05;
  const Device h200 = load_device("H200-SXM-141GB");
  size_t n = 0;
  for (const auto& c : test_data::rows("h200_attention_under_load.csv")) {
    const int64_t seq = std::stoll(c[0]), batch = std::stoll(c[1]), heads = std::stoll(c[2]);
    for (const bool backward : {false, true}) {
      const double measured = std::stod(c[backward ? 6 : 5]);
      const double modelled =
          kernel_time(h200, causal_attention(batch, heads, seq, backward)).microseconds();
      std::printf("h200 seq %lld %s: %+.1f %%\n", static_cast<long long>(seq),
                  backward ? "backward" : "forward", 100 * (modelled / measured - 1));
      EXPECT_NEAR(modelled, measured, measured * (backward ? kBackwardFit : kForwardCheck))
          << seq << " " << backward;
      ++n;
    }
  }
  EXPECT_EQ(n, 12u);
}

}  // namespace
}  // namespace orrery
