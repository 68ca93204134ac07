// Analytical mode (Orrery's own): the iteration in closed form from the same priced plan as the
// event mode, in microseconds of CPU. Exact where the event mode has nothing to resolve (one
// stage, no overlap; uniform micro-batches with free transfers); otherwise an estimate:
//   iteration = sum over micro-batches of (F + B)                   pipeline work of a stage
//             + (pp - 1) / chunks * max(F + B)                      bubble
//             + 2 (pp - 1) * transfer                               fill and drain transfers
//             + max(0, DP reductions - last backward)  (overlap)    exposed gradient reduction
//             + iteration-level rows                                 optimizer, gathers
// with F and B a micro-batch's forward and backward including its blocking collectives (an
// input-gradient collective hides behind its layer's weight-gradient compute when overlap is on).
#pragma once

#include "training/simulator.h"

namespace orrery {

class AnalyticalSimulator final : public Simulator {
 public:
  Result simulate(const Workload& workload, const Cluster& cluster,
                  const SimulationOptions& options, Diagnostics& diagnostics) const override;
};

}  // namespace orrery
