#include "formats/simai_text_writer.h"

#include <cmath>
#include <ostream>
#include <stdexcept>
#include <string>

namespace orrery {
namespace {

std::string collective_token(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "ALLREDUCE";
    case CollectiveKind::AllGather:
      return "ALLGATHER";
    case CollectiveKind::ReduceScatter:
      return "REDUCESCATTER";
    case CollectiveKind::AllToAll:
      return "ALLTOALL";
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
    case CollectiveKind::SendRecv:
      break;
  }
  throw std::invalid_argument("SimAI text has no " + std::string(to_string(kind)) + " collective");
}

// "<type>\t<bytes>" for one column; `weight_grad` selects the column's default group.
std::string comm_fields(const Phase& p, bool weight_grad, const std::string& row) {
  if (!p.comm) return "NONE\t0";
  const Communication& c = *p.comm;
  std::string type = collective_token(c.kind);
  const CommGroup default_group = weight_grad ? CommGroup::Data : CommGroup::Tensor;
  if (c.group == CommGroup::Expert) {
    type += "_EP";
  } else if (c.group == CommGroup::ExpertData) {
    type += "_DP_EP";
  } else if (c.group != default_group) {
    throw std::invalid_argument("row '" + row + "': a " + std::string(to_string(c.group)) +
                                " collective cannot be written in the " +
                                (weight_grad ? "weight-gradient" : "forward/input-gradient") +
                                " column of SimAI text");
  }
  return type + "\t" + std::to_string(c.bytes);
}

int64_t ns(Time t) {
  return std::llround(t.nanoseconds());
}

}  // namespace

void write_simai_text(std::ostream& out, const Workload& w) {
  const Parallelism& p = w.parallelism;
  out << (w.policy.empty() ? "HYBRID_TRANSFORMER" : w.policy)
      << " model_parallel_NPU_group: " << p.tp << " ep: " << p.ep << " pp: " << p.pp
      << " vpp: " << p.vpp << " ga: " << p.micro_batches << " all_gpus: " << p.world_size;
  for (const auto& [key, list] : {std::pair{"checkpoints:", &w.recompute.checkpoints},
                                  std::pair{"checkpoint_initiates:", &w.recompute.triggers}}) {
    out << " " << key << " " << list->size();
    for (const int64_t index : *list)
      out << " " << index;
  }
  if (w.stage_boundary_bytes) out << " pp_comm: " << *w.stage_boundary_bytes;
  out << "\n" << w.program.layers.size() << "\n";
  for (const Layer& l : w.program.layers) {
    if (l.name.find_first_of(" \t\r\n") != std::string::npos || l.name.empty())
      throw std::invalid_argument("row name '" + l.name + "' is empty or has whitespace");
    out << l.name << "\t-1\t" << ns(l.forward.compute) << "\t"
        << comm_fields(l.forward, false, l.name) << "\t" << ns(l.input_grad.compute) << "\t"
        << comm_fields(l.input_grad, false, l.name) << "\t" << ns(l.weight_grad.compute) << "\t"
        << comm_fields(l.weight_grad, true, l.name) << "\t0\n";
  }
}

}  // namespace orrery
