// The task-graph variant of a Program: what every rank runs as a DAG of tasks, as execution traces
// (MLCommons Chakra) give it, rather than as layers in passes (program.h).
//
// A rank's tasks are listed in issue order (a topological order of its dependencies). Each task is
// one of:
//   Compute     a kernel on the rank's compute stream: `duration`, or the kernel's compute demand
//               (training/compute_pricing.h prices it on a device before a simulator runs)
//   Memory      a load or store of `bytes` between device memory and the host (or a given duration)
//   Collective  `collective` of `bytes` (the nccl-tests convention of workload/communication.h)
//               among the ranks of `group`, in the order each member issues its collectives there
//   Send, Recv  a point-to-point message of `bytes` to / from `peer`, matched first-in first-out
//               by (sender, receiver, tag)
// Durations are picoseconds; absent ones are priced by the device and network models. A task
// waits for its dependencies (indices into the rank's tasks, all earlier in the list).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/collective_kind.h"
#include "core/compute_demand.h"
#include "core/time.h"

namespace orrery {

enum class GraphTaskKind : uint8_t { Compute, Memory, Collective, Send, Recv };

struct GraphTask {
  GraphTaskKind kind = GraphTaskKind::Compute;
  CollectiveKind collective = CollectiveKind::AllReduce;
  // Compute or memory without a duration: priced from `flop` and `bytes` (compute_demand()).
  bool has_demand = false;
  int32_t group = -1;            // Collective: index into GraphProgram::groups; -1: every rank
  uint64_t node = 0;             // the task's id in its file, for messages
  std::optional<Time> duration;  // given by the file; absent: priced
  double flop = 0;               // Compute: FLOPs (priced only without a duration)
  Bytes bytes = 0;               // Collective, Send, Recv, Memory; Compute: memory traffic
  int64_t peer = -1;             // Send, Recv: the other rank
  int64_t tag = 0;               // Send, Recv
  uint32_t deps_begin = 0;       // [deps_begin, deps_end) in RankGraph::deps
  uint32_t deps_end = 0;
};

// The kernel a task without a duration stands for: an element-wise kernel of `flop` and `bytes`
// (compute), or a copy of `bytes` through device memory (memory); nullopt without a demand.
inline std::optional<ComputeDemand> compute_demand(const GraphTask& t) {
  if (!t.has_demand) return std::nullopt;
  ComputeDemand d;
  d.kind = t.kind == GraphTaskKind::Memory ? KernelClass::Copy : KernelClass::Elementwise;
  d.flop = t.flop;
  d.bytes = t.bytes;
  return d;
}

struct RankGraph {
  std::string source;            // the file it was read from
  std::vector<GraphTask> tasks;  // issue order
  std::vector<uint32_t> deps;    // indices into tasks, earlier than the task that waits
};

struct GraphProgram {
  std::vector<RankGraph> ranks;              // rank r at index r
  std::vector<std::vector<int64_t>> groups;  // communicators: member ranks, ascending
  std::vector<std::string> group_names;      // the file's name of each (process-group id)
};

}  // namespace orrery
