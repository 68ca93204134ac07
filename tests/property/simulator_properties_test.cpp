// Properties every simulation must have, checked over random valid inputs (random_inputs.h;
// fixed seeds, so every run checks the same cases): more link bandwidth or faster compute never
// makes an iteration slower with a fixed schedule, in event and analytical mode; the breakdown
// always partitions the iteration time; the same inputs give the same result, in every mode.
#include <gtest/gtest.h>

#include "hardware/device_file.h"
#include "random_inputs.h"
#include "training/analytical_simulator.h"
#include "training/compute_pricing.h"
#include "training/event_simulator.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

using testing::random_case;
using testing::RandomCase;

constexpr uint64_t kFirstSeed = 1;
constexpr uint64_t kCases = 1000;

Result run(const Simulator& simulator, const Workload& w, const Cluster& c,
           const SimulationOptions& o) {
  Diagnostics d;
  return simulator.simulate(w, c, o, d);
}

void expect_partitioned(const Result& r, const std::string& label) {
  for (const StageTiming& s : r.stages)
    EXPECT_EQ(s.breakdown.total(), s.finish) << label << ", stage " << s.stage;
  EXPECT_EQ(r.breakdown.total(), r.iteration_time) << label;
}

bool same_breakdown(const Breakdown& a, const Breakdown& b) {
  return a.compute == b.compute && a.exposed_comm == b.exposed_comm && a.bubble == b.bubble &&
         a.p2p == b.p2p;
}

void expect_same(const Result& a, const Result& b, const std::string& label) {
  EXPECT_EQ(a.iteration_time, b.iteration_time) << label;
  EXPECT_TRUE(same_breakdown(a.breakdown, b.breakdown)) << label;
  EXPECT_EQ(a.critical_stage, b.critical_stage) << label;
  ASSERT_EQ(a.stages.size(), b.stages.size()) << label;
  for (size_t s = 0; s < a.stages.size(); ++s) {
    EXPECT_EQ(a.stages[s].finish, b.stages[s].finish) << label << ", stage " << s;
    EXPECT_TRUE(same_breakdown(a.stages[s].breakdown, b.stages[s].breakdown))
        << label << ", stage " << s;
  }
  ASSERT_EQ(a.layers.size(), b.layers.size()) << label;
  for (size_t k = 0; k < a.layers.size(); ++k)
    for (const auto phase :
         {&LayerTiming::forward, &LayerTiming::input_grad, &LayerTiming::weight_grad}) {
      const PhaseTiming &pa = a.layers[k].*phase, &pb = b.layers[k].*phase;
      EXPECT_EQ(pa.compute, pb.compute) << label << ", layer " << k;
      EXPECT_EQ(pa.comm.has_value(), pb.comm.has_value()) << label << ", layer " << k;
      if (pa.comm && pb.comm) {
        EXPECT_EQ(pa.comm->cost, pb.comm->cost) << label << ", layer " << k;
      }
    }
  EXPECT_EQ(a.simulated_tasks, b.simulated_tasks) << label;
  EXPECT_EQ(a.flows, b.flows) << label;
  ASSERT_EQ(a.hottest_links.size(), b.hottest_links.size()) << label;
  for (size_t k = 0; k < a.hottest_links.size(); ++k) {
    EXPECT_EQ(a.hottest_links[k].name, b.hottest_links[k].name) << label;
    EXPECT_EQ(a.hottest_links[k].bytes, b.hottest_links[k].bytes) << label;
    EXPECT_EQ(a.hottest_links[k].busy, b.hottest_links[k].busy) << label;
    EXPECT_EQ(a.hottest_links[k].peak_utilization, b.hottest_links[k].peak_utilization) << label;
  }
}

// The event and analytical simulators, by name, for the loops below.
const std::vector<std::pair<std::string, const Simulator*>>& timed_modes() {
  static const EventSimulator event;
  static const AnalyticalSimulator analytical;
  static const std::vector<std::pair<std::string, const Simulator*>> modes = {
      {"event", &event}, {"analytical", &analytical}};
  return modes;
}

