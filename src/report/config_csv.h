// The per-configuration table of a dataflow mapping (`orrery simulate DFMODEL_FILE --csv FILE`),
// DFModel's Compute_Latency / Memory_Latency / Network_Latency / Per_Config_II: one row per
// configuration, times in nanoseconds for one sample of one layer, printed with enough digits to
// read back the exact double. Columns: config, kernels ('+'-joined), compute_ns, memory_ns,
// network_ns, ii_ns.
#pragma once

#include <iosfwd>

#include "workload/result.h"

namespace orrery {

// Requires result.dataflow.
void write_config_csv(std::ostream& out, const Result& result);

}  // namespace orrery
