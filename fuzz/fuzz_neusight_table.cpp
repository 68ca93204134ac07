// libFuzzer harness: NeuSight operator tables (formats/neusight_table.h). A table read with the
// defaults is read again with every reader option set, to reach block replication and the
// synthesized backward with other values.
#include "formats/neusight_table.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string_view content = fuzz::as_text(data, size);
  (void)looks_like_neusight_table(content);
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    Diagnostics diagnostics;
    read_neusight_table(fuzz::kInputName, content, ReaderOptions{}, diagnostics);
    ReaderOptions options;
    options.layers = 3;
    options.backward_ratio = 1.5;
    options.comm_dtype = DType::BF16;
    read_neusight_table(fuzz::kInputName, content, options, diagnostics);
  });
  return 0;
}
