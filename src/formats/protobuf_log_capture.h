// What the protobuf library logs while parsing, kept for a reader's own one-line error instead
// of printed (shared by the DFModel and Chakra readers).
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <string>

namespace orrery {

// The protobuf library (Debian 12: 3.21, whose logging is its own, not Abseil's) logs to stderr
// what it rejects while parsing, e.g. "String field '...' contains invalid UTF-8 data when parsing
// a protocol buffer", before the parse fails. While one of these is alive, its messages are kept
// for Orrery's own one-line error instead (SetLogHandler; the previous handler is restored).
class ProtobufLogCapture {
 public:
  ProtobufLogCapture() : previous_(google::protobuf::SetLogHandler(&keep)) { first().clear(); }
  ~ProtobufLogCapture() { google::protobuf::SetLogHandler(previous_); }
  ProtobufLogCapture(const ProtobufLogCapture&) = delete;
  ProtobufLogCapture& operator=(const ProtobufLogCapture&) = delete;

  // The first message's first sentence ("" when none).
  static std::string message() {
    const std::string& m = first();
    const size_t end = m.find(". ");
    return m.substr(0, end);
  }

 private:
  static std::string& first() {
    static std::string text;
    return text;
  }
  static void keep(google::protobuf::LogLevel, const char*, int, const std::string& message) {
    if (first().empty()) first() = message;
  }
  google::protobuf::LogHandler* previous_;
};

}  // namespace orrery
