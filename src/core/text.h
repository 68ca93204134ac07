// Small text helpers shared by the readers: whitespace splitting and strict number parsing
// (the whole token must be a number; no sign where none is allowed; no overflow).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace orrery {

struct TextLine {
  int64_t number = 0;  // 1-based
  std::string_view text;
};

// Every line of `content` (without its '\n'), numbered from 1; a trailing newline yields a last,
// empty line.
std::vector<TextLine> split_lines(std::string_view content);

std::vector<std::string_view> split_whitespace(std::string_view text);
// Fields separated by `separator`; empty fields kept.
std::vector<std::string_view> split(std::string_view text, char separator);
std::string_view trim(std::string_view text);

std::optional<uint64_t> parse_uint64(std::string_view token);
std::optional<int64_t> parse_int64(std::string_view token);
// A finite decimal or scientific number.
std::optional<double> parse_double(std::string_view token);

}  // namespace orrery
