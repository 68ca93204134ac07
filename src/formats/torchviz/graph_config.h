// The side-car YAML of a torchviz graph (--graph-config): what the autograd graph cannot say.
// Every key is optional; the reader applies a documented default, with a warning, only when the
// graph needs the value (docs/formats.md):
//   batch: 4              sequences in the batch        default: the output tensor's first size
//   text_tokens: 13       tokens from embeddings        default: output tokens - learned tokens
//   external_tokens: 257  tokens of inputs needing no gradient (frozen encoder features) whose
//                         size the graph does not state  default: the output's tokens
//   heads: 12             attention heads               default: hidden size / 64
//   beams: 2              routing beams of a beam-search mixture of experts             2
//   shared_expert: last   the expert of each numbered expert list that takes the universal beam:
//                         last, first, its number, or none (no universal beam)          last
//   dtype: bf16           autocast type of the casts the graph shows  fp16 (torch.autocast, CUDA)
//   bucket_size: 25 MiB   data-parallel gradient bucket (PyTorch DDP's bucket_cap_mb)  25 MiB
//   first_bucket_size: 1 MiB  the first bucket's cap (DDP's _DEFAULT_FIRST_BUCKET_BYTES) 1 MiB
//   bucket_order: registration  registration (reverse registration order, DDP at construction)
//                         or ready (gradient-ready order, DDP after its first iteration)
//   optimizer: adam       step after the backward: adam, sgd or none                   adam
// Counts are at most kMaxGraphCount; sizes at most 1 TiB.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/bandwidth.h"
#include "core/dtype.h"

namespace orrery {

enum class OptimizerKind : uint8_t { Adam, Sgd, None };
enum class BucketOrder : uint8_t { Registration, Ready };

// The expert of each numbered expert list (`...experts.<k>...`) that a beam-search mixture of
// experts gives the universal beam (one row per sample; the routed beams go to the others), or
// none: every beam is routed.
struct SharedExpert {
  enum class Kind : uint8_t { Last, First, Number, None };
  Kind kind = Kind::Last;
  int64_t number = 0;  // Kind::Number

  std::string to_string() const;  // "last", "first", "3", "none"
};

constexpr int64_t kMaxGraphCount = 1'000'000'000;

struct GraphConfig {
  std::string source;  // the file, for warnings
  std::optional<int64_t> batch;
  std::optional<int64_t> text_tokens;
  std::optional<int64_t> external_tokens;
  std::optional<int64_t> heads;
  std::optional<int64_t> beams;
  std::optional<SharedExpert> shared_expert;
  int64_t shared_expert_line = 0;  // where it was given
  std::optional<DType> dtype;
  std::optional<Bytes> bucket_size;
  std::optional<Bytes> first_bucket_size;
  std::optional<BucketOrder> bucket_order;
  std::optional<OptimizerKind> optimizer;
};

// Throws InputError naming `source` and the line.
GraphConfig parse_graph_config(std::string_view text, const std::string& source);

// Reads a file; throws InputError when it cannot be read or parsed.
GraphConfig load_graph_config(const std::string& path);

}  // namespace orrery
