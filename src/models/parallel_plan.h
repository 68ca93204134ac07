// How a model is trained: the parallel degrees, batch, and the memory-saving choices Megatron-LM
// offers. Counts are plain integers; `value_bytes` is the size of one weight or activation value
// in the training dtype (2 for fp16/bf16, 1 for fp8 activations is not modelled: fp8 runs keep
// bf16 weights and activations in Megatron).
#pragma once

#include <cstdint>
#include <optional>

#include "core/dtype.h"

namespace orrery {

enum class RecomputeMode {
  None,       // every activation kept for the backward pass
  Selective,  // the attention core (scores, softmax, dropout) recomputed (Korthikanti et al.)
  Full,       // only each layer's input kept; the layer's forward runs again before its backward
};

// How the pipeline schedule waits for stage-to-stage transfers.
enum class P2pMode {
  Auto,        // as Megatron-LM today: overlapped under the interleaved schedule, else blocking
  Blocking,    // every send and receive completes before the next compute (Megatron until 2023)
  Overlapped,  // transfers run beside compute (--overlap-p2p-communication)
};

// The modelled costs beyond the GEMMs, each of which can be left out to measure what it adds
// (docs/validation.md, "What each term adds"; orrery simulate --without).
struct ModelTerms {
  bool attention = true;    // core attention (scores, softmax, context)
  bool elementwise = true;  // norms, activations, residuals, dropout, casts, cross entropy
  bool end_stages = true;   // the embedding on the first stage, LM head and loss on the last
  bool optimizer = true;    // the Adam step and zeroing of gradients
  bool fp8_casts = true;    // Transformer Engine's FP8 casts and transposes
  // The all-reduces between the gradient reduction and the Adam step: the replicated parameters'
  // gradients over the tensor group (sequence parallelism), the tied embedding's gradient between
  // the first and last stage, the gradient norm (and fp16's found-inf flag); and after the step,
  // the loss over the data-parallel group
  bool tail_collectives = true;
  // GEMMs at the clock of a GPU held at its power limit (the device's efficiency.sustained_matrix)
  bool sustained_clock = true;
  // GEMM output traffic beyond a 16-bit write run after the main loop, in part (the device's
  // efficiency.exposed_epilogue: FP8 weight gradients accumulating into fp32)
  bool exposed_epilogue = true;
  // Every GPU computes at the pace of the job's slowest (the device's efficiency.rate_spread,
  // hardware/slowest_gpu.h)
  bool slowest_gpu = true;
};

struct ParallelPlan {
  int64_t tp = 1, pp = 1, vpp = 1, cp = 1, ep = 1, dp = 1;
  int64_t micro_batch = 1;    // sequences per micro-batch (mbs)
  int64_t micro_batches = 1;  // per iteration per data-parallel replica: gbs / (mbs x dp)
  int64_t seq = 0;            // tokens per sequence
  RecomputeMode recompute = RecomputeMode::None;
  bool sequence_parallel = false;
  bool distributed_optimizer = false;  // ZeRO-1: optimizer state sharded over dp
  int zero = 0;                        // 2: gradients sharded too; 3: parameters too
  // Transformer Engine keeps the compute copy of the weights in fp8 and the distributed optimizer
  // all-gathers them in fp8 (Megatron's fp8_param_gather; NeMo's FP8 recipes set it): 1 byte a
  // weight instead of 2, in memory and in the parameter all-gathers.
  bool fp8_param_gather = false;
  // The sharded optimizer's parameter all-gathers run bucket by bucket during the next
  // iteration's first forward instead of after the optimizer (Megatron's overlap_param_gather,
  // off by default; NeMo's recipes set it).
  bool overlap_param_gather = false;
  // With overlap_param_gather under the interleaved schedule: each model chunk's gather launched
  // whole from the schedule (Megatron-LM's align_param_gather, on by default); false: the lazy
  // chain of buckets (--no-align-param-gather).
  bool align_param_gather = true;
  // With sequence parallelism and tp > 1: Transformer Engine runs the layers' tensor-parallel
  // all-gathers and reduce-scatters beside their GEMMs (userbuffers, Megatron's tp_comm_overlap;
  // NeMo's recipes set it for their TP >= 4 plans).
  bool tp_comm_overlap = false;
  bool flash_attention = true;  // false: scores stored (unfused, as Megatron in 2021-22)
  int64_t value_bytes = 2;
  DType dtype = DType::BF16;
  P2pMode p2p = P2pMode::Auto;
  ModelTerms terms;  // of the linear layers' GEMMs (fp8: Transformer Engine's)
  // Layers of the first and last model chunk when not spread evenly (stage_layout.h).
  std::optional<int64_t> first_stage_layers, last_stage_layers;

  int64_t world_size() const { return tp * pp * cp * dp; }
};

}  // namespace orrery
