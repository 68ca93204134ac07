// A self-contained HTML report of one run (inline CSS, SVG drawn by inline JavaScript, no
// network): the run's inputs and warnings, the breakdown of the critical stage as a bar, the
// timeline of one iteration per stage (the trace's slices), the sortable per-layer table, memory
// per stage against capacity, per-link utilisation over time (flow mode) and DFModel's
// per-configuration table. Every chart's axis names its unit. When the page's script has drawn
// everything, <body> carries data-status="ok" (else "error: <message>"), which tests read.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "workload/result.h"

namespace orrery {

// `inputs`: what the run was given, as (name, value) rows, e.g. ("workload", "W.txt").
void write_html_report(std::ostream& out, const std::vector<Result>& results,
                       const std::vector<std::pair<std::string, std::string>>& inputs);

}  // namespace orrery
