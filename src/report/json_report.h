// The machine-readable result printed by `orrery simulate --json`: one JSON object with
// iteration_time_s, breakdown_s {compute, exposed_comm {tp, ep, dp, dp_ep}, bubble, p2p}, stages,
// warnings and, in a compatibility mode, the peer's own figures (e.g. "simai", in microseconds);
// for model-level formats the device that priced the compute and `model` {parameters, layers,
// forward_flop (null when the file gives times only)}.
// Every time is in seconds unless its key says otherwise. Keys keep their order.
#pragma once

#include <iosfwd>

#include "workload/result.h"

namespace orrery {

void write_json(std::ostream& out, const Result& result);

}  // namespace orrery
