// The interface every fidelity mode of this layer implements: a workload on a cluster in, the
// iteration's Result out. Warnings go to `diagnostics` (the caller copies them into the Result).
#pragma once

#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "training/simulation_options.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

class Simulator {
 public:
  virtual ~Simulator() = default;
  virtual Result simulate(const Workload& workload, const Cluster& cluster,
                          const SimulationOptions& options, Diagnostics& diagnostics) const = 0;
};

}  // namespace orrery
