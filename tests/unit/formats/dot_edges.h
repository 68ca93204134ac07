// Test support: where the edges `a -> b` of a torchviz DOT text are, so that tests can delete
// them one at a time.
#pragma once

#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace orrery::testing {

// (offset, length) of every "a -> b" between numeric node ids, in file order.
inline std::vector<std::pair<size_t, size_t>> dot_edges(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> edges;
  for (size_t at = text.find(" -> "); at != std::string::npos; at = text.find(" -> ", at + 4)) {
    size_t begin = at, end = at + 4;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1])))
      --begin;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])))
      ++end;
    edges.emplace_back(begin, end - begin);
  }
  return edges;
}

}  // namespace orrery::testing
