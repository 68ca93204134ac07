// ASTRA-sim's system description (its system JSON) applied to a cluster read from its network
// YAML (astra_sim_network.h), so that Orrery runs collectives the way ASTRA-sim's analytical
// backend does (docs/astra-sim.md, "Mapping"):
//   - chunks: a collective is split into preferred-dataset-splits chunks of which
//     active-chunks-per-dimension run at once; each batch of chunks pays every step's latency, so
//     a dimension's latency becomes ceil(splits / active) x (latency + endpoint-delay);
//   - one-way rings: ASTRA-sim's ring implementation sends every step one way over one link,
//     where Orrery's ring on a ring dimension sends half the data each way; a ring dimension run
//     with the ring implementation keeps ASTRA-sim's bandwidth term with half the bandwidth per
//     direction;
//   - implementations: ring, direct, halvingDoubling and doubleBinaryTree become Orrery's ring (on
//     one dimension; hierarchical across several), direct, halving-doubling and tree, when every
//     collective and dimension names the same one;
//   - local-mem-bw (GB/s, 10^9 B/s): all-reduces and reduce-scatters pay the time of combining
//     their received data through that memory (network/local_reduction.h), as ASTRA-sim does.
// Keys with no counterpart (scheduling policies, boost-mode, roofline) are reported by name,
// never dropped silently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "network/collective_algorithms.h"

namespace orrery {

struct AstraSimSystem {
  int64_t dataset_splits = 1;             // preferred-dataset-splits
  int64_t active_chunks = 1;              // active-chunks-per-dimension
  Time endpoint_delay;                    // endpoint-delay (ns), per step and chunk
  std::optional<Bandwidth> local_memory;  // local-mem-bw (GB/s): where reductions combine data
  // Implementations per collective, one per dimension, as the file names them.
  std::vector<std::string> all_reduce, all_gather, reduce_scatter, all_to_all;
  std::vector<std::string> warnings;  // keys and values with no counterpart
};

// Parses the JSON text; throws InputError naming `source`, the line and what was expected.
AstraSimSystem parse_astra_sim_system(const std::string& text, const std::string& source);

// Applies the system to a cluster read from an ASTRA-sim network (latencies, ring bandwidths)
// and returns the algorithm every collective should use, or nullopt for Orrery's own choice
// (with a warning in `system.warnings`). Throws InputError when the implementation lists do not
// have one entry per dimension of `cluster`.
std::optional<Algorithm> apply_astra_sim_system(AstraSimSystem& system, Cluster& cluster,
                                                const std::string& source);

}  // namespace orrery
