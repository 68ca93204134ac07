// libFuzzer harness: one rank's Chakra ET file (formats/chakra_et_reader.h), then, when it names no
// process group and no peer beyond rank 1, two copies of it simulated in event mode on a ring of
// two (training/graph_simulator.h), so that matching, deadlock detection and the engine see it
// too: every outcome must be a result or a one-line refusal naming the input, never a hang.
// Seeds: the bundled ASTRA-sim microbenchmark traces.
#include <sstream>

#include "cluster/cluster.h"
#include "formats/chakra_et_reader.h"
#include "fuzz_reader.h"
#include "training/event_simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace orrery;
  static const Cluster ring = parse_cluster_yaml(
      "name: ring\nnetwork:\n  - name: r\n    kind: ring\n    size: 2\n"
      "    bandwidth: 50 GiB/s\n    latency: 500 ns\n",
      "ring");
  fuzz::read_or_refuse(fuzz::kInputName, [&] {
    std::istringstream in(std::string(fuzz::as_text(data, size)));
    Diagnostics diagnostics;
    Workload w;
    w.source = fuzz::kInputName;
    w.parallelism.world_size = 2;
    GraphProgram& program = w.graph.emplace();
    ChakraGroups groups(program);
    const RankGraph rank = read_chakra_rank(in, fuzz::kInputName, groups, diagnostics);
    if (!program.groups.empty()) return;
    for (const GraphTask& t : rank.tasks)
      if (t.peer > 1 || t.has_demand) return;
    program.ranks = {rank, rank};
    EventSimulator().simulate(w, ring, {}, diagnostics);
  });
  return 0;
}
