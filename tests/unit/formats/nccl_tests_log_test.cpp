#include "formats/nccl_tests_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/diagnostics.h"

namespace orrery {
namespace {

const std::string kLogs = ORRERY_SOURCE_DIR "/tests/data/nccl_tests_logs/";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A small log in the current layout: 2 GPUs, two rows.
std::string small_log(const std::string& rows, const std::string& op = "all_reduce") {
  return "# nccl-tests version 2.13.11 nccl-headers=22105 nccl-library=22105\n"
         "# Collective test starting: " +
         op +
         "_perf\n"
         "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 "
         "agg iters: 1 validation: 1 graph: 0\n"
         "#\n"
         "# Using devices\n"
         "#  Rank  0 Group  0 Pid   1887 on   worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3\n"
         "#  Rank  1 Group  0 Pid   1888 on   worker-1 device  1 [0x91] NVIDIA H100 80GB HBM3\n"
         "#\n"
         "#                                                              out-of-place           "
         "            in-place          \n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong   "
         "  time   algbw   busbw #wrong\n"
         "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)          "
         "  (us)  (GB/s)  (GB/s)       \n" +
         rows + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.0012 \n#\n";
}

const std::string kRow8 =
    "           8             2     float     sum      -1    10.20    0.00    0.00      0    "
    "10.05    0.00    0.00      0\n";
const std::string kRow16 =
    "          16             4     float     sum      -1    11.50    0.00    0.00      0    "
    "11.31    0.00    0.00      0\n";

std::string error_of(const std::string& path, const std::string& text) {
  try {
    read_nccl_tests_log(path, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NcclTestsLog, ReadsTheCurrentLayout) {
  const std::string path = kLogs + "h100_all_reduce_perf_8gpus.log";
  const NcclTestsLog log = read_nccl_tests_log(path, file_text(path));
  EXPECT_EQ(log.op, "all_reduce");
  EXPECT_EQ(log.kind, CollectiveKind::AllReduce);
  EXPECT_EQ(log.op_line, 2);  // "# Collective test starting: all_reduce_perf"
  EXPECT_EQ(log.gpus, 8);
  EXPECT_EQ(log.gpus_line, 6);
  EXPECT_EQ(log.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(log.rows.size(), 20u);
  EXPECT_EQ(log.rows.front().bytes, 8u);
  EXPECT_DOUBLE_EQ(log.rows.front().time_us, 13.67);
  EXPECT_EQ(log.rows.front().line, 18);
  EXPECT_EQ(log.rows.back().bytes, 17179869184u);
  EXPECT_DOUBLE_EQ(log.rows.back().time_us, 62648.0);
}

TEST(NcclTestsLog, ReadsTheOldLayoutAndTakesTheCollectiveFromTheFileName) {
  const std::string path = kLogs + "h100_allgather_4gpus_old_layout.log";
  const NcclTestsLog log = read_nccl_tests_log(path, file_text(path));
  EXPECT_EQ(log.op, "all_gather");
  EXPECT_EQ(log.kind, CollectiveKind::AllGather);
  EXPECT_EQ(log.op_line, 0);
  EXPECT_EQ(log.gpus, 4);
  ASSERT_EQ(log.rows.size(), 9u);
  EXPECT_EQ(log.rows[2].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(log.rows[2].time_us, 13.6);
}

TEST(NcclTestsLog, CollectiveFromTheBinaryOnACommandLine) {
  std::string text = small_log(kRow8);
  text.replace(text.find("# Collective test starting: all_reduce_perf\n"),
               std::string("# Collective test starting: all_reduce_perf\n").size(), "");
  // A command line kept with the output, MPI build.
  const NcclTestsLog log = read_nccl_tests_log(
      "run.txt", "$ mpirun -np 2 ./build/reduce_scatter_perf_mpi -b 8 -e 16 -g 1\n" + text);
  EXPECT_EQ(log.op, "reduce_scatter");
  EXPECT_EQ(log.op_line, 1);
  // "reduce" is not read into "all_reduce", nor "reduce_scatter" into "reduce".
  EXPECT_EQ(read_nccl_tests_log("x.log", small_log(kRow8, "reduce")).kind, CollectiveKind::Reduce);
  EXPECT_EQ(read_nccl_tests_log("x.log", small_log(kRow8, "alltoall")).kind,
            CollectiveKind::AllToAll);
  EXPECT_EQ(read_nccl_tests_log("x.log", small_log(kRow8, "sendrecv")).kind,
            CollectiveKind::SendRecv);
}

TEST(NcclTestsLog, CollectivesOrreryDoesNotModelAreReadWithoutAKind) {
  const NcclTestsLog log = read_nccl_tests_log("x.log", small_log(kRow8, "gather"));
  EXPECT_EQ(log.op, "gather");
  EXPECT_FALSE(log.kind);
}

TEST(NcclTestsLog, GpuCountFromTheRankLinesOrTheThreadLine) {
  EXPECT_EQ(read_nccl_tests_log("x.log", small_log(kRow8 + kRow16)).gpus, 2);
  std::string text = small_log(kRow8);
  for (int r = 0; r < 2; ++r) {
    const size_t at = text.find("#  Rank");
    text.erase(at, text.find('\n', at) - at + 1);
  }
  const NcclTestsLog log = read_nccl_tests_log("x.log", text);
  EXPECT_EQ(log.gpus, 2);  // nThread 1 x nGpus 2
  EXPECT_EQ(log.gpus_line, 3);
}

TEST(NcclTestsLog, DebugOutputAmongTheRowsIsSkipped) {
  const NcclTestsLog log = read_nccl_tests_log(
      "x.log",
      small_log(kRow8 + "worker-1:1887:1900 [0] NCCL INFO Channel 00/24 : 0 1\n" + kRow16));
  ASSERT_EQ(log.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(log.rows[1].time_us, 11.5);
}

TEST(NcclTestsLog, TimestampAndScientificTimes) {
  std::string text = small_log(
      "           8             2     float     sum      -1  1.2e+07    0.00    0.00      0  "
      "1.2e+07    0.00    0.00      0 2025-01-01 10:00:00\n");
  text.replace(text.find("#wrong\n"), 7, "#wrong timestamp\n");
  const NcclTestsLog log = read_nccl_tests_log("x.log", text);
  EXPECT_DOUBLE_EQ(log.rows.at(0).time_us, 1.2e7);
}

TEST(NcclTestsLog, MalformedLogsAreOneLineErrorsAtTheirLine) {
  // Line 12 is the first data row of small_log().
  EXPECT_EQ(error_of("a.log", small_log("           8             2     float     sum      -1    "
                                        "10.20    0.00    0.00      0\n")),
            "a.log:12: expected 13 fields (size count type redop root time algbw busbw #wrong time "
            "algbw busbw #wrong), found 9");
  EXPECT_EQ(error_of("a.log", small_log("           8             2     float     sum      -1    "
                                        "fast    0.00    0.00      0    10.05    0.00    0.00  "
                                        "    0\n")),
            "a.log:12: expected the out-of-place time in microseconds (a number from 0 to 1e11), "
            "found 'fast'");
  EXPECT_EQ(error_of("a.log", small_log(kRow8 + "          1x             4     float     sum    "
                                                "  -1    11.50    0.00    0.00      0    11.31 "
                                                "   0.00    0.00      0\n")),
            "a.log:13: expected the size in bytes (a whole number up to 1 PiB), found '1x'");
  EXPECT_EQ(error_of("a.log", small_log("           8             2     float     sum      -1    "
                                        "10.20    n/a    0.00      0    10.05    0.00    0.00  "
                                        "    0\n")),
            "a.log:12: expected the out-of-place algbw in GB/s (a number), found 'n/a'");
  EXPECT_EQ(error_of("a.log", small_log("")),
            "a.log:10: expected data rows after the column header, found none");
  EXPECT_EQ(error_of("a.log", "NCCL version 2.21.5+cuda12.4\nsegmentation fault\n"),
            "a.log:1: expected nccl-tests output: a column header ('#  size  count  type ...  "
            "time  algbw  busbw ...') followed by data rows; found no column header");
  std::string anonymous = small_log(kRow8);
  anonymous.replace(anonymous.find("# Collective test starting: all_reduce_perf\n"),
                    std::string("# Collective test starting: all_reduce_perf\n").size(), "");
  EXPECT_EQ(error_of("results/run1.txt", anonymous)
                .rfind("results/run1.txt:1: expected the "
                       "collective: a '# Collective test "
                       "starting: all_reduce_perf' line",
                       0),
            0u)
      << error_of("results/run1.txt", anonymous);
  // A zero time for a non-empty message, a result the run found wrong, and a thread line whose
  // GPUs per process do not divide the ranks listed: figures that would calibrate nonsense.
  EXPECT_EQ(error_of("a.log", small_log("           8             2     float     sum      -1    "
                                        "0.00    0.00    0.00      0    10.05    0.00    0.00  "
                                        "    0\n")),
            "a.log:12: expected a positive out-of-place time for 8 bytes, found '0.00'");
  EXPECT_EQ(error_of("a.log", small_log(kRow8 + "          16             4     float     sum    "
                                                "  -1    11.50    0.00    0.00      3    11.31 "
                                                "   0.00    0.00      0\n")),
            "a.log:13: expected a run whose results checked out, found 3 wrong values (#wrong) "
            "at 16 bytes");
  std::string three = small_log(kRow8);
  three.replace(three.find("nGpus 2"), 7, "nGpus 3");
  EXPECT_EQ(error_of("a.log", three),
            "a.log:3: expected nThread x nGpus (3) GPUs per process, a divisor of the 2 ranks "
            "listed");
  // Two runs in one file.
  EXPECT_EQ(error_of("a.log", small_log(kRow8) + small_log(kRow16)),
            "a.log:18: expected one nccl-tests run per file; a second run starts here");
  for (const std::string& text : {small_log("oops\n"), small_log(kRow8 + "1 2 3\n")}) {
    const std::string e = error_of("a.log", text);
    EXPECT_EQ(e.rfind("a.log:1", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace orrery
