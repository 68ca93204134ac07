// A data file compiled into the binary (see cmake/EmbedFiles.cmake).
#pragma once

#include <string_view>

namespace orrery {

struct EmbeddedFile {
  std::string_view name;      // file name without directory, e.g. "dgx-a100.yaml"
  std::string_view contents;  // the file's bytes
};

}  // namespace orrery
