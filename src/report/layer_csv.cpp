#include "report/layer_csv.h"

#include <fmt/format.h>

#include <ostream>

#include "report/csv_field.h"

namespace orrery {
namespace {

std::string us(Time t) {
  return fmt::format("{:.3f}", t.microseconds());
}

}  // namespace

void write_layer_csv(std::ostream& out, const Result& r) {
  out << "layer,line,executions,recomputes";
  for (const char* p : {"fwd", "ig", "wg"})
    out << fmt::format(",{0}_compute_us,{0}_comm,{0}_group,{0}_ranks,{0}_bytes,{0}_comm_us", p);
  out << "\n";
  for (const LayerTiming& l : r.layers) {
    out << csv_field(l.name) << ',' << l.line << ',' << l.executions << ',' << l.recomputes;
    for (const PhaseTiming* p : {&l.forward, &l.input_grad, &l.weight_grad}) {
      out << ',' << us(p->compute);
      if (p->comm)
        out << fmt::format(",{},{},{},{},{}", to_string(p->comm->comm.kind),
                           to_string(p->comm->comm.group), p->comm->ranks, p->comm->comm.bytes,
                           us(p->comm->cost));
      else
        out << ",,,,,";
    }
    out << "\n";
  }
}

}  // namespace orrery
