#include "report/layer_csv.h"

#include <fmt/format.h>

#include <ostream>

namespace orrery {
namespace {

// Quotes a field when it holds a comma or a quote (RFC 4180).
std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

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
    out << field(l.name) << ',' << l.line << ',' << l.executions << ',' << l.recomputes;
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
