// What one rank does in one training iteration, layer by layer.
//
// A Layer is one record of a layer-wise workload (a model layer, an operator, or an
// iteration-level step such as an optimizer update). Each has three phases, each a compute span on
// the rank's compute stream optionally followed by a collective:
//   forward -> (later, in reverse layer order) input-gradient -> weight-gradient.
// A phase whose file gives no time lists the kernels it runs as compute demands (FLOPs, bytes);
// training/compute_pricing.h prices them into `compute` on a device before any simulator runs.
// A Program groups the layers into micro-batch passes and iteration-level rows. How passes are
// ordered, overlapped and pipelined is the simulator's business (src/training/), not the IR's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/compute_demand.h"
#include "core/time.h"
#include "workload/communication.h"

namespace orrery {

struct Phase {
  Time compute;                       // duration on the compute stream
  std::optional<Communication> comm;  // issued when the compute ends; absent if none
  // The file's own words for the communication, verbatim, for peers' compatibility modes:
  std::string source_comm_type;  // e.g. "ALLTOALL_EP", "NONE"
  Bytes source_comm_bytes = 0;
  // The kernels `compute` is priced from when the file gives no time (operator-level formats).
  std::vector<ComputeDemand> kernels;
};

struct Layer {
  std::string name;
  int64_t line = 0;  // 1-based line of the record in its file; 0 when the format has no lines
  Phase forward;
  Phase input_grad;
  Phase weight_grad;
  // Operator kind in operator-level workloads ("addmm", "softmax"); empty otherwise.
  std::string op;
};

// Half-open index range [begin, end) into Program::layers.
struct LayerRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
};

struct Program {
  std::vector<Layer> layers;              // every record, in file order
  std::vector<LayerRange> micro_batches;  // one pass per micro-batch, in order
  LayerRange before;  // iteration-level rows listed before the first pass (AICB: grad sync, ...)
  LayerRange after;   // iteration-level rows listed after the last pass (AICB: loss, optimizer)
};

}  // namespace orrery
