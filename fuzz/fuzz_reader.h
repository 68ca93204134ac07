// What every harness does with one input (docs/reliability.md, "Fuzzing"): hand the bytes to a
// reader as a whole file. A clean refusal, InputError, is a normal outcome, but it must read as
// the CLI prints it: one line that names the input. Any other exception escapes to libFuzzer,
// which reports it ("deadly signal" after an uncaught exception) like a crash or a sanitizer
// report: each of those is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/diagnostics.h"

namespace orrery::fuzz {

// The name every harness gives its input; errors must start with it.
inline const std::string kInputName = "fuzz-input";

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Stops the run on a malformed refusal: libFuzzer saves the input that caused it.
[[noreturn]] inline void finding(const char* what, const std::string& message) {
  std::fprintf(stderr, "orrery fuzz finding: %s: %s\n", what, message.c_str());
  std::abort();
}

// Runs `read`; an InputError is accepted when its message starts with `source` and is one line.
template <class Read>
void read_or_refuse(const std::string& source, Read&& read) {
  try {
    read();
  } catch (const InputError& e) {
    const std::string_view message = e.what();
    if (!message.starts_with(source)) finding("error does not name the input", e.what());
    if (message.find('\n') != std::string_view::npos) finding("error spans lines", e.what());
  }
}

}  // namespace orrery::fuzz
