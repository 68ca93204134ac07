// Who waits for each task: the tasks that depend on it (its successors), in compressed form,
// built once from a list of dependencies (before, after). Every simulator that runs tasks on
// in-order streams (in_order_streams.h) releases a task's successors when it ends: the fixed-
// duration run (task_graph.h) and the flow modes (training/flow_simulator,
// training/graph_flow_simulator). Tasks are numbers 0 to tasks - 1; no time here.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace orrery::engine {

class Successors {
 public:
  Successors() = default;
  // The successors of each task are listed in the order their dependencies appear in `edges`.
  Successors(size_t tasks, std::span<const std::pair<uint32_t, uint32_t>> edges);

  std::span<const uint32_t> of(uint32_t task) const {
    return std::span(list_).subspan(begin_[task], begin_[task + 1] - begin_[task]);
  }
  // How many tasks each task waits for (its predecessors), by task.
  std::vector<uint32_t> predecessor_counts() const;

 private:
  std::vector<size_t> begin_;  // task t's successors are list_[begin_[t]] to list_[begin_[t + 1]]
  std::vector<uint32_t> list_;
};

}  // namespace orrery::engine
