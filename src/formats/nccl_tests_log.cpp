#include "formats/nccl_tests_log.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>
#include <utility>

#include "core/diagnostics.h"
#include "core/text.h"

namespace orrery {
namespace {

constexpr std::array<std::pair<std::string_view, CollectiveKind>, 7> kModelled = {{
    {"all_reduce", CollectiveKind::AllReduce},
    {"all_gather", CollectiveKind::AllGather},
    {"reduce_scatter", CollectiveKind::ReduceScatter},
    {"alltoall", CollectiveKind::AllToAll},
    {"broadcast", CollectiveKind::Broadcast},
    {"reduce", CollectiveKind::Reduce},
    {"sendrecv", CollectiveKind::SendRecv},
}};

// Spellings a file name may use for each collective, longest first where one contains another
// (a name holding "all_reduce" also holds "reduce").
constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kFileNameSpellings = {{
    {"reduce_scatter", "reduce_scatter"},
    {"reducescatter", "reduce_scatter"},
    {"all_reduce", "all_reduce"},
    {"allreduce", "all_reduce"},
    {"all_gather", "all_gather"},
    {"allgather", "all_gather"},
    {"all_to_all", "alltoall"},
    {"alltoall", "alltoall"},
    {"broadcast", "broadcast"},
    {"sendrecv", "sendrecv"},
    {"reduce", "reduce"},
}};

// Bounds far beyond any real measurement, which keep every time the model derives in range.
constexpr Bytes kMaxBytes = Bytes{1} << 50;  // 1 PiB
constexpr double kMaxTimeUs = 1e11;          // about a day

constexpr std::string_view kBinaries =
    "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, "
    "reduce_perf or sendrecv_perf";

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

// The collective of the first `NAME_perf` binary a line names ("./build/all_reduce_perf -b 8",
// "all_gather_perf_mpi"), or "".
std::string binary_op(std::string_view line) {
  for (size_t at = line.find("_perf"); at != std::string_view::npos;
       at = line.find("_perf", at + 1)) {
    const size_t after = at + 5;
    if (after < line.size() && is_name_char(line[after]) && line.substr(after, 4) != "_mpi")
      continue;
    size_t begin = at;
    while (begin > 0 && is_name_char(line[begin - 1]))
      --begin;
    if (begin < at) return std::string(line.substr(begin, at - begin));
  }
  return "";
}

// The collective a file name names ("h100_all_reduce_8gpu.log" -> "all_reduce"), or "" when it
// names none or two different ones.
std::string file_name_op(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(c));
  });
  std::string found;
  for (const auto& [spelling, op] : kFileNameSpellings) {
    const size_t at = name.find(spelling);
    if (at == std::string::npos) continue;
    if (!found.empty() && found != op) return "";
    found = op;
    name.replace(at, spelling.size(), std::string(spelling.size(), ' '));  // counted once
    if (name.find(spelling) != std::string::npos) return "";
  }
  return found;
}

bool is_nccl_debug_line(std::string_view line) {
  return line.find("NCCL INFO") != std::string_view::npos ||
         line.find("NCCL WARN") != std::string_view::npos ||
         line.find("NCCL TRACE") != std::string_view::npos || line.starts_with("NCCL version");
}

std::string joined(const std::vector<std::string>& columns) {
  std::string out;
  for (const auto& c : columns)
    out += (out.empty() ? "" : " ") + c;
  return out;
}

class Reader {
 public:
  Reader(const std::string& path, std::string_view content) : path_(path), content_(content) {}

  NcclTestsLog read() {
    log_.path = path_;
    for (const TextLine& l : split_lines(content_)) {
      const std::string_view text = trim(l.text);
      if (text.empty()) continue;
      if (text.front() == '#')
        comment(l.number, text);
      else
        other(l.number, text);
    }
    finish();
    return std::move(log_);
  }

 private:
  [[noreturn]] void fail(int64_t line, const std::string& message) const {
    throw InputError({path_, line}, message);
  }

