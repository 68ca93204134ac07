// Calculon's system description (its system JSON) read as an Orrery cluster with its own device:
//   matrix, vector: {tflops, gflops_efficiency}   the peak of each engine (10^12 FLOP/s) for every
//                                                 data type, at the efficiency of the table's
//                                                 largest operations (per data type when keyed so)
//   mem1: {GiB, GBps, MB_efficiency}              device memory: capacity (2^30 B), bandwidth
//                                                 (10^9 B/s) at the table's largest efficiency
//   networks: [{bandwidth, efficiency, size, latency, ...}]   innermost first: the first a switch
//                                                 of `size` GPUs, a second a fat-tree with a NIC
//                                                 of `bandwidth` GB/s per GPU; `latency` (s) is
//                                                 each collective's fixed cost; ideal links (the
//                                                 alpha-beta model Calculon uses)
// mem2 (offload memory), processing_mode, each network's ops scalars, collective_minus1_scalar,
// must_be_filled and processor_usage have no counterpart and are reported by name
// (docs/calculon.md, "Mapping").
#pragma once

#include <string>

#include "cluster/cluster.h"

namespace orrery {

// The system as a cluster named after `source`, whose `device` is the one the file describes.
// Throws InputError naming the file, the key and what was expected.
Cluster parse_calculon_system(const std::string& text, const std::string& source);

}  // namespace orrery
