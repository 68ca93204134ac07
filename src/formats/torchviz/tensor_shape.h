// The shape of one tensor of an autograd graph as shape inference sees it: sizes with roles.
//
// The graph keeps no operator attributes (view targets, permutations, slice bounds, index
// lengths), so every dimension carries a role, and an operator whose attribute is lost acts on the
// dimension whose role its idiom names. In a beam-search mixture of experts the batch axis also
// records which rows it holds (Rows). docs/formats.md lists every rule.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "formats/torchviz/autograd_graph.h"

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

// What the batch axis holds in a beam-search mixture of experts with B samples, b beams and r
// routed beams (graph config 'beams' and 'shared_expert'): one row per sample (B), the routed
// beams (B r), every beam (B b), or part of the rows of one sample.
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

// A shape of `sizes` with no roles, for messages ("(4, 45, 768)").
TensorShape plain_shape(const std::vector<int64_t>& sizes);

// Products and sums of sizes saturate at kSaturatedSize instead of wrapping; a saturated size
// fails the tensor bound (kMaxTensorElements).
constexpr int64_t kSaturatedSize = std::numeric_limits<int64_t>::max();
inline int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturatedSize : r;
}
inline int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturatedSize : r;
}

}  // namespace orrery
