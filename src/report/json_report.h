// The machine-readable result printed by `orrery simulate --json`: one JSON object with
// iteration_time_s, breakdown_s {compute, exposed_comm {tp, ep, dp, dp_ep}, bubble, p2p}, stages,
// warnings and, in a compatibility mode, the peer's own figures (e.g. "simai", in microseconds).
// For a dataflow problem also utilization, cost_usd, power_w, flop, tokens_per_second, system,
// mapping, search {statement, proven_optimal}, configs (per-configuration ns) and alternatives,
// with DFModel's own figures under "dfmodel". For model-level formats the device that priced the
// compute and `model` {parameters, layers, forward_flop (null when the file gives times only)}.
// Every time is in seconds unless its key says otherwise. Keys keep their order.
#pragma once

#include <iosfwd>
#include <vector>

#include "report/provenance.h"
#include "workload/result.h"

namespace orrery {

// One result: the object. Several (jobs sharing a cluster): {"jobs": [...]}, each job with
// "job": {"index": k, "of": n}. With `provenance`, a "provenance" object first
// (report/provenance.h). Whole quantities (bytes, SimAI's microsecond columns) are JSON integers.
void write_json(std::ostream& out, const std::vector<Result>& results,
                const Provenance* provenance = nullptr);
void write_json(std::ostream& out, const Result& result, const Provenance* provenance = nullptr);

}  // namespace orrery
