// Reading a workload file of any supported format: format names, detection from content, and
// dispatch to the format's reader.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostics.h"
#include "formats/reader_options.h"
#include "workload/workload.h"

namespace orrery {

enum class WorkloadFormat { SimaiText, Dfmodel, NeusightTable, TorchvizDot, Chakra };

// Names accepted by --format, in order: {"simai", "dfmodel", "neusight", "torchviz", "chakra"}.
std::vector<std::string_view> workload_format_names();
std::optional<WorkloadFormat> parse_workload_format(std::string_view name);
std::string_view to_string(WorkloadFormat format);

// The format the content looks like, or nullopt.
std::optional<WorkloadFormat> detect_workload_format(std::string_view content);

// The whole file; throws InputError when it cannot be read or is empty.
std::string read_workload_content(const std::string& path);

// Reads `path`; detects the format unless `forced`. A Chakra trace set is named by its directory,
// one of its files or their common prefix (formats/chakra_et_reader.h). Throws InputError for
// unreadable files, unrecognised content and malformed input. A DFModel file is a dataflow problem,
// not a layer-wise workload: read it with read_dfmodel() (formats/dfmodel_reader.h); here it is an
// InputError.
Workload read_workload_file(const std::string& path, std::optional<WorkloadFormat> forced,
                            Diagnostics& diagnostics);
// The same with the user's reader options (formats that leave things out).
Workload read_workload_file(const std::string& path, std::optional<WorkloadFormat> forced,
                            const ReaderOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
