// libFuzzer harness: DFModel design-space-exploration files, protobuf text and binary
// (formats/dfmodel_reader.h; the content decides which). Seeds: the bundled text file and its
// binary twin, encoded by protoc at build time.
#include "formats/dfmodel_reader.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  const std::string_view content = fuzz::as_text(data, size);
  (void)looks_like_dfmodel_text(content);
  (void)looks_like_dfmodel_binary(content);
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    Diagnostics diagnostics;
    read_dfmodel(fuzz::kInputName, content, diagnostics);
  });
  return 0;
}
