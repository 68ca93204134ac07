// Event mode: a discrete-event simulation of one iteration. Each pipeline stage is one
// representative rank (its tensor/expert/data-parallel peers behave identically), with a compute
// stream, one stream per communication group and one link per stage boundary and direction.
// The pipeline schedule fixes each stage's order of passes; dependencies between stages (through
// stage-to-stage transfers) decide when they run. See docs/event-mode.md.
#pragma once

#include "training/simulator.h"

namespace orrery {

class EventSimulator final : public Simulator {
 public:
  Result simulate(const Workload& workload, const Cluster& cluster,
                  const SimulationOptions& options, Diagnostics& diagnostics) const override;
};

}  // namespace orrery
