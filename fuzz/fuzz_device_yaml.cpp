// libFuzzer harness: device descriptions in YAML (hardware/device_file.h).
#include "hardware/device_file.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  fuzz::read_or_refuse(fuzz::kInputName,
                       [&] { parse_device_yaml(fuzz::as_text(data, size), fuzz::kInputName); });
  return 0;
}
