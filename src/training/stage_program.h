// One pipeline stage's iteration as tasks on the stage's streams, built from the priced plan and
// the pipeline schedule. The event mode runs one representative rank per stage from these
// programs; the flow mode runs every rank from them, its collectives and transfers as flows.
//
// Streams of a stage: compute, one per communication group, and a link to the next and to the
// previous stage. Tasks on a stream run in program order; a task also waits for its dependencies
// (tasks of the same stage) and, for the first task of a pass, for a transfer from another stage
// (matched by key). Durations are the analytical costs (for collectives and transfers: what the
// event mode charges; the flow mode replaces them with flows).
#pragma once

#include <cstdint>
#include <vector>

#include "core/time.h"
#include "network/collective_algorithms.h"
#include "training/iteration_plan.h"
#include "workload/communication.h"

namespace orrery {

enum class StageStream : uint8_t {
  Compute,
  Tensor,  // the stream of each communication group, in CommGroup order
  Expert,
  Data,
  ExpertData,
  Pipeline,
  Context,
  Embedding,
  ModelParallel,
  World,
  ForwardLink,   // transfers to the next stage (the last stage's go to stage 0's next chunk)
  BackwardLink,  // transfers to the previous stage
};
constexpr size_t kStageStreams = 3 + kCommGroups;
static_assert(static_cast<size_t>(StageStream::ForwardLink) == 1 + kCommGroups);

constexpr StageStream stream_of(CommGroup group) {
  return static_cast<StageStream>(1 + static_cast<int>(group));
}

enum class StageTaskKind : uint8_t { Compute, Collective, Transfer };

struct StageTask {
  StageTaskKind kind = StageTaskKind::Compute;
  StageStream stream = StageStream::Compute;
  Time duration;            // compute time, or the analytical cost of the collective / transfer
  Time exposed_overlap;     // compute: the part of `duration` that is PlannedPhase::exposed_overlap
  uint32_t deps_begin = 0;  // [deps_begin, deps_end) in StageProgram::deps
  uint32_t deps_end = 0;
  int64_t receives = -1;  // the transfer key this task waits for, or -1
  int64_t sends = -1;     // transfers: the key they deliver
  int64_t to_stage = -1;  // transfers: the receiving stage
  Communication comm;     // collectives
  Algorithm algorithm = Algorithm::Ring;
};

// What a task does, for the timeline (--trace, --report). Back-to-back compute merged into one
// task keeps one label per part, in order; their durations add up to the task's.
enum class TaskPhase : uint8_t { Forward, InputGrad, WeightGrad, Recompute, Transfer, Bucket };

struct TaskLabel {
  uint32_t task = 0;   // index into StageProgram::tasks
  int32_t layer = -1;  // index into Program::layers; -1: none (transfers)
  TaskPhase phase = TaskPhase::Forward;
  int32_t micro_batch = -1;  // -1: iteration-level rows
  int32_t chunk = -1;
  Time duration;  // this part of the task
};

struct StageProgram {
  int64_t stage = 0;
  std::vector<StageTask> tasks;   // program order
  std::vector<uint32_t> deps;     // indices into tasks
  std::vector<TaskLabel> labels;  // only when built with labels: tasks of nonzero duration
};

struct IterationPrograms {
  std::vector<StageProgram> stages;
  int64_t transfer_keys = 0;  // keys run from 0 to transfer_keys - 1
};

// `labels`: also record what each task does (costs time and memory; only for a timeline).
IterationPrograms build_stage_programs(const IterationPlan& plan, bool labels = false);

}  // namespace orrery
