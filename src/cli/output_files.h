// Writing the output files a user asked for (--csv FILE, -o DIR): nothing is written elsewhere.
#pragma once

#include <filesystem>
#include <functional>
#include <iosfwd>

namespace orrery {

// Writes `path` with `write`; throws InputError when it cannot be written.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

// Creates `dir` if missing (not its parents); throws InputError when it is not a directory then.
void ensure_output_directory(const std::filesystem::path& dir);

}  // namespace orrery
