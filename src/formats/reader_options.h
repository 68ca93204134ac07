// What a user tells a reader about things its file leaves out. Each option applies to some
// formats only; the others ignore it (the CLI warns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"

namespace orrery {

struct ReaderOptions {
  // NeuSight tables (formats/neusight_table.h).
  std::optional<int64_t> layers;    // transformer blocks of the model (--layers)
  std::optional<DType> comm_dtype;  // element type of communication sizes (default fp32)
  // torchviz graphs (formats/torchviz_dot.h).
  std::string graph_config;  // side-car YAML path (--graph-config); empty: every default
  int64_t ep = 1;            // expert-parallel degree for experts.* parameters (--ep)
  // Chakra traces (formats/chakra_et_reader.h): the process-group JSON file (--comm-groups);
  // empty: comm_group.json beside the traces, if any.
  std::string comm_groups;
  // SimAI text read for the SimAI-compatible mode: no warning about what the event simulator
  // would do with the file.
  bool simai_compat = false;
};

}  // namespace orrery
