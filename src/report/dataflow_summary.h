// The human-readable summary of a dataflow problem (DFModel), printed by `orrery simulate` for a
// DFModel file: system and mapping, time per iteration and its breakdown, throughput in tokens/s,
// FLOPS utilisation, cost and power, DFModel's own figures at full precision, what the search
// covered and its best alternatives, and warnings.
#pragma once

#include <iosfwd>

#include "workload/result.h"

namespace orrery {

// Requires result.dataflow.
void write_dataflow_summary(std::ostream& out, const Result& result);

}  // namespace orrery
