// libFuzzer harness: nccl-tests output logs (formats/nccl_tests_log.h), as `orrery calibrate`
// reads them. The input's name names a collective, as a user's log file may, so that logs which
// do not say theirs are read too.
#include "formats/nccl_tests_log.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  static const std::string name = "fuzz_all_reduce_perf.log";
  fuzz::read_or_refuse(name, [&] { read_nccl_tests_log(name, fuzz::as_text(data, size)); });
  return 0;
}
