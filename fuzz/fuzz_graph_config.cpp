// libFuzzer harness: the side-car YAML of a torchviz graph, --graph-config
// (formats/torchviz/graph_config.h).
#include "formats/torchviz/graph_config.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  fuzz::read_or_refuse(fuzz::kInputName,
                       [&] { parse_graph_config(fuzz::as_text(data, size), fuzz::kInputName); });
  return 0;
}
