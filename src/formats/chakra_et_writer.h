// Writer of MLCommons Chakra execution traces (schema 0.0.4; formats/chakra_et_reader.h reads
// them back): one file per rank, DIR/STEM.RANK.et (STEM: the workload's name made a safe file
// name), and DIR/comm_group.json for the process groups.
//
// Every task becomes a node whose id is its index in the rank's list, with its dependencies as
// control dependencies. Durations are written twice: exactly, as the int64 attribute
// `orrery_duration_ps` (what Orrery reads back), and as Chakra's duration_micros, rounded to the
// nearest microsecond (what other tools read). Collectives carry comm_type, comm_size (all-gather:
// each rank's share) and pg_name; sends and receives comm_src, comm_dst, comm_size and comm_tag;
// compute nodes num_ops and tensor_size (FLOPs and device-memory bytes) when a compute demand or
// the work behind a priced duration is known, beside the duration.
#pragma once

#include <ostream>
#include <string>

#include "workload/graph_program.h"

namespace orrery {

// One rank's file.
void write_chakra_rank(std::ostream& out, const GraphProgram& program, size_t rank,
                       const std::string& name);

// The traces' file name stem for a workload called `name`: every character but letters, digits,
// '-', '_' and '.' made '_', and no leading dot, so that no name leads out of the output
// directory or hides its files ("workload" when nothing is left).
std::string trace_file_stem(const std::string& name);

// Every rank's file (DIR/STEM.RANK.et, STEM = trace_file_stem(name)) and the group file into
// `dir` (created if missing). Throws InputError when a file cannot be written.
void write_chakra_traces(const GraphProgram& program, const std::string& dir,
                         const std::string& name);

}  // namespace orrery