TEST(SimulatorProperties, BreakdownPartitionsTheIterationInEveryMode) {
  // Random jobs / the critical stage's compute, exposed communication, bubble and transfer waits
  // add up to the iteration time exactly, and every stage's to its finish, because the
  // breakdown is what the reports print as a partition of the iteration.
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kCases; ++seed) {
    const RandomCase c = random_case(seed);
    for (const auto& [mode, simulator] : timed_modes())
      expect_partitioned(run(*simulator, c.workload, c.cluster, c.options), mode + ", " + c.label);
  }
}

TEST(SimulatorProperties, MoreLinkBandwidthIsNeverSlower) {
  // Random jobs with a fixed schedule / the iteration takes no longer when every link, or the
  // links of one network dimension, get 1.5 or 3 times the bandwidth, because every collective
  // and transfer is priced no higher on faster links and a fixed schedule runs the same tasks
  // in the same order.
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kCases; ++seed) {
    const RandomCase c = random_case(seed);
    std::vector<std::pair<std::string, Cluster>> faster;
    for (const double factor : {1.5, 3.0})
      faster.emplace_back("all links x" + std::to_string(factor),
                          testing::with_bandwidth(c.cluster, factor));
    for (size_t d = 0; d < c.cluster.network.size(); ++d)
      faster.emplace_back("dimension " + std::to_string(d) + " x2",
                          testing::with_bandwidth(c.cluster, 2, d));
    for (const auto& [mode, simulator] : timed_modes()) {
      const Time base = run(*simulator, c.workload, c.cluster, c.options).iteration_time;
      for (const auto& [what, cluster] : faster)
        EXPECT_LE(run(*simulator, c.workload, cluster, c.options).iteration_time, base)
            << mode << ", " << c.label << ", " << what;
    }
  }
}

TEST(SimulatorProperties, FasterComputeIsNeverSlower) {
  // Random jobs with a fixed schedule / the iteration takes no longer when every compute span is
  // 1.25 or 2 times shorter (a faster device), because no task starts later when the tasks
  // before it end sooner (and analytical mode's overlap window is the backward's span).
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kCases; ++seed) {
    const RandomCase c = random_case(seed);
    for (const auto& [mode, simulator] : timed_modes()) {
      const Time base = run(*simulator, c.workload, c.cluster, c.options).iteration_time;
      for (const double factor : {1.25, 2.0}) {
        const Workload faster = testing::with_faster_compute(c.workload, factor);
        EXPECT_LE(run(*simulator, faster, c.cluster, c.options).iteration_time, base)
            << mode << ", " << c.label << ", compute / " << factor;
      }
    }
  }
}

TEST(SimulatorProperties, ResultsAreIdenticalRunToRun) {
  // Random jobs, every mode (flow mode on the smaller half) / a second run gives the same result
  // to the picosecond and the byte, because Orrery is deterministic (docs/architecture.md): no wall
  // clock, no unordered iteration in results.
  static const FlowSimulator flow;
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kCases; ++seed) {
    const RandomCase c = random_case(seed);
    for (const auto& [mode, simulator] : timed_modes())
      expect_same(run(*simulator, c.workload, c.cluster, c.options),
                  run(*simulator, c.workload, c.cluster, c.options), mode + ", " + c.label);
    if (c.workload.parallelism.world_size <= 32 && seed % 4 == 0) {
      const Result first = run(flow, c.workload, c.cluster, c.options);
      expect_same(first, run(flow, c.workload, c.cluster, c.options), "flow, " + c.label);
      expect_partitioned(first, "flow, " + c.label);
    }
  }
}

TEST(SimulatorProperties, AnalyticalOverlapWindowIsTheBackwardSpan) {
  // The random job of seed 1204 (tp 2, dp 2, one micro-batch, overlap; 2 layers whose
  // input-gradient tensor-parallel collectives of 18 and 101 MB outlast their weight-gradient
  // compute, and a 177 MB data-parallel all-reduce) with compute 1.25 and 2 times shorter /
  // analytical mode gives no longer an iteration, as event mode does, because the closed form
  // hides the reduction behind the last backward's span (its exposed collectives included), not
  // its compute alone, which shrank the window more than the backward (fixed since).
  const RandomCase c = random_case(1204);
  const AnalyticalSimulator analytical;
  const Time base = run(analytical, c.workload, c.cluster, c.options).iteration_time;
  for (const double factor : {1.25, 2.0}) {
    const Workload faster = testing::with_faster_compute(c.workload, factor);
    EXPECT_LE(run(analytical, faster, c.cluster, c.options).iteration_time, base)
        << "compute / " << factor;
  }
}

