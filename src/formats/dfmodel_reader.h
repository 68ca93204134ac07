// Reader for DFModel design-space-exploration files: protobuf text (dse.txt, dse_final.txt) and
// binary (.pb), with Orrery's own schema (formats/dfmodel_dse.proto). It translates the file into
// a DataflowProblem and checks what a single field can tell (the variant of each kernel, enums
// that must be set, the topology present); graph-level checks and derived fields are the dataflow
// model's (src/dataflow/dataflow_graph.h). Accepts both spellings of the run block (`miscellany`,
// `execution`) and of overlap (`perfect_overlap`, `overlap`), the 11 topology messages and the
// four kernel variants. See docs/dfmodel.md.
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "workload/dataflow_problem.h"

namespace orrery {

// True when the content starts like a DFModel text file (a top-level DSE block).
bool looks_like_dfmodel_text(std::string_view content);
// True when the content parses as a binary DFModel file holding a dataflow graph.
bool looks_like_dfmodel_binary(std::string_view content);

// Reads text or binary (decided by looks_like_dfmodel_text). Throws InputError naming the file
// and line ("dse.txt:12: expected ..."); a binary file has no lines, so its errors name the
// kernel or block instead. Assumptions become warnings in `diagnostics`.
DataflowProblem read_dfmodel(const std::string& path, std::string_view content,
                             Diagnostics& diagnostics);

}  // namespace orrery
