// Shapes and data types of every tensor of a torchviz autograd graph, inferred in forward order
// with one rule per operator from the parameter shapes, the output shape and the graph config.
//
// The graph keeps no operator attributes (view targets, permutations, slice bounds, index
// lengths), so every dimension carries a role, and an operator whose attribute is lost acts on
// the dimension whose role its idiom names: a view before a permute splits the features into
// attention heads, a slice of concatenated tokens takes back one part, an unsqueeze before an
// expand adds a replica axis next to the batch, and so on. In a beam-search mixture of experts
// the batch axis also records which rows it holds (Rows), which decides how many rows an index
// selects. docs/formats.md lists every rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics.h"
#include "core/dtype.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"

namespace orrery {

enum class Axis : uint8_t {
  Batch,    // sequences (samples, or sample x beam rows)
  Token,    // positions in a sequence
  Feature,  // hidden features: the last axis of a linear layer's input and output
  Head,     // attention heads
  HeadDim,  // features of one head
  Stack,    // tensors stacked by unsqueeze + cat (e.g. the outputs of several experts)
  Replica,  // copies made by unsqueeze + expand (beams)
  Unit,     // a size-1 axis added for broadcasting
  Other,
};

// What the batch axis holds in a beam-search mixture of experts with B samples and b beams:
// one row per sample (B), the routed beams (B (b - 1)), every beam (B b), or part of the rows
// of one sample.
enum class Rows : uint8_t { Samples, Routed, Beams, Part };

struct Dim {
  Axis axis = Axis::Other;
  int64_t size = 1;
  // The size is an upper bound: the dimension comes from a Slice whose bounds the graph does not
  // keep. An operator that needs a smaller size of it (a broadcast against a smaller operand, a
  // linear layer's K) fixes it, as PyTorch's own shape checks would require.
  bool bound = false;
};

struct TensorShape {
  std::vector<Dim> dims;
  Rows rows = Rows::Samples;
  std::vector<int64_t> segments;  // sizes of the token parts a concatenation joined
  DType dtype = DType::FP32;
  // The linear layer that read its input as rows of its weight's K features through a view the
  // graph does not size (named in later errors and warnings about this tensor).
  std::optional<NodeId> rerowed_by;

  int64_t numel() const;
  int find(Axis axis) const;      // index of the first dim with that role, or -1
  std::string to_string() const;  // "(4, 45, 768)"
};

// The values the graph does not give, after the config and the defaults.
struct GraphSettings {
  int64_t batch = 1;
  int64_t text_tokens = 1;
  int64_t beams = 2;
  DType autocast = DType::FP16;  // what the graph's casts convert fp32 tensors to (torch.autocast's
                                 // default on CUDA)
};

struct InferredShapes {
  std::vector<TensorShape> tensors;  // by node id; parameters and AccumulateGrad: the parameter's
  GraphSettings settings;
  // Nodes whose data input needs no gradient (it comes from outside the graph) and has no
  // input-gradient kernel. Its shape: what the graph states (rows carried through to an output),
  // else [batch, external_tokens, features] (graph config), else [batch, the output's tokens,
  // features] with a warning.
  std::vector<bool> external_input;  // by node id
  std::vector<bool> from_parameter;  // by node id: the tensor is a parameter, cast or viewed
};

// The operands of a linear layer (Addmm, Mm): the weight [K, N] (a 2-D parameter seen through its
// cast and transpose, or the second activation of a product of two), the data input (absent when
// it needs no gradient) and the bias. nn.Linear's weight is [N, K] and reaches the product through
// a T; HF transformers' Conv1D weight is [K, N] and reaches it directly.
struct LinearOperands {
  std::optional<NodeId> weight;
  std::optional<NodeId> data;
  std::optional<NodeId> bias;
  bool weight_is_parameter = false;
};
// Structural: only `shapes.from_parameter` is read, so it holds before the shapes are inferred.
LinearOperands linear_operands(const AutogradGraph& graph, const InferredShapes& shapes, NodeId op);

// [K, N] of a linear layer's weight operand, from the graph's structure alone: the 2-D parameter
// behind it, swapped once for each T, Transpose or Permute on the way. nullopt when a reshape of
// the parameter lies on the way or the operand is not a 2-D parameter.
std::optional<std::pair<int64_t, int64_t>> weight_k_n(const AutogradGraph& graph,
                                                      const InferredShapes& shapes,
                                                      NodeId weight_operand);

// Fused attention (torch.nn.functional.scaled_dot_product_attention on its flash, memory-efficient
// or cuDNN kernels): "ScaledDotProductFlashAttention", "ScaledDotProductEfficientAttention",
// "ScaledDotProductCudnnAttention", "ScaledDotProductFlashAttentionForCpu".
bool is_fused_attention(const std::string& op);

// The parameter node behind a parameter-derived tensor (the parameter, its AccumulateGrad, casts
// and views of it), or nullopt.
std::optional<NodeId> parameter_of(const AutogradGraph& graph, const InferredShapes& shapes,
                                   NodeId tensor);

// Warnings (each default the graph needed, each operator without a rule, a linear layer that reads
// its input through a view as rows of another width, an output shape that differs from the
// graph's) go to `diagnostics`, located at the node in `graph.path`. Throws InputError naming the
// node's line when the graph contradicts itself as PyTorch would refuse it (an operator without
// the operands its function has; operands that do not broadcast, chain or fit the weight; an
// embedding table that is not 2-D) or a tensor would exceed kMaxTensorElements (e.g. from
// graph-config sizes).
InferredShapes infer_shapes(const AutogradGraph& graph, const GraphConfig& config,
                            Diagnostics& diagnostics);

}  // namespace orrery
