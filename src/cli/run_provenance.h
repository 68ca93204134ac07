// The provenance of a run (report/provenance.h): the command line main() recorded, the version,
// the effective cluster, the devices that priced compute and the input files' checksums.
#pragma once

#include <string>
#include <vector>

#include "cli/cluster_options.h"
#include "report/provenance.h"

namespace orrery {

// "orrery 0.1.0".
std::string orrery_version();
// What `orrery --version` prints: the version and the build, as an explore database records it
// ("orrery 0.1.0 (build 0.1.0+<git describe>)", "-dirty-<hash of the changes>" after it where
// the checkout had uncommitted changes, "unknown" outside a checkout; cmake/BuildRevision.cmake).
std::string orrery_version_and_build();

// Called once by main() with its arguments as given (before SimAI's spellings are rewritten).
void record_command_line(int argc, const char* const* argv);

// `cluster`: the cluster that ran (null: the workload file's own system, as a DFModel file's).
// `devices`: per job, the device that priced its compute ("" where the file gave times). The
// inputs are the files protect_input_file() marked, hashed now.
Provenance run_provenance(const EffectiveCluster* cluster, std::vector<std::string> devices);

}  // namespace orrery
