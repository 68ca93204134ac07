// A collective run beside a GEMM instead of after it, as Transformer Engine's communication-GEMM
// overlap (userbuffers, Megatron's tp_comm_overlap) runs the tensor-parallel all-gathers and
// reduce-scatters of sequence parallelism. The IR says which method and how many SMs the
// communication holds; training/gemm_overlap_time.h says what the pair then costs.
//
// Methods (TE's names):
// - bulk: the collective has no data dependence on the GEMM (the re-gather of a saved input
//   beside the input-gradient GEMM, the reduce-scatter of that gradient beside the
//   weight-gradient GEMM); both start together;
// - pipelined: the GEMM is split into `chunks` along its rows; each chunk's collective
//   (a reduce-scatter of its output) runs beside the next chunk's GEMM;
// - ring exchange: over t tensor ranks the GEMM runs in t chunks, one per rank's shard; while
//   it multiplies one shard the next passes to its neighbour point to point (t - 1 transfers;
//   an all-gather of the input, or a reduce-scatter of the output passed on as partial sums).
#pragma once

#include <cstdint>

#include "core/time.h"
#include "workload/communication.h"

namespace orrery {

enum class GemmOverlapMethod : uint8_t { Bulk, Pipelined, RingExchange };

struct GemmOverlap {
  Communication comm;
  GemmOverlapMethod method = GemmOverlapMethod::Bulk;
  int64_t chunks = 1;  // pipelined: the GEMM's splits; ring exchange: the tensor ranks
  int64_t sms = 0;     // SMs the communication kernels hold while they run
  // TE's set_sm_margin: the GEMM is launched for the SMs left, not for every SM
  bool sm_margin = false;
  // The overlapped GEMM's time: the phase's first GEMM kernel, priced with the phase's compute
  // (training/compute_pricing.h); the rest of the phase runs before or after the pair.
  Time gemm;
};

}  // namespace orrery
