// The rows of a comma-separated file in tests/data/: lines starting with '#' (the file's source
// and method) and the header line skipped, each row's cells in order (no quoting: the bundled
// files need none).
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace orrery::test_data {

inline std::vector<std::vector<std::string>> rows(const std::string& file) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/data/" + file);
  std::vector<std::vector<std::string>> out;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string>& cells = out.emplace_back();
    std::istringstream row(line);
    std::string cell;
    while (std::getline(row, cell, ','))
      cells.push_back(cell);
  }
  return out;
}

}  // namespace orrery::test_data
