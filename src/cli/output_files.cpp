#include "cli/output_files.h"

#include <fstream>

#include "core/diagnostics.h"

namespace orrery {
namespace {

std::vector<std::filesystem::path>& protected_inputs() {
  static std::vector<std::filesystem::path> inputs;
  return inputs;
}

}  // namespace

void protect_input_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) protected_inputs().push_back(path);
}

void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& write) {
  for (const auto& input : protected_inputs()) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, input, ec))
      throw InputError({path.string(), 0}, "refusing to overwrite an input of this run (" +
                                               input.string() + "); choose another output path");
  }
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