  void second_run(int64_t line) const {
    if (!log_.rows.empty() || !columns_.empty())
      fail(line, "expected one nccl-tests run per file; a second run starts here");
  }

  void note_op(int64_t line, const std::string& op, int priority) {
    if (op.empty() || priority >= op_priority_) return;
    op_priority_ = priority;
    log_.op = op;
    log_.op_line = line;
  }

  void comment(int64_t line, std::string_view text) {
    text.remove_prefix(1);
    const std::vector<std::string_view> words = split_whitespace(text);
    if (words.empty()) return;
    const std::string_view rest = trim(text);
    if (rest.starts_with("Collective test starting:") ||
        rest.starts_with("Collective test concluded:")) {
      note_op(line, binary_op(rest.substr(rest.find(':') + 1)), 0);
      return;
    }
    if (words[0] == "nThread") {
      second_run(line);
      if (thread_line_ > 0)
        fail(line, "expected one nccl-tests run per file; a second run starts here");
      thread_line_ = line;
      const auto value_of = [&](std::string_view key) -> int64_t {
        for (size_t i = 0; i + 1 < words.size(); ++i)
          if (words[i] == key) {
            const auto v = parse_int64(words[i + 1]);
            if (!v || *v < 1)
              fail(line, "expected '" + std::string(key) +
                             "' followed by a positive integer, found '" +
                             std::string(words[i + 1]) + "'");
            return *v;
          }
        return 0;
      };
      threads_ = value_of("nThread");
      gpus_per_thread_ = value_of("nGpus");
      note_op(line, binary_op(rest), 1);
      return;
    }
    if (words[0] == "Rank" && words.size() >= 2) {
      const auto rank = parse_int64(words[1]);
      if (!rank || *rank < 0)
        fail(line, "expected '#  Rank N ...' with N a rank number, found '" +
                       std::string(words[1]) + "'");
      second_run(line);
      if (ranks_.empty()) {
        log_.gpus_line = line;
        const size_t bracket = rest.find(']');
        if (bracket != std::string_view::npos)
          log_.device = std::string(trim(rest.substr(bracket + 1)));
      }
      ranks_.insert(*rank);
      return;
    }
    if (words[0] == "size" && std::find(words.begin(), words.end(), "count") != words.end()) {
      second_run(line);
      for (const auto w : words)
        columns_.emplace_back(w);
      columns_line_ = line;
      const auto time = std::find_if(columns_.begin(), columns_.end(), [](const std::string& c) {
        return c == "time" || c == "cputime";
      });
      if (time == columns_.end())
        fail(line,
             "expected a column header with a 'time' column (size count type ... time algbw "
             "busbw), found '" +
                 std::string(rest) + "'");
      time_column_ = static_cast<size_t>(time - columns_.begin());
      count_column_ = static_cast<size_t>(std::find(columns_.begin(), columns_.end(), "count") -
                                          columns_.begin());
      fields_ = columns_.size() + (columns_.back() == "timestamp" ? 1 : 0);  // "date time"
      return;
    }
    if (rest.starts_with("Avg bus bandwidth") || rest.starts_with("Out of bounds values")) {
      if (!columns_.empty()) footer_ = true;
      return;
    }
    note_op(line, binary_op(rest), 1);
  }