// A workload whose compute is given as kernels (FLOPs and bytes), as operator-level formats
// give it: GEMMs, layer norms, softmaxes and copies of random sizes.
Workload random_kernel_workload(uint64_t seed) {
  testing::Draw draw(seed);
  RandomCase c = random_case(seed);
  for (Layer& l : c.workload.program.layers)
    for (Phase* phase : {&l.forward, &l.input_grad, &l.weight_grad}) {
      phase->compute = Time::zero();
      phase->kernels.clear();
      for (int64_t k = draw.between(0, 3); k > 0; --k) {
        ComputeDemand d;
        d.kind =
            draw.pick<KernelClass>({KernelClass::Gemm, KernelClass::LayerNorm, KernelClass::Softmax,
                                    KernelClass::Copy, KernelClass::Elementwise});
        d.dtype = draw.pick<DType>({DType::BF16, DType::FP16, DType::FP32});
        if (d.kind == KernelClass::Gemm) {
          d.gemm = {draw.between(1, 4), draw.between(1, 8192), draw.between(1, 8192),
                    draw.between(1, 8192)};
          d.flop = 2.0 * static_cast<double>(d.gemm.batch * d.gemm.m) *
                   static_cast<double>(d.gemm.n * d.gemm.k);
          d.bytes = static_cast<Bytes>(
              2 * d.gemm.batch * (d.gemm.m * d.gemm.k + d.gemm.k * d.gemm.n + d.gemm.m * d.gemm.n));
        } else {
          d.bytes = static_cast<Bytes>(draw.log_between(1e3, 1e9));
          d.flop = static_cast<double>(d.bytes) * draw.log_between(0.1, 10);
          d.rows = draw.between(1, 65536);
        }
        phase->kernels.push_back(d);
      }
    }
  return c.workload;
}

// `device` with its peak rates, memory bandwidth and per-kernel cost `factor` times better.
Device faster_device(const Device& device, double factor) {
  Device d = device;
  for (auto* rates : {&d.matrix, &d.vector})
    for (auto& [type, rate] : *rates)
      rate = rate * factor;
  d.memory_bandwidth = d.memory_bandwidth * factor;
  d.kernel_overhead = d.kernel_overhead.scaled(1 / factor);
  return d;
}

// The device presets with matrix and vector rates for every type the kernels above use (all but
// DFModel's chip, which prices its own kernels).
std::vector<std::string> gpu_presets() {
  std::vector<std::string> names;
  for (const std::string& name : device_preset_names()) {
    const Device d = load_device(name);
    bool complete = true;
    for (const DType t : {DType::BF16, DType::FP16, DType::FP32})
      complete = complete && d.matrix.count(t) && d.vector.count(t);
    if (complete) names.push_back(name);
  }
  return names;
}

TEST(SimulatorProperties, AFasterDeviceIsNeverSlower) {
  // Random jobs given as kernels, priced on a GPU preset and on the same device 1.5 times
  // faster in every rate / the iteration takes no longer on the faster device, in event and
  // analytical mode, because no kernel is priced higher and the schedule is fixed.
  for (uint64_t seed = kFirstSeed; seed < kFirstSeed + kCases / 3; ++seed) {
    const Workload kernels = random_kernel_workload(seed);
    const RandomCase c = random_case(seed);  // its cluster and options
    const std::vector<std::string> devices = gpu_presets();
    const std::string& device_name = devices[seed % devices.size()];
    const Device device = load_device(device_name);
    Workload base = kernels, faster = kernels;
    price_compute(base, device);
    price_compute(faster, faster_device(device, 1.5));
    for (const auto& [mode, simulator] : timed_modes())
      EXPECT_LE(run(*simulator, faster, c.cluster, c.options).iteration_time,
                run(*simulator, base, c.cluster, c.options).iteration_time)
          << mode << ", " << c.label << ", kernels priced on " << device_name << " x1.5";
  }
}

}  // namespace
}  // namespace orrery
