// The simulated ranks of a task-graph program (workload/graph_program.h) as one engine task graph,
// shared by the event mode (training/graph_simulator.h), which runs it on the engine, and the flow
// mode (training/graph_flow_simulator.h), which runs its communication as flows.
//
// Streams of a rank: compute (compute tasks, in issue order: one kernel at a time), memory, one
// per (peer, tag) for sends and one for receives, and one per process group. With every rank
// explicit a collective is one task shared by its group's members (the i-th collective each member
// issues there); with ranks collapsed into closed classes (training/rank_classes.h) each simulated
// rank runs its collectives alone; with open classes the i-th collective of a representative is
// one task with the same-index task of each member's class representative. A receive is a task of
// no time that waits for its matching send (first in, first out per sender, receiver and tag; the
// peer's class representative sending to the rank at the mirrored offset stands for the peer).
// Durations: the trace's, else the network model's (GraphPricer).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cluster/cluster.h"
#include "engine/task_graph.h"
#include "network/collective_model.h"
#include "network/link_graph.h"
#include "training/rank_classes.h"
#include "workload/graph_program.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

// Collective and point-to-point times on the cluster, GPU id = rank. Throws InputError when the
// cluster holds fewer GPUs than the traces have ranks.
class GraphPricer {
 public:
  GraphPricer(const GraphProgram& program, const Cluster& cluster, Algorithm algorithm);

  const std::vector<int64_t>& members(int32_t group) const {
    return group < 0 ? all_ : program_.groups[static_cast<size_t>(group)];
  }
  const LinkGraph& links() const { return *links_; }
  const Topology& topology() const { return topology_; }
  Algorithm algorithm() const { return algorithm_; }
  // The analytical model of one group (built on first use).
  const CollectiveModel& model(int32_t group);
  Time collective(int32_t group, CollectiveKind kind, Bytes bytes);
  // A message between two ranks: point_to_point_cost() of the pair (a model of the two, built on
  // first use).
  TransferCost transfer(int64_t from, int64_t to, Bytes bytes);

 private:
  const GraphProgram& program_;
  const Topology& topology_;
  Algorithm algorithm_;
  std::optional<LinkGraph> links_;
  std::vector<int64_t> all_;
  std::map<int32_t, std::unique_ptr<CollectiveModel>> models_;
  std::map<std::tuple<int32_t, CollectiveKind, Bytes>, Time> cache_;
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<CollectiveModel>> pairs_;
};

// Where an engine task came from: a rank's task (for a shared collective, its lowest member's).
struct GraphOrigin {
  int64_t rank = 0;
  uint32_t task = 0;
};

struct GraphTasks {
  RankClasses classes;  // the ranks simulated (every rank when representatives do not line up)
  engine::TaskGraph graph;
  std::vector<GraphOrigin> origin;                   // by engine task
  std::vector<std::vector<engine::TaskId>> id;       // [simulated rank][task]
  std::vector<std::vector<engine::TaskId>> compute;  // [simulated rank]: its compute stream
};

// Throws InputError, naming the file and node, for a receive without a send, group members that
// disagree on a collective, a task that can never start, or durations beyond Time's range.
GraphTasks build_graph_tasks(const GraphProgram& program, const RankClasses& classes,
                             GraphPricer& pricer);

// The Result of a run: iteration time = the last finish; the breakdown of the simulated rank that
// finishes last (its compute, and its compute stream's gaps charged to what ended each:
// collectives as dp communication, messages as p2p, the rest as bubble).
Result graph_result(std::string mode, const Workload& workload, const Cluster& cluster,
                    const GraphTasks& tasks, const engine::Timeline& timeline);

}  // namespace orrery
