// The network side of one parallel layout on one cluster: where each communication group's GPUs
// lie, the link graph the groups share, each kind of group's collective model (network/
// collective_model.h) and the costs priced so far. Building it routes every kind of group once
// (network/group_kind.h); after that a collective's cost is a lookup or one closed-form
// evaluation. Kinds that vary the same axes of size > 1 (the expert-data groups when EP is 1, the
// model-parallel groups when PP or TP is 1) are the same groups, built and priced once; kinds of
// one-rank groups are never built. It keeps its own copy of the topology, so it outlives the
// cluster it was built from.
//
// GroupPricingCache shares one GroupPricing between plans whose groups are the same (a search
// varies micro-batch size, recompute, ZeRO stage and schedule over one layout many times): the
// costs depend only on the topology and the ranks' axes (their names, sizes and order), which is
// the cache's key. The group of every rank is the same whatever the axes (ranks 0 to N - 1 in
// order), so its costs are shared further: between every layout of one world size. Neither is
// safe to share between threads; a search keeps one cache per thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "network/collective_algorithms.h"
#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "network/topology.h"
#include "training/parallel_axes.h"

namespace orrery {

// The communication groups of a training job, in the order GroupPricing indexes them.
inline constexpr std::array kTrainingGroups = {
    CommGroup::Tensor,     CommGroup::Expert,        CommGroup::Data,
    CommGroup::ExpertData, CommGroup::Pipeline,      CommGroup::Context,
    CommGroup::Embedding,  CommGroup::ModelParallel, CommGroup::World};
static_assert(kTrainingGroups.size() == kCommGroups);

// Collective costs priced so far, by (kind, group, bytes, algorithm).
struct CostKey {
  CollectiveKind kind;
  CommGroup group;
  Bytes bytes;
  Algorithm algorithm;
  bool operator==(const CostKey&) const = default;
};
struct CostKeyHash {
  size_t operator()(const CostKey& k) const {
    return std::hash<Bytes>{}(k.bytes) ^ (static_cast<size_t>(k.kind) << 48) ^
           (static_cast<size_t>(k.group) << 52) ^ (static_cast<size_t>(k.algorithm) << 58);
  }
};
using CollectiveCosts = std::unordered_map<CostKey, CollectiveCost, CostKeyHash>;

class GroupPricing {
 public:
  // `axes`: the job's parallel axes in rank order (parallel_axes()), `order` the same as
  // TrainingAxis values. Throws std::invalid_argument when the axes do not fit the topology.
  // `world_costs`: where the costs of CommGroup::World are kept, shared with other layouts of
  // the same world size on the same topology (none: kept with the others).
  GroupPricing(const Topology& topology, std::vector<ParallelAxis> axes,
               const std::vector<TrainingAxis>& order,
               std::shared_ptr<CollectiveCosts> world_costs = nullptr);
  GroupPricing(const GroupPricing&) = delete;
  GroupPricing& operator=(const GroupPricing&) = delete;

  const Topology& topology() const { return topology_; }
  // The most spread group of a kind, and whether every group of the kind has its shape.
  const GroupShape& shape(CommGroup group) const { return shapes_[index(group)]; }
  bool uniform(CommGroup group) const { return uniform_[index(group)]; }

  // A collective of `bytes` in every group of a kind at once, with `algorithm` (Auto: the
  // fastest the model offers); memoised.
  CollectiveCost price(CollectiveKind kind, CommGroup group, Bytes bytes, Algorithm algorithm);
  // A transfer of `bytes` across pipeline boundary `k`, between stages k and (k + 1) mod pp
  // (the last boundary is the interleaved schedule's wrap-around), either way:
  // point_to_point_cost() of the boundary's pair (RankPlacement::boundary_pair), on NCCL's
  // point-to-point path; on ideal links, their link at its effective rate plus one step's latency.
  TransferCost transfer(int64_t k, Bytes bytes);

 private:
  static size_t index(CommGroup group);
  const CollectiveModel& model(CommGroup group);

  Topology topology_;  // first: the placement and the link graph refer to it
  RankPlacement placement_;
  LinkGraph links_;
  // Per group, the index of the first group that forms the same groups (varies the same axes
  // of size > 1, at the axis ends or not; never the world group): its kind, model and costs
  // serve both.
  std::array<size_t, kTrainingGroups.size()> same_as_{};
  std::array<std::optional<GroupKind>, kTrainingGroups.size()> kinds_;  // moved into models_
  std::array<std::unique_ptr<CollectiveModel>, kTrainingGroups.size()> models_;
  std::array<GroupShape, kTrainingGroups.size()> shapes_;
  std::array<bool, kTrainingGroups.size()> uniform_{};
  size_t pp_axis_ = 0;
  // Per pipeline boundary, the model of its pair, found on first use. Boundaries whose pairs
  // have one shape and one route class (LinkGraph::route_class) share a model and its prices:
  // a pair's model routes it on the whole job's link graph, so building one per boundary would
  // cost the pipeline depth times that on a large cluster.
  struct PairModel {
    std::unique_ptr<CollectiveModel> model;
    std::map<Bytes, TransferCost> transfers;
  };
  std::vector<PairModel*> boundary_models_;
  std::map<std::vector<int64_t>, PairModel> pair_models_;
  CollectiveCosts costs_;
  std::shared_ptr<CollectiveCosts> world_costs_;
};

class GroupPricingCache {
 public:
  // The pricing of `axes` on `topology`: shared with earlier calls of the same axes on an equal
  // topology, else built (a topology other than the last one's empties the cache first). Throws
  // as GroupPricing's constructor does.
  std::shared_ptr<GroupPricing> get(const Topology& topology, const std::vector<ParallelAxis>& axes,
                                    const std::vector<TrainingAxis>& order);

  size_t size() const { return entries_.size(); }

  // Layouts kept at most; past it the cache starts again (memory stays flat in long searches).
  static constexpr size_t kMaxEntries = 512;

 private:
  std::optional<Topology> topology_;
  std::map<std::vector<std::pair<std::string, int64_t>>, std::shared_ptr<GroupPricing>> entries_;
  std::map<int64_t, std::shared_ptr<CollectiveCosts>> world_costs_;  // by world size
};

}  // namespace orrery
