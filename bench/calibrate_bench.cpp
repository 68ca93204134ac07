// `orrery calibrate`'s work on one 8-GPU log: reading the nccl-tests output (20 sizes, 8 B to
// 16 GiB, H100 all-reduce) and fitting hgx-h100's NVSwitch efficiency and latency scale to it
// (coarse scans, then Gauss-Newton; every evaluation prices all 20 sizes with a fresh model).
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "cluster/calibration.h"
#include "cluster/cluster.h"
#include "formats/nccl_tests_log.h"

namespace orrery {
namespace {

void BM_CalibrateOneEightGpuLog(benchmark::State& state) {
  const std::string path =
      ORRERY_SOURCE_DIR "/tests/data/nccl_tests_logs/h100_all_reduce_perf_8gpus.log";
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  const Cluster cluster = load_cluster("hgx-h100");
  int iterations = 0;
  for (auto _ : state) {
    const NcclTestsLog log = read_nccl_tests_log(path, text.str());
    MeasuredSeries series{"log", {path, log.gpus_line}, *log.kind, log.gpus, {}};
    for (const NcclTestsRow& row : log.rows)
      series.points.push_back({row.bytes, Time::from_seconds(row.time_us * 1e-6)});
    const Calibration c = calibrate(cluster, {series});
    iterations = c.dimensions.front().iterations;
    benchmark::DoNotOptimize(c);
  }
  state.counters["gauss_newton_steps"] = iterations;
}
BENCHMARK(BM_CalibrateOneEightGpuLog)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace orrery
