// Reader for the text output of NVIDIA's nccl-tests (all_reduce_perf, all_gather_perf,
// reduce_scatter_perf, alltoall_perf, broadcast_perf, reduce_perf, sendrecv_perf, ...), as a
// user saves it from a run:
//
//   # nccl-tests version 2.13.11 nccl-headers=22105 nccl-library=22105     (newer versions)
//   # Collective test starting: all_reduce_perf                            (newer versions)
//   # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 ...
//   #
//   # Using devices
//   #  Rank  0 Group  0 Pid   1234 on   host-0 device  0 [0x18] NVIDIA H100 80GB HBM3
//   ...                                                                    (one line per GPU)
//   #
//   #                                                     out-of-place in-place #       size count
//   type   redop    root     time   algbw   busbw #wrong     time ... #        (B)    (elements)
//   (us)  (GB/s)  (GB/s)            (us) ...
//              8             2     float     sum      -1    36.79    0.00    0.00      0    35.93
//              ...
//   ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 123.456
//
// Translation only (no timing): the column header names the columns (older versions lack
// `redop` or `root` for some collectives, say `error` for `#wrong`, and `-T`/per-iteration runs
// add columns), so each data row must have as many fields; the size is the `size` column in
// bytes and the time the first `time` (or `cputime`) column: the out-of-place time, in
// microseconds. NCCL_DEBUG lines ("... NCCL INFO ...") among the rows are skipped.
//
// The GPU count is the number of distinct ranks of the `#  Rank` lines, or nThread x nGpus when
// there are none. The collective is the one of the binary: the `# Collective test starting:`
// line, else the first line naming a `*_perf` binary (a command line kept with the output), else
// the file name (all_reduce..., allgather..., alltoall...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bandwidth.h"
#include "core/collective_kind.h"

namespace orrery {

struct NcclTestsRow {
  int64_t line = 0;    // 1-based
  Bytes bytes = 0;     // the size column
  double time_us = 0;  // out-of-place time, microseconds
};

struct NcclTestsLog {
  std::string path;
  // nccl-tests' name of the collective, as its binary names it: "all_reduce", "all_gather",
  // "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", or one Orrery does not model
  // ("gather", "scatter", "hypercube", ...).
  std::string op;
  std::optional<CollectiveKind> kind;  // none for a collective Orrery does not model
  int64_t op_line = 0;                 // where the collective was told; 0: by the file name
  int64_t gpus = 0;
  int64_t gpus_line = 0;  // the first `#  Rank` line, or the `# nThread` line
  std::string device;     // the first rank's device, e.g. "NVIDIA H100 80GB HBM3" ("" if none)
  std::vector<NcclTestsRow> rows;
};

// The collective of an nccl-tests name ("all_reduce", "alltoall", ...); nullopt for others.
std::optional<CollectiveKind> nccl_tests_collective(std::string_view op);

// Throws InputError ("path:line: expected ...") for malformed output: a data row with the wrong
// number of fields or a field that is not a number, no column header or no data rows, a second
// run in the same file, a collective or GPU count that cannot be told.
NcclTestsLog read_nccl_tests_log(const std::string& path, std::string_view content);

}  // namespace orrery
