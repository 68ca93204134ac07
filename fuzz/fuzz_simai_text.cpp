// libFuzzer harness: SimAI/AICB layer-wise text workloads (formats/simai_text.h).
#include "formats/simai_text.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    Diagnostics diagnostics;
    (void)looks_like_simai_text(fuzz::as_text(data, size));
    read_simai_text(fuzz::kInputName, fuzz::as_text(data, size), diagnostics);
  });
  return 0;
}
