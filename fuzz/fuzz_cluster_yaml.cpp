// libFuzzer harness: cluster descriptions in YAML (cluster/cluster.h): the schema, every
// dimension kind and the topology they build.
#include "cluster/cluster.h"

#include "fuzz_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  fuzz::read_or_refuse(fuzz::kInputName,
                       [&] { parse_cluster_yaml(fuzz::as_text(data, size), fuzz::kInputName); });
  return 0;
}
