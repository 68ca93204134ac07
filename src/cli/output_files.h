// Writing the output files a user asked for (--csv FILE, -o DIR): nothing is written elsewhere.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <vector>

namespace orrery {

// Marks a file this run reads: no output may replace it (a mistyped --csv would otherwise destroy
// the workload). Paths that do not name an existing file are ignored.
void protect_input_file(const std::filesystem::path& path);

// Writes `path` with `write`; throws InputError when it cannot be written or is a protected input.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// Creates `dir` if missing (not its parents); throws InputError when it is not a directory then.
void ensure_output_directory(const std::filesystem::path& dir);

}  // namespace orrery
