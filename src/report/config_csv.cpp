#include "report/config_csv.h"

#include <fmt/format.h>

#include <ostream>

namespace orrery {

void write_config_csv(std::ostream& out, const Result& r) {
  out << "config,kernels,compute_ns,memory_ns,network_ns,ii_ns\n";
  for (const DataflowConfigRow& c : r.dataflow->configs)
    out << fmt::format("{},{},{},{},{},{}\n", c.config, c.kernels, c.compute_ns, c.memory_ns,
                       c.network_ns, c.ii_ns);
}

}  // namespace orrery
