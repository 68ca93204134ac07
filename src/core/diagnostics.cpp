#include "core/diagnostics.h"

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

InputError::InputError(const SourceLocation& where, const std::string& message)
    : std::runtime_error(prefixed(where, message)) {}

InputError::InputError(const std::string& message) : std::runtime_error(message) {}

std::string Warning::to_string() const {
  return prefixed(where, message);
}

void Diagnostics::warn(SourceLocation where, std::string message) {
  warnings_.push_back({std::move(where), std::move(message)});
}

}  // namespace orrery
