// Reader for MLCommons Chakra execution traces (schema 0.0.4), the input of ASTRA-sim: one file
// per rank, NAME.RANK.et, each a stream of length-delimited protobuf messages (a varint length,
// then the message): the global metadata, then the nodes (schema: formats/chakra_et.proto).
//
// Nodes become the tasks of workload/graph_program.h:
//   COMP_NODE         Compute: `orrery_duration_ps`, else duration_micros, else num_ops FLOPs and
//                     tensor_size bytes as a compute demand (priced on the device later)
//   MEM_LOAD_NODE, MEM_STORE_NODE  Memory: tensor_size bytes (or a duration as above)
//   COMM_COLL_NODE    Collective: comm_type, comm_size, pg_name (the process group; every rank when
//                     absent); all-gather's comm_size is each rank's share (the gathered buffer is
//                     comm_size x ranks)
//   COMM_SEND_NODE, COMM_RECV_NODE  Send / Recv: comm_dst / comm_src, comm_size, comm_tag
//   METADATA_NODE     a task of no duration (its dependencies still order the graph)
// Attributes are read by name, whatever integer type holds them. Control and data dependencies
// both order the graph; a rank's nodes are put in a topological order that keeps file order where
// the dependencies allow.
//
// The process groups come from a JSON file {"group id": [ranks...], ...} (ASTRA-sim's
// communicator-group file): ReaderOptions::comm_groups, else `comm_group.json` beside the traces.
//
// Reading is streaming: one message in memory at a time. Every malformed input is an InputError
// naming the file, the node id and what was expected; the checks that need all ranks (matching
// sends with receives, deadlocks) are the simulator's (training/graph_simulator.h).
#pragma once

#include <istream>
#include <string>
#include <unordered_map>

#include "core/diagnostics.h"
#include "formats/reader_options.h"
#include "workload/graph_program.h"
#include "workload/workload.h"

namespace orrery {

// The schema version this reader takes (and the writer writes).
inline constexpr const char* kChakraVersion = "0.0.4";

// True when `path` names a trace set: a directory holding NAME.RANK.et files, one such file, or
// their common prefix NAME (with NAME.0.et beside it).
bool is_chakra_trace_path(const std::string& path);

// Reads every rank's file of the trace set `path` names (see is_chakra_trace_path).
Workload read_chakra_traces(const std::string& path, const ReaderOptions& options,
                            Diagnostics& diagnostics);

// Process groups by name as the reader meets them: indices into a program's groups (a name met
// first is added, without members; the group file sets them).
class ChakraGroups {
 public:
  explicit ChakraGroups(GraphProgram& program) : program_(program) {}
  int32_t index(const std::string& name);

 private:
  GraphProgram& program_;
  std::unordered_map<std::string, int32_t> index_;
};

// One rank's file from a stream; `source` names it in messages. Exposed for tests and the fuzz
// harness.
RankGraph read_chakra_rank(std::istream& in, const std::string& source, ChakraGroups& groups,
                           Diagnostics& diagnostics);

}  // namespace orrery
