#include "report/trace_writer.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>

namespace orrery {
namespace {

using nlohmann::ordered_json;

// Microseconds, rounded to the nanosecond (the shortest decimal that reads back the same).
double micros(Time t) {
  return std::round(static_cast<double>(t.ps()) / 1000.0) / 1000.0;
}

// Threads in a fixed order, whatever streams a process uses.
int thread_id(const std::string& stream) {
  static const std::map<std::string, int> order = {
      {"compute", 0},     {"tp", 1},  {"ep", 2},  {"dp", 3},
      {"dp_ep", 4},       {"pp", 5},  {"cp", 6},  {"pp send fwd", 7},
      {"pp send bwd", 8}, {"emb", 9}, {"mp", 10}, {"world", 11}};
  const auto it = order.find(stream);
  return it == order.end() ? static_cast<int>(order.size()) : it->second;
}

ordered_json metadata(const char* what, int pid, int tid, ordered_json args) {
  ordered_json e = {{"name", what}, {"ph", "M"}, {"pid", pid}};
  if (tid >= 0) e["tid"] = tid;
  e["args"] = std::move(args);
  return e;
}

ordered_json slice_event(const TimelineSlice& s, int pid, int tid) {
  ordered_json args;
  if (s.micro_batch >= 0) args["micro_batch"] = s.micro_batch;
  if (s.chunk >= 0) args["chunk"] = s.chunk;
  if (s.bytes > 0) args["bytes"] = s.bytes;
  if (s.flop > 0) args["flop"] = s.flop;
  if (!s.group.empty()) args["group"] = s.group;
  if (!s.algorithm.empty()) args["algorithm"] = s.algorithm;
  ordered_json e = {
      {"name", s.name},        {"cat", s.phase},           {"ph", "X"}, {"pid", pid}, {"tid", tid},
      {"ts", micros(s.start)}, {"dur", micros(s.duration)}};
  if (!args.empty()) e["args"] = std::move(args);
  return e;
}

// Writes events one by one (a whole trace as one JSON value would take many times its size).
class TraceBuilder {
 public:
  explicit TraceBuilder(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":["; }

  void add(const Result& r, const std::string& prefix) {
    std::map<std::pair<int64_t, int64_t>, int> pids;  // (stage, rank) -> pid
    for (const TimelineTrack& track : r.timeline->tracks) {
      const auto key = std::pair(track.stage, track.rank);
      auto it = pids.find(key);
      if (it == pids.end()) {
        it = pids.emplace(key, next_pid_++).first;
        std::string name = prefix + "stage " + std::to_string(track.stage);
        if (track.rank >= 0) name += " (rank " + std::to_string(track.rank) + ")";
        emit(metadata("process_name", it->second, -1, {{"name", name}}));
        emit(metadata("process_sort_index", it->second, -1, {{"sort_index", it->second}}));
      }
      const int pid = it->second;
      const int tid = thread_id(track.stream);
      emit(metadata("thread_name", pid, tid, {{"name", track.stream}}));
      emit(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
      for (const TimelineSlice& s : track.slices)
        emit(slice_event(s, pid, tid));
    }
    if (r.timeline->links.empty()) return;
    const int pid = next_pid_++;
    emit(metadata("process_name", pid, -1, {{"name", prefix + "busiest links"}}));
    emit(metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
    for (const LinkCounter& link : r.timeline->links)
      for (const auto& [time, utilization] : link.points)
        emit({{"name", link.link},
              {"ph", "C"},
              {"pid", pid},
              {"ts", micros(time)},
              {"args", {{"utilisation %", std::round(utilization * 1e4) / 1e2}}}});
  }

  void finish() { out_ << "],\"displayTimeUnit\":\"ns\"}\n"; }

 private:
  void emit(const ordered_json& event) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << event.dump();
  }

  std::ostream& out_;
  bool first_ = true;
  int next_pid_ = 0;
};

}  // namespace

void write_trace(std::ostream& out, const std::vector<Result>& results) {
  TraceBuilder trace(out);
  for (size_t k = 0; k < results.size(); ++k)
    if (results[k].timeline)
      trace.add(results[k], results.size() > 1 ? "job " + std::to_string(k + 1) + " " : "");
  trace.finish();
}

}  // namespace orrery
