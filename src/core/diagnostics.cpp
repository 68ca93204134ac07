#include "core/diagnostics.h"

#include <algorithm>

namespace orrery {
namespace {

std::string prefixed(const SourceLocation& where, const std::string& message) {
  const std::string at = where.to_string();
  return at.empty() ? message : at + ": " + message;
}

}  // namespace

std::string SourceLocation::to_string() const {
  if (file.empty()) return line > 0 ? "line " + std::to_string(line) : "";
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

namespace {

// An error is one line a person reads: a quoted token of the input longer than kLongestQuote
// (a mangled file can hold megabytes on one line) is cut, saying how long it was.
constexpr size_t kLongestQuote = 80;

std::string cut_long_quotes(const std::string& message) {
  std::string out;
  size_t i = 0;
  while (i < message.size()) {
    const size_t open = message.find('\'', i);
    const size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
    if (close == std::string::npos) break;
    out.append(message, i, open + 1 - i);
    const size_t length = close - open - 1;
    if (length > kLongestQuote)
      out += message.substr(open + 1, kLongestQuote - 20) + "... (" + std::to_string(length) +
             " bytes)";
    else
      out.append(message, open + 1, length);
    out += '\'';
    i = close + 1;
  }
  out.append(message, std::min(i, message.size()));
  return out;
}

// An error is one line: control characters the input slipped into it (a quoted YAML key may
// hold any, and yaml-cpp's messages quote the character they stopped at) are written as escapes,
// \n, \r or \xNN; a tab stays.
std::string one_line(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if ((byte < 0x20 && c != '\t') || byte == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

InputError::InputError(const SourceLocation& where, const std::string& message)
    : std::runtime_error(one_line(cut_long_quotes(prefixed(where, message)))) {}

InputError::InputError(const std::string& message)
    : std::runtime_error(one_line(cut_long_quotes(message))) {}

std::string Warning::to_string() const {
  return prefixed(where, message);
}

void Diagnostics::warn(SourceLocation where, std::string message) {
  warnings_.push_back({std::move(where), std::move(message)});
}

}  // namespace orrery
