// One point of a design-space search: a parallel plan on one of the search's cluster choices (a
// cluster preset or file, possibly with overridden GPUs per server or link bandwidths, a device
// override and a GPU count). The plan carries its data-parallel degree and micro-batches per
// iteration resolved from the GPU count and the global batch.
#pragma once

#include <cstdint>
#include <string>

#include "cluster/cluster.h"
#include "hardware/device.h"
#include "models/parallel_plan.h"

namespace orrery::explore {

// A cluster a search may run on, built once and shared by every point on it.
struct ClusterChoice {
  std::string label;   // preset or file, with its overrides, e.g. "hgx-h100 nic-busbw=50"
  Cluster cluster;     // overrides applied
  std::string device;  // device override (preset or file); empty: the cluster's GPU
  Device resolved;     // the device that prices compute (override or the cluster's GPU)
  int64_t gpus = 0;    // world size
};

struct PlanPoint {
  size_t cluster = 0;  // index into the search's cluster choices
  ParallelPlan plan;
};

// A plan's knobs as text, one stable key per point (the database's primary key):
// "hgx-h100|1024|tp8|pp8|vpp2|cp1|ep1|mbs1|selective|sp1|zero1", with "|opg" appended when the
// parameter gather overlaps the next forward and "|tpo" with Transformer Engine's tensor-parallel
// overlap (so keys of databases from before the knobs hold).
std::string point_key(const PlanPoint& point, const ClusterChoice& choice);

// "none", "selective" or "full".
std::string recompute_name(RecomputeMode mode);

}  // namespace orrery::explore
