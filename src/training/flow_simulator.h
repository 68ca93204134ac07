// Flow mode: every rank explicit. Each rank runs its stage's program (stage_program.h); a
// collective starts when every member of its communicator has reached it and then runs as steps
// of flows (collective_flows.h) on the cluster's links; stage-to-stage transfers are flows too.
// Flows share links max-min fairly, so concurrent traffic contends: data-parallel reductions
// against tensor/expert/pipeline traffic, and several jobs placed on one network. Everything runs
// on the engine's kernel (engine/kernel.h): compute tasks and latencies as timed events, flows as
// activities sharing links (engine/fair_share.h); this file only says what each event means.
// See docs/network.md.
#pragma once

#include <span>
#include <vector>

#include "training/simulator.h"

namespace orrery {

class FlowSimulator final : public Simulator {
 public:
  Result simulate(const Workload& workload, const Cluster& cluster,
                  const SimulationOptions& options, Diagnostics& diagnostics) const override;

  // Several jobs on one network, each on its own GPUs: job k starts on the first innermost
  // domain (server) after job k-1's last GPU. One Result per job, each with the flows it started
  // and the links that carried most of its own traffic (bytes, busy time and peak utilisation
  // of its flows alone; the network is shared, so the same link may appear under several jobs).
  // Job k's warnings go to diagnostics[k] (one Diagnostics may serve several jobs).
  std::vector<Result> simulate_jobs(std::span<const Workload* const> jobs, const Cluster& cluster,
                                    const SimulationOptions& options,
                                    std::span<Diagnostics* const> diagnostics) const;
};

}  // namespace orrery
