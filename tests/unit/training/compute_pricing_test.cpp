#include "training/compute_pricing.h"

#include <gtest/gtest.h>

#include "hardware/device_file.h"
#include "hardware/op_cost.h"
#include "synthetic_workloads.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

ComputeDemand copy_of(Bytes bytes) {
  ComputeDemand d;
  d.kind = KernelClass::Copy;
  d.bytes = bytes;
  return d;
}

Workload one_layer_with_kernels() {
  Layer l = testing::layer("op", Time::zero(), Time::zero(), Time::zero());
  l.forward.kernels = {copy_of(1'000'000'000), copy_of(500'000'000)};
  l.input_grad.kernels = {copy_of(2'000'000'000)};
  return testing::uniform_workload(1, 1, 1, l);
}

TEST(ComputePricing, PhasesGetTheSumOfTheirKernelTimes) {
  Workload w = one_layer_with_kernels();
  EXPECT_TRUE(has_compute_demands(w));
  price_compute(w, load_device("H100-SXM5-80GB"));
  // H100 preset: 2.5 us per kernel, 3.35 TB/s at efficiency 0.75.
  const auto copy_seconds = [](double bytes) { return 2.5e-6 + bytes / (3.35e12 * 0.75); };
  const Layer& l = w.program.layers[0];
  EXPECT_NEAR(l.forward.compute.seconds(), copy_seconds(1e9) + copy_seconds(5e8), 2e-12);
  EXPECT_NEAR(l.input_grad.compute.seconds(), copy_seconds(2e9), 1e-12);
  EXPECT_EQ(l.weight_grad.compute, Time::zero());  // no kernels: the file's time stays
}

// A phase whose first GEMM runs beside a collective (Phase::overlapped) gets that GEMM's own time
// beside the phase's total, as kernel_time prices it: the copy before it and the GEMM after it
// are not overlapped.
TEST(ComputePricing, TheOverlappedGemmIsPricedOnItsOwn) {
  ComputeDemand gemm;
  gemm.kind = KernelClass::Gemm;
  gemm.dtype = DType::BF16;
  gemm.gemm = {1, 4096, 4096, 4096};
  gemm.flop = 2.0 * 4096 * 4096 * 4096;
  gemm.bytes = 3 * 4096 * 4096 * 2;
  ComputeDemand other = gemm;
  other.gemm = {1, 4096, 1024, 4096};
  other.flop /= 4;
  Layer l = testing::layer("op", Time::zero(), Time::zero(), Time::zero());
  l.forward.kernels = {copy_of(1'000'000'000), gemm, other};
  l.forward.overlapped = GemmOverlap{};
  Workload w = testing::uniform_workload(1, 1, 1, l);
  const Device h100 = load_device("H100-SXM5-80GB");
  price_compute(w, h100);
  const Phase& forward = w.program.layers[0].forward;
  EXPECT_EQ(forward.overlapped->gemm, kernel_time(h100, gemm));
  EXPECT_EQ(forward.compute, kernel_time(h100, copy_of(1'000'000'000)) + kernel_time(h100, gemm) +
                                 kernel_time(h100, other));
}

TEST(ComputePricing, WorkloadsWithTimesAreLeftAlone) {
  Workload w = testing::uniform_workload(
      1, 1, 2, testing::layer("l", testing::us(10), testing::us(20), testing::us(30)));
  EXPECT_FALSE(has_compute_demands(w));
  price_compute(w, load_device("A100"));
  EXPECT_EQ(w.program.layers[1].input_grad.compute, testing::us(20));
}

TEST(ComputePricing, DeviceFromOverrideThenClusterThenFallback) {
  Cluster c = testing::test_cluster();
  Diagnostics d;
  c.gpu = "A100-SXM4-80GB";  // as in the dgx-a100 preset
  EXPECT_EQ(compute_device(c, "", d).name, "A100-SXM4-80GB");
  EXPECT_EQ(compute_device(c, "H200", d).name, "H200-SXM-141GB");
  EXPECT_TRUE(d.warnings().empty());
  c.gpu = "unspecified";  // as in simai-default
  EXPECT_EQ(compute_device(c, "", d).name, "H100-SXM5-80GB");
  ASSERT_EQ(d.warnings().size(), 1u);
  EXPECT_NE(d.warnings()[0].message.find("names no known device"), std::string::npos);
  EXPECT_THROW(compute_device(c, "no-such-device", d), InputError);
}

TEST(ComputePricing, OneRankIterationIsItsKernels) {
  // One stage, one rank, no collective: the event simulation's iteration is the priced compute.
  Workload w = one_layer_with_kernels();
  const Device h100 = load_device("H100");
  price_compute(w, h100);
  Diagnostics d;
  const Result r = EventSimulator().simulate(w, testing::test_cluster(), {}, d);
  const Time expected = kernel_time(h100, copy_of(1'000'000'000)) +
                        kernel_time(h100, copy_of(500'000'000)) +
                        kernel_time(h100, copy_of(2'000'000'000));
  EXPECT_EQ(r.iteration_time, expected);
  EXPECT_EQ(r.breakdown.compute, expected);
}

}  // namespace
}  // namespace orrery
