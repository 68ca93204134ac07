// Ranks of a task-graph program (Chakra traces) that run alike, so that each class is simulated
// once. Two ranks are alike when their task lists are identical after renaming ranks: every peer
// written as its offset from the rank (modulo the rank count), every process group as its members'
// offsets from its lowest member and its shape on the network, every point-to-point pair as its
// shape on the network; durations, sizes, tags and dependencies as they are.
//
// A class can run alone when it is closed: every peer and every member of every group its ranks
// use lies in the class, and every member of such a group issues as many collectives on it. Its
// ranks then start together and meet alike at every collective and message, so one of them (the
// lowest) stands for all. When some class is not closed, every rank is simulated.
#pragma once

#include <cstdint>
#include <vector>

#include "network/topology.h"
#include "workload/graph_program.h"

namespace orrery {

struct RankClasses {
  std::vector<int64_t> representatives;  // the ranks simulated, ascending
  std::vector<int32_t> class_of;         // per rank: index into representatives
  bool collapsed = false;                // fewer representatives than ranks
};

RankClasses rank_classes(const GraphProgram& program, const Topology& topology);

}  // namespace orrery
