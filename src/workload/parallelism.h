// How a training job is split over GPUs: tensor (tp), context (cp), pipeline (pp), data (dp) and
// expert (ep) parallelism, virtual pipeline chunks per stage (vpp) and micro-batches per iteration.
#pragma once

#include <cstdint>
#include <string>

namespace orrery {

// The largest job Orrery takes: 2^20 GPUs, well past today's clusters; bounds the memory of rank
// layouts and flow networks.
constexpr int64_t kMaxWorldSize = int64_t{1} << 20;

struct Parallelism {
  int64_t tp = 1;             // ranks sharing each layer's tensors
  int64_t pp = 1;             // pipeline stages
  int64_t ep = 1;             // expert-parallel ranks, carved out of the data-parallel ranks
  int64_t vpp = 1;            // model chunks per stage (interleaved pipeline when > 1)
  int64_t micro_batches = 1;  // gradient-accumulation steps per iteration (AICB "ga")
  int64_t world_size = 1;     // GPUs in the job
  int64_t cp = 1;             // ranks sharing each sequence (context parallelism)

  // Data-parallel degree: world / (tp * cp * pp), rounded down (see validation_error()).
  int64_t dp() const { return world_size / (tp * cp * pp); }
  // Expert-data-parallel degree: replicas of one expert shard, dp / ep.
  int64_t expert_dp() const { return dp() / ep; }

  // Empty when the degrees fit together (world = tp * pp * dp with ep dividing dp), otherwise a
  // sentence saying what does not fit.
  std::string validation_error() const;
};

}  // namespace orrery
