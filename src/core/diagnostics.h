// Diagnostics: errors that stop a run and warnings that accompany a result, both located in the
// user's input (file and 1-based line; line 0 means "the file as a whole" or "no file").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace orrery {

struct SourceLocation {
  std::string file;  // empty when the message is not about a file (e.g. a command-line flag)
  int64_t line = 0;  // 1-based; 0 when no line applies

  // "file:line", "file", or "" as available.
  std::string to_string() const;
};

// Bad input: the message reads "file:line: expected ...". The CLI prints it on one line and
// exits with status 2.
class InputError : public std::runtime_error {
 public:
  InputError(const SourceLocation& where, const std::string& message);
  explicit InputError(const std::string& message);
};

struct Warning {
  SourceLocation where;
  std::string message;

  std::string to_string() const;
};

// Collects the warnings of one run in the order they arise.
class Diagnostics {
 public:
  void warn(SourceLocation where, std::string message);
  const std::vector<Warning>& warnings() const { return warnings_; }

 private:
  std::vector<Warning> warnings_;
};

}  // namespace orrery
