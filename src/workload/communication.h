// Communication in the IR: which collective, among which group of ranks, and how many bytes.
//
// Sizes follow the NCCL / nccl-tests convention: all-reduce and reduce-scatter count the input
// buffer, all-gather the gathered output buffer, all-to-all the per-rank send buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/bandwidth.h"
#include "core/collective_kind.h"

namespace orrery {

// The communicator a collective runs in. Data = all data-parallel replicas of a stage (expert
// parallelism is carved out of it, and with context parallelism it spans DP x CP); ExpertData =
// replicas of one expert shard (DP / EP ranks); Context = the ranks sharing one sequence (CP).
// The iteration tail's groups: Embedding = the first and last pipeline stage of one tensor rank
// and replica (Megatron's embedding group, which all-reduces the gradient of tied embeddings);
// ModelParallel = the ranks holding one model replica (TP x PP, Megatron's model-parallel group);
// World = every rank of the job.
enum class CommGroup : uint8_t {
  Tensor,
  Expert,
  Data,
  ExpertData,
  Pipeline,
  Context,
  Embedding,
  ModelParallel,
  World,
};
inline constexpr size_t kCommGroups = 9;

struct Communication {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CommGroup group = CommGroup::Tensor;
  Bytes bytes = 0;
};

// "tp", "ep", "dp", "dp_ep", "pp", "cp", "emb", "mp", "world": the keys used in reports.
std::string_view to_string(CommGroup group);

// True for the groups whose collectives reduce gradients across data-parallel replicas.
constexpr bool is_data_parallel(CommGroup group) {
  return group == CommGroup::Data || group == CommGroup::ExpertData;
}

}  // namespace orrery
