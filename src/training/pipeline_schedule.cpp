#include "training/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

namespace orrery {

std::string_view to_string(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::Auto:
      return "auto";
    case ScheduleKind::GPipe:
      return "gpipe";
    case ScheduleKind::OneFOneB:
      return "1f1b";
    case ScheduleKind::Interleaved:
      return "interleaved";
  }
  return "?";
}

std::optional<ScheduleKind> parse_schedule(std::string_view name) {
  for (const auto kind :
       {ScheduleKind::Auto, ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved})
    if (to_string(kind) == name) return kind;
  return std::nullopt;
}

namespace {

std::vector<PipelineOp> gpipe(int64_t m, int64_t v) {
  std::vector<PipelineOp> order;
  for (int64_t c = 0; c < v; ++c)
    for (int64_t mb = 0; mb < m; ++mb)
      order.push_back({true, mb, c});
  for (int64_t c = v - 1; c >= 0; --c)
    for (int64_t mb = 0; mb < m; ++mb)
      order.push_back({false, mb, c});
  return order;
}

// Warm-up forwards, then one forward and one backward at a time, then the remaining backwards.
std::vector<PipelineOp> one_forward_one_backward(int64_t m, int64_t warmup) {
  warmup = std::min(warmup, m);
  std::vector<PipelineOp> order;
  for (int64_t mb = 0; mb < warmup; ++mb)
    order.push_back({true, mb, 0});
  for (int64_t i = 0; i < m - warmup; ++i) {
    order.push_back({true, warmup + i, 0});
    order.push_back({false, i, 0});
  }
  for (int64_t i = m - warmup; i < m; ++i)
    order.push_back({false, i, 0});
  return order;
}

// Megatron's interleaved order, generalised to any number of micro-batches. Micro-batches go in
// groups through chunk 0, then chunk 1, ...; groups hold `stages` micro-batches, the last one
// also takes the remainder (so no group is smaller than the pipeline, unless all of them are).
// The backward sequence visits the same (micro-batch, chunk) order with chunks mirrored; the i-th
// backward runs right after forward number i + 2(stages - stage - 1) + (chunks - 1) * group size,
// the forward it waits on in steady state. With m a multiple of the stage count this is exactly
// Megatron-LM's warm-up of 2(p - s - 1) + (v - 1) p forwards followed by 1F1B pairs; other m, where
// Megatron's formula deadlocks, stay deadlock-free (checked for p <= 12, m <= 40, v <= 6).
std::vector<PipelineOp> interleaved(int64_t p, int64_t s, int64_t m, int64_t v) {
  std::vector<PipelineOp> forwards;
  std::vector<int64_t> group_of;  // group size of each forward
  const int64_t groups = std::max<int64_t>(1, m / p);
  for (int64_t g = 0, first = 0; g < groups; ++g) {
    const int64_t size = g + 1 < groups ? p : m - first;
    for (int64_t c = 0; c < v; ++c)
      for (int64_t mb = first; mb < first + size; ++mb) {
        forwards.push_back({true, mb, c});
        group_of.push_back(size);
      }
    first += size;
  }
  const auto n = static_cast<int64_t>(forwards.size());
  std::vector<PipelineOp> order;
  int64_t next_backward = 0, after = 0;
  for (int64_t k = 0; k < n; ++k) {
    order.push_back(forwards[k]);
    while (next_backward < n) {
      const auto i = static_cast<size_t>(next_backward);
      after =
          std::max(after, std::min(n - 1, next_backward + 2 * (p - s - 1) + (v - 1) * group_of[i]));
      if (after != k) break;
      order.push_back({false, forwards[i].micro_batch, v - 1 - forwards[i].chunk});
      ++next_backward;
    }
  }
  return order;
}

}  // namespace

std::vector<PipelineOp> pipeline_order(ScheduleKind kind, int64_t stages, int64_t stage,
                                       int64_t micro_batches, int64_t chunks) {
  if (stages < 1 || stage < 0 || stage >= stages || micro_batches < 1 || chunks < 1)
    throw std::invalid_argument("pipeline_order: invalid stage, micro-batch or chunk count");
  const int64_t p = stages, s = stage, m = micro_batches, v = chunks;
  switch (kind) {
    case ScheduleKind::GPipe:
      return gpipe(m, v);
    case ScheduleKind::OneFOneB:
      if (v != 1) throw std::invalid_argument("1f1b runs one model chunk per stage");
      return one_forward_one_backward(m, p - s - 1);
    case ScheduleKind::Interleaved:
      return interleaved(p, s, m, v);
    case ScheduleKind::Auto:
      break;
  }
  throw std::invalid_argument("pipeline_order: resolve the schedule kind first");
}

}  // namespace orrery