  void other(int64_t line, std::string_view text) {
    if (columns_.empty() || footer_ || is_nccl_debug_line(text)) {
      note_op(line, binary_op(text), 1);  // a command line kept with the output
      return;
    }
    const std::vector<std::string_view> f = split_whitespace(text);
    if (f.size() != fields_)
      fail(line, "expected " + std::to_string(fields_) + " fields (" + joined(columns_) +
                     "), found " + std::to_string(f.size()));
    const auto bytes = parse_uint64(f[0]);
    if (!bytes || *bytes > kMaxBytes)
      fail(line, "expected the size in bytes (a whole number up to 1 PiB), found '" +
                     std::string(f[0]) + "'");
    if (!parse_uint64(f[count_column_]))
      fail(line, "expected the count in elements (a whole number), found '" +
                     std::string(f[count_column_]) + "'");
    const auto time = parse_double(f[time_column_]);
    if (!time || *time < 0 || *time > kMaxTimeUs)
      fail(line,
           "expected the out-of-place time in microseconds (a number from 0 to 1e11), found '" +
               std::string(f[time_column_]) + "'");
    if (*bytes > 0 && *time == 0)
      fail(line, "expected a positive out-of-place time for " + std::to_string(*bytes) +
                     " bytes, found '" + std::string(f[time_column_]) + "'");
    for (size_t c = time_column_ + 1; c < time_column_ + 3 && c < f.size(); ++c)
      if (!parse_double(f[c]))
        fail(line, "expected the out-of-place " + columns_[c] + " in GB/s (a number), found '" +
                       std::string(f[c]) + "'");
    // The run's own check of its results (-c 1; "N/A" without it): a wrong result is a broken
    // run, whose times calibrate nothing.
    for (size_t c = time_column_ + 1; c < columns_.size() && c < f.size(); ++c)
      if (columns_[c] == "#wrong") {
        if (const auto wrong = parse_uint64(f[c]); wrong && *wrong > 0)
          fail(line, "expected a run whose results checked out, found " + std::string(f[c]) +
                         " wrong values (#wrong) at " + std::to_string(*bytes) + " bytes");
        break;
      }
    log_.rows.push_back({line, *bytes, *time});
  }

  void finish() {
    if (columns_.empty())
      fail(1,
           "expected nccl-tests output: a column header ('#  size  count  type ...  time  algbw  "
           "busbw ...') followed by data rows; found no column header");
    if (log_.rows.empty())
      fail(columns_line_, "expected data rows after the column header, found none");
    if (!ranks_.empty()) {
      log_.gpus = static_cast<int64_t>(ranks_.size());
      // Each process runs nThread x nGpus of the ranks (one process, or one per MPI rank).
      const int64_t per_process = threads_ * gpus_per_thread_;
      if (per_process > 0 && log_.gpus % per_process != 0)
        fail(thread_line_, "expected nThread x nGpus (" + std::to_string(per_process) +
                               ") GPUs per process, a divisor of the " + std::to_string(log_.gpus) +
                               " ranks listed");
    } else if (threads_ > 0 && gpus_per_thread_ > 0) {
      log_.gpus = threads_ * gpus_per_thread_;
      log_.gpus_line = thread_line_;
    } else {
      fail(1, "expected the GPU count: '#  Rank N ...' lines or a '# nThread N nGpus M' line");
    }
    if (log_.op.empty()) {
      log_.op = file_name_op(path_);
      log_.op_line = 0;
      if (log_.op.empty())
        fail(1,
             "expected the collective: a '# Collective test starting: all_reduce_perf' line, a "
             "command line naming the binary (" +
                 std::string(kBinaries) +
                 "), or a file name that names it (e.g. all_reduce_8gpus.log); found none");
    }
    log_.kind = nccl_tests_collective(log_.op);
  }

  const std::string& path_;
  std::string_view content_;
  NcclTestsLog log_;
  int op_priority_ = 3;  // 0: "Collective test" line, 1: a line naming the binary
  int64_t thread_line_ = 0, threads_ = 0, gpus_per_thread_ = 0;
  std::set<int64_t> ranks_;
  std::vector<std::string> columns_;
  int64_t columns_line_ = 0;
  size_t fields_ = 0, time_column_ = 0, count_column_ = 1;
  bool footer_ = false;
};

}  // namespace

std::optional<CollectiveKind> nccl_tests_collective(std::string_view op) {
  for (const auto& [name, kind] : kModelled)
    if (name == op) return kind;
  return std::nullopt;
}

NcclTestsLog read_nccl_tests_log(const std::string& path, std::string_view content) {
  return Reader(path, content).read();
}

}  // namespace orrery
