#include "cli/output_files.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

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

const std::vector<std::filesystem::path>& input_files() {
  return protected_inputs();
}

void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& write) {
  if (path == "-") {  // standard output
    write(std::cout);
    return;
  }
  for (const auto& input : protected_inputs()) {
    std::error_code ec;
    if (std::filesystem::equivalent(path, input, ec))
      throw InputError({path.string(), 0}, "refusing to overwrite an input of this run (" +
                                               input.string() + "); choose another output path");
  }
  if (std::error_code ec; std::filesystem::is_directory(path, ec))
    throw InputError({path.string(), 0}, "cannot write output file: it is a directory");
  std::filesystem::path temporary = path;
  temporary += ".orrery-partial";
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out)
      throw InputError({path.string(), 0},
                       "cannot write output file: " + std::string(std::strerror(errno)));
    try {
      write(out);
    } catch (...) {
      out.close();
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      throw;
    }
    if (!out.flush()) {
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      throw InputError({path.string(), 0}, "error while writing output file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(temporary, ec);
    throw InputError({path.string(), 0}, "cannot write output file: " + why);
  }
}

void check_distinct_outputs(
    const std::vector<std::pair<std::string, std::filesystem::path>>& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i)
    for (size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() &&
          std::filesystem::absolute(outputs[i].second).lexically_normal() ==
              std::filesystem::absolute(outputs[j].second).lexically_normal())
        throw InputError(outputs[i].first + " and " + outputs[j].first + " name the same path '" +
                         outputs[i].second.string() + "'; give each output its own");
}

void check_file_name(const std::string& name, const std::string& flag) {
  if (name.find_first_of("/\\") != std::string::npos || name == "." || name == ".." ||
      name.find('\0') != std::string::npos)
    throw InputError(flag + ": expected a file name without a directory part, found '" + name +
                     "'");
}

void ensure_output_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directory(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw InputError({dir.string(), 0}, "cannot create output directory");
}

}  // namespace orrery
