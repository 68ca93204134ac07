// How a model is trained: the parallel degrees, batch, and the memory-saving choices Megatron-LM
// offers. Counts are plain integers; `value_bytes` is the size of one weight or activation value
// in the training dtype (2 for fp16/bf16, 1 for fp8 activations is not modelled: fp8 runs keep
// bf16 weights and activations in Megatron).
#pragma once

#include <cstdint>

namespace orrery {

enum class RecomputeMode {
  None,       // every activation kept for the backward pass
  Selective,  // the attention core (scores, softmax, dropout) recomputed (Korthikanti et al.)
  Full,       // only each layer's input kept; the layer's forward runs again before its backward
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
  bool flash_attention = true;         // false: scores stored (unfused, as Megatron in 2021-22)
  int64_t value_bytes = 2;
};

}  // namespace orrery
