#include "core/text.h"

#include <charconv>
#include <cmath>

namespace orrery {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

template <typename T>
std::optional<T> parse_integer(std::string_view token) {
  if (token.empty()) return std::nullopt;
  T value{};
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

}  // namespace

std::vector<TextLine> split_lines(std::string_view content) {
  std::vector<TextLine> lines;
  int64_t number = 1;
  size_t start = 0;
  while (start <= content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    lines.push_back({number++, content.substr(start, end - start)});
    start = end + 1;
  }
  return lines;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    fields.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i]))
      ++i;
    const size_t start = i;
    while (i < text.size() && !is_space(text[i]))
      ++i;
    if (i > start) tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

std::string_view trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && is_space(text[b]))
    ++b;
  while (e > b && is_space(text[e - 1]))
    --e;
  return text.substr(b, e - b);
}

std::optional<uint64_t> parse_uint64(std::string_view token) {
  return parse_integer<uint64_t>(token);
}

std::optional<int64_t> parse_int64(std::string_view token) {
  return parse_integer<int64_t>(token);
}

std::optional<double> parse_double(std::string_view token) {
  if (token.empty()) return std::nullopt;
  if (token.front() == '+') token.remove_prefix(1);
  double value = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace orrery
