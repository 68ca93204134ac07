// Reports for operator-level workloads (torchviz graphs, NeuSight tables), whose rows are
// operators with a kind (Layer::op):
// - the per-operator CSV (`orrery simulate --csv FILE`, ops.csv): one row per operator with, per
//   phase (fwd, ig = input gradient, wg = weight gradient), its compute time in microseconds,
//   FLOPs and bytes moved (from the kernels the reader described; empty for files with times),
//   then its collective, if any: kind, group, ranks, bytes and cost in microseconds;
// - the table per operator kind appended to the summary: operators, forward and backward compute,
//   forward FLOPs and share of the compute, largest first;
// - the per-operator table appended to the summary: each operator's forward and backward compute,
//   its collective's cost and its share of the compute, in execution order; every operator when
//   there are at most kOpTableRows, else the kOpTableRows with the most compute (the CSV has
//   them all).
#pragma once

#include <cstddef>
#include <iosfwd>

#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

// True when the workload's rows are operators with kinds.
bool has_operator_rows(const Workload& workload);

// `result.layers` must be aligned with `workload.program.layers` (as every simulator fills it).
void write_op_csv(std::ostream& out, const Workload& workload, const Result& result);
void write_op_kind_table(std::ostream& out, const Workload& workload, const Result& result);

constexpr size_t kOpTableRows = 40;
void write_op_table(std::ostream& out, const Workload& workload, const Result& result);

}  // namespace orrery
