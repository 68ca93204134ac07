// libFuzzer harness: NeuSight operator tables (formats/neusight_table.h). A table read with the
// defaults is read again with every reader option set, to reach block replication, and its
// backward estimated (training/backward_estimate.h) at the default and the largest ratio, to reach
// the bound on the iteration's compute.
#include "formats/neusight_table.h"

#include "fuzz_reader.h"
#include "training/backward_estimate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string_view content = fuzz::as_text(data, size);
  (void)looks_like_neusight_table(content);
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    Diagnostics diagnostics;
    Workload w = read_neusight_table(fuzz::kInputName, content, ReaderOptions{}, diagnostics);
    estimate_backward(w, kDefaultBackwardRatio, diagnostics);
    ReaderOptions options;
    options.layers = 3;
    options.comm_dtype = DType::BF16;
    w = read_neusight_table(fuzz::kInputName, content, options, diagnostics);
    estimate_backward(w, kMaxBackwardRatio, diagnostics);
  });
  return 0;
}
