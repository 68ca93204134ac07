// libFuzzer harness: torchviz autograd graphs in Graphviz DOT (formats/torchviz_dot.h): cgraph's
// parse, the forward DAG, shape inference, kernels and DDP buckets. A graph read with the
// defaults is read again with two expert-parallel ranks, to reach the expert sharding.
#include "formats/torchviz_dot.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string_view content = fuzz::as_text(data, size);
  (void)looks_like_torchviz_dot(content);
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    Diagnostics diagnostics;
    read_torchviz_dot(fuzz::kInputName, content, ReaderOptions{}, diagnostics);
    ReaderOptions options;
    options.ep = 2;
    read_torchviz_dot(fuzz::kInputName, content, options, diagnostics);
  });
  return 0;
}
