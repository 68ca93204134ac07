// Ranks of a task-graph program (Chakra traces) that run alike, so that each class is simulated
// once. Two ranks are alike when their task lists are identical after renaming ranks: every peer
// written as its offset from the rank (modulo the rank count), every process group as its members'
// offsets from its lowest member and its shape on the network, every point-to-point pair as its
// shape on the network; durations, sizes, tags and dependencies as they are.
//
// A class can run alone when it is closed: every peer and every member of every group its ranks
// use lies in the class, and every member of such a group issues as many collectives on it. Its
// ranks then start together and meet alike at every collective and message, so one of them (the
// lowest) stands for all.
//
// Classes that are not closed (a pipeline's stages: alike inside, sending to each other) still
// run once each when they are consistent: for every message, the peer at the same offset from
// each rank of a class lies in one class. A representative's message then stands for its class's,
// matched with the representative of the peer's class; collectives are matched between
// representatives by the builder (training/graph_tasks.h), which simulates every rank where they
// do not line up. Otherwise every rank is simulated.
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
  bool closed = false;                   // collapsed, every class closed
};

// Every rank its own class (nothing collapsed).
RankClasses every_rank(size_t ranks);

RankClasses rank_classes(const GraphProgram& program, const Topology& topology);

}  // namespace orrery
