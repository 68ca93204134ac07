#include "training/stage_timeline.h"

#include <array>
#include <string>
#include <string_view>

namespace orrery {
namespace {

std::string_view stream_name(StageStream stream) {
  switch (stream) {
    case StageStream::Compute:
      return "compute";
    case StageStream::ForwardLink:
      return "pp send fwd";
    case StageStream::BackwardLink:
      return "pp send bwd";
    default:
      return to_string(static_cast<CommGroup>(static_cast<int>(stream) - 1));
  }
}

std::string_view phase_name(TaskPhase phase) {
  switch (phase) {
    case TaskPhase::Forward:
      return "fwd";
    case TaskPhase::InputGrad:
      return "ig";
    case TaskPhase::WeightGrad:
      return "wg";
    case TaskPhase::Recompute:
      return "recompute";
    case TaskPhase::Transfer:
      return "send";
    case TaskPhase::Bucket:
      return "bucket";
  }
  return "";
}

// The workload phase a label's compute ran (recompute runs the forward again).
const Phase& workload_phase(const Layer& layer, TaskPhase phase) {
  if (phase == TaskPhase::InputGrad) return layer.input_grad;
  if (phase == TaskPhase::WeightGrad) return layer.weight_grad;
  return layer.forward;
}

double flop_of(const Phase& phase) {
  double flop = 0;
  for (const ComputeDemand& k : phase.kernels)
    flop += k.flop;
  return flop;
}

std::string pass_suffix(const TaskLabel& l, int64_t chunks) {
  std::string s;
  if (l.micro_batch >= 0) s += " mb" + std::to_string(l.micro_batch);
  if (chunks > 1 && l.chunk >= 0) s += " c" + std::to_string(l.chunk);
  return s;
}

TimelineSlice slice_of(const Program& program, const IterationPlan& plan, const StageTask& task,
                       const TaskLabel& l) {
  TimelineSlice s;
  s.phase = phase_name(l.phase);
  s.duration = l.duration;
  s.micro_batch = l.micro_batch;
  s.chunk = plan.chunks > 1 ? l.chunk : -1;
  const std::string suffix = pass_suffix(l, plan.chunks);
  if (task.kind == StageTaskKind::Transfer) {
    s.name = std::string(task.stream == StageStream::ForwardLink ? "send fwd" : "send bwd") +
             suffix + " to stage " + std::to_string(task.to_stage);
  } else {
    const Layer& layer = program.layers[static_cast<size_t>(l.layer)];
    s.name = layer.name + " " + s.phase;
    if (task.kind == StageTaskKind::Compute) {
      s.flop = flop_of(workload_phase(layer, l.phase));
    } else {
      s.name += " " + std::string(to_string(task.comm.kind));
      s.algorithm = to_string(task.algorithm);
    }
    s.name += suffix;
  }
  if (task.kind != StageTaskKind::Compute) {
    s.bytes = task.comm.bytes;
    s.group = to_string(task.comm.group);
  }
  return s;
}

}  // namespace

std::vector<TimelineTrack> stage_tracks(
    const Program& program, const IterationPlan& plan, const StageProgram& stage, int64_t rank,
    const std::function<std::pair<Time, Time>(uint32_t)>& span) {
  std::array<TimelineTrack, kStageStreams> tracks;
  for (size_t k = 0; k < kStageStreams; ++k) {
    tracks[k].stage = stage.stage;
    tracks[k].rank = rank;
    tracks[k].stream = stream_name(static_cast<StageStream>(k));
  }
  // Parts of one task follow each other from the task's start.
  uint32_t task = 0;
  Time offset;
  for (size_t i = 0; i < stage.labels.size(); ++i) {
    const TaskLabel& l = stage.labels[i];
    if (i == 0 || l.task != task) offset = Time::zero();
    task = l.task;
    const StageTask& t = stage.tasks[l.task];
    TimelineSlice s = slice_of(program, plan, t, l);
    const auto [begin, end] = span(l.task);
    s.start = begin + offset;
    offset += l.duration;
    // Communication runs as long as the simulation took (flows may take longer than priced).
    if (t.kind != StageTaskKind::Compute) s.duration = end - begin;
    tracks[static_cast<size_t>(t.stream)].slices.push_back(std::move(s));
  }
  std::vector<TimelineTrack> result;
  for (TimelineTrack& t : tracks)
    if (!t.slices.empty()) result.push_back(std::move(t));
  return result;
}

}  // namespace orrery
