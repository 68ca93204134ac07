// The training iteration Megatron-LM runs for a model and a parallel plan, generated as Orrery's
// workload IR (workload/program.h): per GPU, FLOPs and bytes of every kernel and the collectives
// of every parallel group, with no time (hardware/ prices the kernels, network/ the collectives).
//
// One pass lists the records of one model chunk, each marked with the virtual stages that run it
// (stage_layout.h), so stages differ where Megatron's do: the embedding on the first, the final
// norm, LM head and loss on the last, and uneven layer counts. Per transformer layer and
// micro-batch (N = mbs x seq tokens, t = tp; docs/models.md lists every kernel):
// - attention block: norm; QKV GEMM (N x h -> (a + 2g) d / t); core attention, fused (flash:
//   causal half of 4 N s d a / t FLOPs forward, 2.5x that backward) or unfused (QK^T and PV as
//   batched GEMMs, scaled-masked softmax and dropout over the a/t x s x s scores); output
//   projection (a d / t -> h); bias-dropout-residual;
// - MLP block: norm; FC1 (h -> f / t, 2f / t with SwiGLU), activation, FC2 (f / t -> h),
//   bias-dropout-residual. MoE layers: router GEMM and top-k, token permutation, all-to-all
//   dispatch over the expert group, (t > 1) all-gather of the routed tokens over tp, the local
//   experts as one grouped GEMM each way (balanced routing: N k ep / E rows per local expert),
//   reduce-scatter, all-to-all combine, unpermute and the shared experts;
// - backward: each GEMM's input-gradient and weight-gradient GEMMs (fp32 gradient accumulation),
//   element-wise kernels moving what their gradient reads and writes (norms and residuals 1.5x
//   their forward bytes: input, output gradient in, input gradient out);
// - tensor parallelism: an all-reduce of N h values after the output projection and FC2 (forward)
//   and of the QKV and FC1 input gradients (backward, overlapping their weight gradients); with
//   sequence parallelism each becomes an all-gather before / reduce-scatter after, and the
//   backward adds the all-gather of the output gradient and the re-gather of the saved input;
//   with --tp-comm-overlap each of these runs beside the GEMM that needs or makes it, as
//   Transformer Engine's userbuffers do (Phase::overlapped; the methods and SMs of NeMo's GPT-3
//   175B H100 configuration);
// - recompute: full re-runs each layer's forward (its collectives too) before its backward;
//   selective re-runs the core attention;
// - data parallelism, per stage after the last backward: fp32 gradient reduce-scatter (distributed
//   optimizer, ZeRO >= 1) or all-reduce in Megatron's buckets of max(40M, 1M x dp x cp) parameters,
//   issued as the last micro-batch's backward completes them; expert parameters over the
//   expert-data-parallel group; the optimizer step as a memory-bound pass (38 bytes per local
//   parameter in bf16, 46 in fp16 with its loss scaler's unscale pass, 37 with the weights kept
//   in fp8; plus zeroing the gradient buffer); the distributed optimizer's parameter all-gather,
//   with --overlap-param-gather in the same buckets during the next iteration's first forward
//   (Workload::param_gather_bucket_bytes);
// - between the gradient reduction and Adam (Megatron's finalize_model_grads and optimizer
//   step): with sequence parallelism and t > 1 each stage all-reduces over the tensor group the
//   fp32 gradients of the parameters every tensor rank holds whole (norms, MoE routers, the
//   row-parallel layers' biases); with tied embeddings and pp > 1 the first and last stage
//   all-reduce the word embedding's fp32 gradient (vocab / t x hidden values) between them;
//   every stage all-reduces the gradient norm (one fp32 value; fp16 first the loss scaler's
//   found-inf flag) over the model-parallel group, over every rank with a sharded optimizer;
//   after Adam the last stage averages the loss over DP x CP (two fp32 values);
// - pipeline: the activation (N h / t with sequence parallelism) between stages.
// - context parallelism: each rank holds 1/cp of every sequence (balanced causal chunks), does
//   1/cp of the attention, and exchanges keys and values around the context group (an all-gather
//   forward, a reduce-scatter of their gradients backward); gradients reduce over DP x CP.
// Not generated (docs/models.md, Scope and limitations): ZeRO-3's prefetch of the next layer's
// parameters.
#pragma once

#include <string>

#include "models/model_spec.h"
#include "models/parallel_plan.h"
#include "workload/workload.h"

namespace orrery {

struct TrainingWorkload {
  Workload workload;
  double model_flop = 0;             // per iteration, whole job (Megatron's count, model_counts.h)
  double hardware_flop_per_gpu = 0;  // what the kernels execute per iteration, stage average
  int64_t global_batch = 0;          // sequences per iteration
  int64_t tokens = 0;                // per iteration
};

// The most micro-batches per iteration a plan may run: the workload lists each (and the event
// mode simulates each), and real plans run thousands at most.
constexpr int64_t kMaxMicroBatches = 1'000'000;

// Throws std::invalid_argument naming the flag when the plan cannot run the model.
TrainingWorkload generate_training_workload(const ModelSpec& spec, const ParallelPlan& plan);

}  // namespace orrery
