#include "cli/output_files.h"

#include <fstream>

#include "core/diagnostics.h"

namespace orrery {

void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw InputError({path.string(), 0}, "cannot write output file");
  write(out);
  if (!out) throw InputError({path.string(), 0}, "error while writing output file");
}

void ensure_output_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw InputError({dir.string(), 0}, "cannot create output directory");
}

}  // namespace orrery
