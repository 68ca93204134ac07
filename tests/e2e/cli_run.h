// Helpers for the end-to-end tests: run the `orrery` binary (ORRERY_BINARY) as a user would,
// capture its exit status, stdout and stderr, and give each test a temporary directory.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace orrery::e2e {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;
  std::string out, err;
};

// Runs `orrery <args>` through the shell (in `cwd` when given).
inline CliRun orrery(const std::string& args, const fs::path& cwd = {}) {
  static int counter = 0;
  const fs::path err_file =
      fs::temp_directory_path() /
      ("orrery_e2e_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  CliRun run;
  const std::string in = cwd.empty() ? std::string() : "cd '" + cwd.string() + "' && ";
  FILE* pipe = ::popen(
      (in + std::string(ORRERY_BINARY) + " " + args + " 2>" + err_file.string()).c_str(), "r");
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    run.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  run.err.assign(std::istreambuf_iterator<char>(err), {});
  fs::remove(err_file);
  return run;
}

// The cells of a comma-separated text, row by row (no quoting: Orrery's CSVs need none).
inline std::vector<std::vector<std::string>> csv_cells(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    std::string cell;
    while (std::getline(fields, cell, ','))
      cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("orrery_e2e_" + std::to_string(::getpid()) + "_" + std::to_string(next_++))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  static inline int next_ = 0;
  fs::path path_;
};

}  // namespace orrery::e2e
