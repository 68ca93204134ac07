#include "hardware/op_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/diagnostics.h"
#include "hardware/device_file.h"

namespace orrery {
namespace {

// 4 units of 1 TFLOP/s bf16 each, one 128x128 tile, no efficiency loss, 1 TB/s, 1 us per kernel.
Device toy() {
  Device d;
  d.name = "toy";
  d.compute_units = 4;
  d.matrix[DType::BF16] = FlopRate::tflop_per_second(4);
  d.vector[DType::FP32] = FlopRate::tflop_per_second(40);
  d.memory_bandwidth = Bandwidth::gb_per_second(1000);
  d.kernel_overhead = Time::from_us(1);
  d.gemm_tiles = {{128, 128}};
  d.tile_reuse = 0;
  d.tile_k_overhead = 0;
  return d;
}

ComputeDemand gemm(int64_t m, int64_t n, int64_t k, int64_t batch = 1) {
  ComputeDemand d;
  d.kind = KernelClass::Gemm;
  d.dtype = DType::BF16;
  d.gemm = {batch, m, n, k};
  d.flop = 2.0 * batch * m * n * k;
  d.bytes = static_cast<Bytes>(batch * (m * k + k * n + m * n) * 2);
  return d;
}

double us(Time t) {
  return t.microseconds();
}

TEST(KernelTime, GemmWavesQuantize) {
  // 256 x 256: 4 tiles on 4 units, one wave of 2 * 128 * 128 * 1000 FLOP at 1 TFLOP/s each:
  // 32.768 us (+ 1 us); the 1.16 MB of operands take 1.16 us, hidden under the arithmetic.
  EXPECT_NEAR(us(kernel_time(toy(), gemm(256, 256, 1000))), 1 + 32.768, 1e-6);
  // 256 x 384: 6 tiles need 2 waves: 1.5 x the work, 2 x the time.
  EXPECT_NEAR(us(kernel_time(toy(), gemm(256, 384, 1000))), 1 + 2 * 32.768, 1e-6);
  // Batched: 3 products of 128 x 128 tiles: 3 tiles, one wave.
  EXPECT_NEAR(us(kernel_time(toy(), gemm(128, 128, 1000, 3))), 1 + 32.768, 1e-6);
}

TEST(KernelTime, SmallerTilesTradeReuseForUnits) {
  Device d = toy();
  d.gemm_tiles = {{128, 128}, {64, 64}};
  d.tile_reuse = 16;
  // A 64 x 64 output: one 128 x 128 tile wastes 3/4 of its work (32.768 us); a 64 x 64 tile does
  // a quarter of it at u = [32 / (32 + 16)] / [64 / (64 + 16)] = 5/6 the rate: 9.8304 us.
  EXPECT_NEAR(us(kernel_time(d, gemm(64, 64, 1000))), 1 + 8.192 / (5.0 / 6.0), 1e-6);
  // k0 adds a fixed prologue and epilogue per tile, in k steps.
  d.tile_k_overhead = 24;
  EXPECT_NEAR(us(kernel_time(d, gemm(64, 64, 1000))), 1 + 8.192 * 1.024 / (5.0 / 6.0), 1e-6);
}

TEST(KernelTime, SplitKFillsIdleUnitsWhenOutputTilesAreFew) {
  Device d = toy();
  // 128 x 128 x 4000: one output tile on 4 units. Without split-K one unit does all the work:
  // 2 * 128 * 128 * 4000 FLOP at 1 TFLOP/s = 131.072 us.
  EXPECT_NEAR(us(kernel_time(d, gemm(128, 128, 4000))), 1 + 131.072, 1e-6);
  // Split 4 ways: 4 tiles of k = 1000 fill the 4 units in one wave (32.768 us); the fp32
  // partial sums (128 x 128 x 4 B = 65.536 kB per split) are written while the operands
  // stream (2.08 MB + 0.26 MB, hidden) and read back after the arithmetic: 4 x 65.536 ns.
  d.max_split_k = 16;
  EXPECT_NEAR(us(kernel_time(d, gemm(128, 128, 4000))), 1 + 32.768 + 0.262144, 1e-6);
  // As many output tiles as units: no split (256 x 256 in 128 x 128 tiles, 4 units).
  EXPECT_NEAR(us(kernel_time(d, gemm(256, 256, 1000))), 1 + 32.768, 1e-6);
}

TEST(KernelTime, WeightGradientsWithLongKApproachTheirForward) {
  // A dW of 1280 x 1280 over K = 16384 tokens cost far more on H100 than the
  // forward GEMM of the same FLOPs (16384 x 1280 x 1280, 77.6 us), as its 100 output tiles leave
  // 32 of 132 SMs idle for the whole reduction: 95.2 us for the GEMM without split-K (22 % more).
  // With split-K (88.2 us) it stays within 15 %.
  const Device h100 = load_device("H100");
  const double forward = us(kernel_time(h100, gemm(16384, 1280, 1280)));
  const double weight_grad = us(kernel_time(h100, gemm(1280, 1280, 16384)));
  EXPECT_LT(weight_grad, 1.15 * forward) << weight_grad << " vs " << forward;
  // A tiny fp32 dW (4 x 16 over K = 2056): one 64 x 64 tile on one SM at the CUDA-core rate took
  // 56.9 us; split over 16 SMs it is a few microseconds above the kernel overhead (8.9 us).
  ComputeDemand tiny = gemm(4, 16, 2056);
  tiny.dtype = DType::FP32;
  tiny.bytes *= 2;
  EXPECT_LT(us(kernel_time(h100, tiny)), 10);
}

TEST(KernelTime, StreamingKernelsAreMemoryBound) {
  ComputeDemand copy;
  copy.kind = KernelClass::Copy;
  copy.bytes = 1'000'000'000;
  EXPECT_NEAR(us(kernel_time(toy(), copy)), 1 + 1000, 1e-6);  // 1 GB at 1 TB/s
  Device d = toy();
  d.memory_efficiency = 0.5;
  EXPECT_NEAR(us(kernel_time(d, copy)), 1 + 2000, 1e-6);
  // Arithmetic-heavy element-wise work is bound by the vector rate: 4e9 FLOP at 40 TFLOP/s.
  ComputeDemand heavy;
  heavy.kind = KernelClass::Elementwise;
  heavy.flop = 4e9;
  heavy.bytes = 1000;
  EXPECT_NEAR(us(kernel_time(toy(), heavy)), 1 + 100, 1e-6);
}

TEST(KernelTime, MissingDataTypeIsAnInputError) {
  ComputeDemand d = gemm(128, 128, 128);
  d.dtype = DType::FP8;
  EXPECT_THROW(kernel_time(toy(), d), InputError);
}

TEST(KernelTime, DfmodelChipIsDfmodelsFastMode) {
  // DFModel (compute_util 0.9): FLOP / (0.9 * 311,869.4326171875 GFLOP/s), no fixed cost.
  const Device chip = load_device("DFModel-A100");
  const ComputeDemand d = gemm(2048, 25600, 25600);
  const double seconds = d.flop / (0.9 * 311869.4326171875e9);
  EXPECT_NEAR(kernel_time(chip, d).seconds(), seconds, 1e-11);
}

// Published BF16 GEMM times (cuBLAS through PyTorch, CUDA-graph timed) from
// docs/references/calibration.md, tables 2-2 .. 2-5 (NVIDIA aiconfigurator
// database; A100-SXM4-80GB TensorRT-LLM 1.0.0 set, H100 80GB HBM3 TensorRT-LLM 1.3.0rc20 set).
// 0 = not measured, or flagged by the source as a kernel-selection artifact (A100 2048^3 and
// 1024 x 4096 x 4096).
struct Measured {
  int64_t m, n, k;
  double a100_us, h100_us;
};
constexpr Measured kGemms[] = {
    {256, 256, 256, 4.5, 3.2},
    {512, 512, 512, 6.5, 3.9},
    {1024, 1024, 1024, 17.9, 6.1},
    {2048, 2048, 2048, 0, 25.1},
    {4096, 4096, 4096, 514.1, 174.3},
    {8192, 8192, 8192, 4188.5, 1404.8},
    {16384, 16384, 16384, 0, 12522.9},
    {1, 4096, 4096, 26.2, 16.6},
    {16, 4096, 4096, 26.6, 16.6},
    {64, 4096, 4096, 27.5, 15.7},
    {128, 4096, 4096, 37.3, 16.1},
    {256, 4096, 4096, 54.8, 18.7},
    {512, 4096, 4096, 90.6, 25.2},
    {1024, 4096, 4096, 0, 45.3},
    {2048, 4096, 4096, 307.0, 88.0},
    {8192, 4096, 4096, 1035.5, 343.6},
    {16384, 4096, 4096, 0, 697.5},
    {128, 8192, 8192, 113.6, 52.1},
    {512, 8192, 8192, 316.9, 89.8},
    {1024, 8192, 8192, 532.2, 190.7},
    {2048, 8192, 8192, 1008.4, 346.3},
    {4096, 8192, 8192, 2115.9, 672.8},
    {16384, 8192, 8192, 0, 2817.6},
    {4096, 12288, 4096, 1607.4, 515.2},
    {4096, 16384, 4096, 2060.5, 733.0},
    {4096, 4096, 16384, 2068.0, 793.3},
    {4096, 6144, 12288, 2510.6, 752.9},
    {4096, 12288, 6144, 2440.6, 848.2},
    {4096, 1536, 12288, 594.6, 212.4},
    {4096, 12288, 1536, 619.1, 236.4},
    {4096, 7168, 8192, 1879.7, 590.5},
    {4096, 8192, 3584, 913.1, 319.6},
    {4096, 8192, 1024, 295.7, 98.1},
    {4096, 65536, 4096, 8555.3, 2890.5},
    {8192, 12288, 4096, 3242.9, 1018.3},
    {8192, 16384, 4096, 4279.2, 1652.9},
    {8192, 4096, 16384, 4316.6, 1380.9},
    {8192, 6144, 12288, 4837.2, 1544.2},
    {8192, 12288, 6144, 4816.1, 1525.4},
    {8192, 1536, 12288, 1178.3, 402.3},
    {8192, 12288, 1536, 1222.7, 417.1},
    {8192, 7168, 8192, 3633.7, 1172.9},
    {8192, 8192, 3584, 1794.4, 633.2},
    {8192, 8192, 1024, 559.1, 192.6},
    {8192, 65536, 4096, 16700.6, 6077.9},
};

// A preset as the short benchmarks of the calibration tables ran it: at burst clocks, before the
// board reaches its power limit (efficiency.sustained_matrix left out).
Device at_burst_clocks(const char* device_name) {
  Device d = load_device(device_name);
  d.sustained_matrix = 1;
  return d;
}

void expect_calibrated(const char* device_name, double Measured::*column, size_t points) {
  const Device device = at_burst_clocks(device_name);
  double sum = 0, largest = 0;
  size_t n = 0;
  for (const Measured& g : kGemms) {
    if (g.*column == 0) continue;
    const double modelled = us(kernel_time(device, gemm(g.m, g.n, g.k)));
    const double error = modelled / (g.*column) - 1;
    EXPECT_LT(std::fabs(error), 0.15) << device_name << " " << g.m << "x" << g.n << "x" << g.k
                                      << ": modelled " << modelled << " us, measured " << g.*column;
    sum += std::fabs(error);
    largest = std::max(largest, std::fabs(error));
    ++n;
  }
  EXPECT_EQ(n, points);
  EXPECT_LT(sum / static_cast<double>(n), 0.05) << device_name << " mean absolute error";
  std::printf("%s: mean absolute error %.2f %%, largest %.1f %%, over %zu GEMMs\n", device_name,
              100 * sum / static_cast<double>(n), 100 * largest, n);
}

// The GEMM tables are the data the presets were fitted on, so these two tests are in-sample: they
// hold the fit, not check it. The GEMM model's check against data it was not fitted on is Table 2-1
// (LargeGemmsApproachTheMeasuredMaximum below).
TEST(Calibration, A100GemmTimesWithin15PercentOfMeasured) {
  expect_calibrated("A100-SXM4-80GB", &Measured::a100_us, 40);
}

TEST(Calibration, H100GemmTimesWithin15PercentOfMeasured) {
  expect_calibrated("H100-SXM5-80GB", &Measured::h100_us, 45);
}

// Table 2-1 (best shape of a brute-force search): A100 SXM 271.2 and H100 SXM 794.5 TFLOP/s. A
// check: Table 2-1 was not fitted. The model gives 269.6 (-0.6 %) and 773 (-2.7 %) for 8192^3: it
// is slower than the best measured shape on both devices (docs/compute-model.md, "Validation").
TEST(Calibration, LargeGemmsApproachTheMeasuredMaximum) {
  constexpr double kTolerance = 0.05;  // relative; the H100's -2.7 % is the larger error
  const ComputeDemand big = gemm(8192, 8192, 8192);
  const double a100 = big.flop / kernel_time(at_burst_clocks("A100-80GB"), big).seconds() / 1e12;
  const double h100 = big.flop / kernel_time(at_burst_clocks("H100"), big).seconds() / 1e12;
  std::printf("8192^3: A100 %.1f, H100 %.1f TFLOP/s\n", a100, h100);
  EXPECT_NEAR(a100, 271.2, 271.2 * kTolerance);
  EXPECT_NEAR(h100, 794.5, 794.5 * kTolerance);
}

// Fused causal attention forward, BF16, head dim 128, 32 heads (causal FLOPs 2 b h s^2 d, as the
// tables count them).
ComputeDemand causal_attention(int64_t batch, int64_t seq) {
  ComputeDemand d;
  d.kind = KernelClass::Attention;
  d.dtype = DType::BF16;
  d.gemm = {batch * 32, seq, seq, 128};
  d.flop = 2.0 * static_cast<double>(batch * 32) * static_cast<double>(seq * seq) * 128;
  d.bytes = static_cast<Bytes>(4 * 2 * batch * 32 * seq * 128);  // Q, K, V and O in BF16
  return d;
}

// Table 2-6 (TensorRT-LLM's context attention, 32 KV heads, 16k tokens per batch) is what the
// A100 preset's efficiency.attention and attention_half_sequence were fitted on: in-sample, each
// point within 5 % (the preset header: largest 1.8 %). The H100 preset is fitted on cuDNN's
// training kernel instead (SustainedLoad.CudnnAttentionFit).
TEST(Calibration, FusedAttentionFitOnTable2_6) {
  constexpr double kTolerance = 0.05;
  struct Row {
    int64_t batch, seq;
    double a100_ms;
  };
  constexpr Row kRows[] = {{32, 512, 1.153}, {16, 1024, 1.577}, {8, 2048, 2.430},
                           {4, 4096, 4.232}, {2, 8192, 7.959},  {1, 16384, 15.048}};
  const Device a100 = load_device("A100-SXM4-80GB");
  for (const Row& r : kRows) {
    const double a100_ms = kernel_time(a100, causal_attention(r.batch, r.seq)).seconds() * 1e3;
    std::printf("seq %lld: A100 %+.1f %%\n", static_cast<long long>(r.seq),
                100 * (a100_ms / r.a100_ms - 1));
    EXPECT_NEAR(a100_ms, r.a100_ms, r.a100_ms * kTolerance) << r.seq;
  }
}

// A check of the H100 fit (cuDNN, measured by this project under load) on data it was not fitted
// on: Table 2-8, FlashAttention-3's causal forward on H100 (16k tokens per batch, head dim 128;
// read off the paper's charts). The model's rate is 1.12 of FA3's at 512 and 0.92-0.99 from 1k to
// 16k: each point within the band below; docs/compute-model.md, "Validation".
TEST(Calibration, FusedAttentionNearFlashAttention3) {
  constexpr double kLeastRateRatio = 0.85, kMostRateRatio = 1.15;  // model rate / FA3 rate
  const std::pair<int64_t, double> kFa3[] = {{512, 292},  {1024, 423}, {2048, 521},
                                             {4096, 579}, {8192, 602}, {16384, 616}};
  const Device h100 = load_device("H100-SXM5-80GB");
  for (const auto& [seq, fa3_tflops] : kFa3) {
    const ComputeDemand a = causal_attention(16384 / seq, seq);
    const double ratio = a.flop / kernel_time(h100, a).seconds() / 1e12 / fa3_tflops;
    std::printf("seq %lld: model / FlashAttention-3 rate %.2f\n", static_cast<long long>(seq),
                ratio);
    EXPECT_GE(ratio, kLeastRateRatio) << seq;
    EXPECT_LE(ratio, kMostRateRatio) << seq;
  }
}

// toy at 4 TFLOP/s bf16 with attention efficiency 0.5 and half rate at a 1,000-token key length /
// a 2 GFLOP fused attention over 1,000 keys takes 2e9 / (4e12 x 0.5 x 1000/2000) = 2 ms + 1 us,
// because short sequences leave the kernel's pipeline part empty.
TEST(OpCost, FusedAttentionRateFillsWithTheKeyLength) {
  Device d = toy();
  d.attention_efficiency = 0.5;
  d.attention_half_sequence = 1000;
  ComputeDemand a;
  a.kind = KernelClass::Attention;
  a.dtype = DType::BF16;
  a.flop = 2e9;
  a.gemm = {1, 1000, 1000, 128};
  EXPECT_NEAR(us(kernel_time(d, a)), 2000 + 1, 1e-6);
  a.gemm.n = 1'000'000;  // long sequences approach 0.5 of the peak: 1 ms
  EXPECT_NEAR(us(kernel_time(d, a)), 1000 * (1'001'000.0 / 1'000'000) + 1, 1e-3);
}

// toy with an FP8 peak twice bf16's and an FP8 efficiency of 0.5 / a 512^3 GEMM takes as long in
// FP8 as in bf16, because the per-type efficiency halves the doubled peak.
TEST(OpCost, MatrixEfficiencyFollowsTheOperandType) {
  Device d = toy();
  d.matrix[DType::FP8] = FlopRate::tflop_per_second(8);
  d.matrix_efficiency_by_type[DType::FP8] = 0.5;
  ComputeDemand bf16 = gemm(512, 512, 512);
  ComputeDemand fp8 = bf16;
  fp8.dtype = DType::FP8;
  EXPECT_NEAR(us(kernel_time(d, fp8)), us(kernel_time(d, bf16)), 1e-6);
  EXPECT_DOUBLE_EQ(d.matrix_efficiency_for(DType::BF16), 1.0);
}

// toy with half of a bf16 GEMM's output traffic beyond a 16-bit write exposed / a 256 x 256 x
// 1000 GEMM accumulating into fp32 (8 bytes a value) costs 0.5 x 65,536 x 6 B at 1 TB/s =
// 0.196608 us more than with a 16-bit output, because that share runs after the main loop; an
// fp32 write (4 bytes) a third of that; a type with no share, and a 16-bit output, nothing.
TEST(OpCost, ExposedEpilogueAddsTheOutputTrafficBeyondSixteenBits) {
  Device d = toy();
  d.exposed_epilogue_by_type[DType::BF16] = 0.5;
  ComputeDemand plain = gemm(256, 256, 1000);
  ComputeDemand accumulating = plain, fp32_out = plain;
  accumulating.gemm.output_bytes = 8;
  fp32_out.gemm.output_bytes = 4;
  const double base = us(kernel_time(d, plain));
  EXPECT_NEAR(base, 1 + 32.768, 1e-6);
  EXPECT_NEAR(us(kernel_time(d, accumulating)) - base, 0.196608, 1e-6);
  EXPECT_NEAR(us(kernel_time(d, fp32_out)) - base, 0.196608 / 3, 1e-6);
  EXPECT_NEAR(us(kernel_time(toy(), accumulating)), base, 1e-6);
}

// The same toy, a 1024 x 1024 x 8 GEMM accumulating into fp32 / memory-bound, it takes as long as
// streaming its 8,421,376 bytes at 1 TB/s (8.421376 us + 1), not its main loop (16 waves of
// 0.262144 us = 4.194 us) plus the exposed half of the 6 bytes a value (3.145728 us) on top of
// the whole stream, because the epilogue's traffic is part of that stream.
TEST(OpCost, ExposedEpilogueNeverExceedsStreamingEveryByte) {
  Device d = toy();
  d.exposed_epilogue_by_type[DType::BF16] = 0.5;
  ComputeDemand g = gemm(1024, 1024, 8);
  g.gemm.output_bytes = 8;
  g.bytes = (1024 * 8 * 2) * 2 + 1024 * 1024 * 8;
  EXPECT_NEAR(us(kernel_time(d, g)), 1 + 8.421376, 1e-6);
  // With k = 64 the main loop (33.554 us) dominates: 1 + 33.554432 + 3.145728.
  ComputeDemand longer = gemm(1024, 1024, 64);
  longer.gemm.output_bytes = 8;
  longer.bytes = (1024 * 64 * 2) * 2 + 1024 * 1024 * 8;
  EXPECT_NEAR(us(kernel_time(d, longer)), 1 + 33.554432 + 3.145728, 1e-6);
}

}  // namespace
}  // namespace orrery
