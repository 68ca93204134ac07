// A two-tier GPU network: a scale-up domain inside each server (NVLink/NVSwitch) and a scale-out
// network of NICs between servers (InfiniBand/RoCE fat-tree). Bandwidths are per GPU and per
// direction; latencies are per algorithm step; efficiency is the fraction of the line rate that
// large collectives achieve (calibrated against nccl-tests, see data/presets/clusters/).
#pragma once

#include <cstdint>

#include "core/bandwidth.h"
#include "core/time.h"

namespace orrery {

struct Tier {
  Bandwidth bandwidth;      // per GPU, per direction
  Time latency;             // per step of a collective algorithm
  double efficiency = 1.0;  // achievable fraction of `bandwidth`

  Bandwidth effective() const { return bandwidth * efficiency; }
};

struct ServerNetwork {
  int64_t gpus_per_server = 8;
  Tier scale_up;   // inside a server, per GPU
  Tier scale_out;  // between servers, per GPU: NICs per server * NIC rate / GPUs per server
};

}  // namespace orrery
