// Writing the output files a user asked for (--csv FILE, -o DIR): nothing is written elsewhere.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace orrery {

// Marks a file this run reads: no output may replace it (a mistyped --csv would otherwise destroy
// the workload). Paths that do not name an existing file are ignored.
void protect_input_file(const std::filesystem::path& path);

// The files marked so far, in the order given (the run's input files, for its provenance).
const std::vector<std::filesystem::path>& input_files();

// Writes `path` with `write`, through a temporary file in the same directory renamed over `path`
// once complete (a failed run leaves no partial file); throws InputError when it cannot be
// written or is a protected input. The path "-" is standard output.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// Rejects output names given for `flag` that are one path twice (a later file would replace an
// earlier one); call before anything is written.
void check_distinct_outputs(
    const std::vector<std::pair<std::string, std::filesystem::path>>& outputs);

// A name that becomes a file name (e.g. --run-name): no directory part, not "." or "..".
void check_file_name(const std::string& name, const std::string& flag);

// Creates `dir` if missing (not its parents); throws InputError when it is not a directory then.
void ensure_output_directory(const std::filesystem::path& dir);

}  // namespace orrery
