// The memory one GPU of each pipeline stage needs to train a model with a parallel plan, in bytes:
// the model state (weights, gradients, optimizer state) of the stage's shard and the activations
// its micro-batches in flight keep for their backward passes, plus the logits on the last stage.
//
// Model state, mixed-precision Adam (Megatron): 2 bytes of weights, 4 of fp32 gradients and 12 of
// optimizer state (fp32 master weights, momentum, variance) per parameter, 18 in all; the
// distributed optimizer (ZeRO-1) divides the 12 by dp, ZeRO-2 the gradients too, ZeRO-3 the
// weights too; --fp8-param-gather keeps the weights in 1 byte. A stage's parameters are its layers'
// (tensor-parallel layers divided by tp but what every tensor rank holds whole: norms, router,
// MLA's down-projections; routed experts by ep x tp), plus the embedding on the
// first stage and the LM head on the last (a copy of the embedding when they are tied and pp > 1),
// divided by tp (vocab-parallel).
//
// Activations per layer and micro-batch (Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models", for 2-byte values; s tokens per GPU = seq x mbs / cp, h hidden,
// a heads, t = tp):
//   kept whole on every tensor-parallel rank (divided by t only with sequence parallelism):
//     two norm inputs 4sh, the attention and MLP inputs 4sh, two dropout masks 2sh   = 10sh
//   divided by t: queries and keys 2sh(1 + g/a), values 2sh g/a, the output projection's input
//     2sh, the MLP's inner activations (2 matrices: 4sf; SwiGLU: 6sf), and for unfused
//     attention the scores: softmax output 2as^2, its dropout mask as^2 and output 2as^2 = 5as^2
//     (flash attention keeps only its fp32 row statistics, 4as)
// GPT-3 (g = a, f = 4h, unfused): sh(10 + 24/t + 5as/(ht)) as the paper; with sequence
// parallelism sh/t (34 + 5as/h). Selective recompute drops the attention-core terms; full
// recompute keeps each layer's input (2sh, /t with sequence parallelism) and, during the backward
// pass, one layer's full set. MoE layers keep their routed experts' inner activations for the
// tokens they receive (s k / e per expert, balanced). Micro-batches in flight: under 1F1B stage i
// (from 0) holds pp - i of them; interleaved (vpp > 1) the first stage pp (1 + (pp - 1)/(pp vpp)).
// The last stage adds the fp32 logits of one micro-batch, 4 s V / t.
#pragma once

#include <cstdint>
#include <vector>

#include "models/model_spec.h"
#include "models/parallel_plan.h"
#include "workload/training_figures.h"

namespace orrery {

// Layers of each pipeline stage: as even as possible, the remainder on the middle stages (the
// first and last carry the embedding and the LM head).
std::vector<int64_t> stage_layers(int64_t layers, int64_t stages);

// Activation bytes one transformer layer keeps for one micro-batch (0-based `layer`).
double layer_activation_bytes(const ModelSpec& spec, const ParallelPlan& plan, int64_t layer);

MemoryEstimate estimate_memory(const ModelSpec& spec, const ParallelPlan& plan,
                               double capacity_bytes);

}  // namespace orrery
