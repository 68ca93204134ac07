#include "training/group_pricing.h"

#include <algorithm>
#include <stdexcept>

#include "network/group_kind.h"

namespace orrery {
namespace {

// The axes of `varied` that have more than one coordinate, ascending: the groups depend on these
// alone (an axis of size 1 adds no member and no group).
std::vector<size_t> spread_axes(const RankPlacement& placement, std::vector<size_t> varied) {
  std::erase_if(varied, [&](size_t a) { return placement.axes()[a].size == 1; });
  std::sort(varied.begin(), varied.end());
  return varied;
}

}  // namespace

GroupPricing::GroupPricing(const Topology& topology, std::vector<ParallelAxis> axes,
                           const std::vector<TrainingAxis>& order,
                           std::shared_ptr<CollectiveCosts> world_costs)
    : topology_(topology),
      placement_(std::move(axes), topology_),
      links_(topology_, placement_.world_size()),
      world_costs_(std::move(world_costs)) {
  std::array<std::vector<size_t>, kTrainingGroups.size()> spread;
  for (const CommGroup group : kTrainingGroups) {
    const size_t i = index(group);
    const std::vector<size_t> varied = group_axes(group, order);
    spread[i] = spread_axes(placement_, varied);
    same_as_[i] = i;
    for (size_t j = 0; j < i && group != CommGroup::World; ++j)
      if (spread[j] == spread[i] && at_axis_ends(kTrainingGroups[j]) == at_axis_ends(group)) {
        same_as_[i] = j;
        break;
      }
    if (same_as_[i] != i) {
      shapes_[i] = shapes_[same_as_[i]];
      uniform_[i] = uniform_[same_as_[i]];
    } else if (spread[i].empty()) {
      // Every group is one GPU, alike wherever it lies, and its collectives are free: no kind.
      const int64_t rank = 0;
      shapes_[i] = placement_.shape_of({&rank, 1});
      uniform_[i] = true;
    } else {
      kinds_[i] = at_axis_ends(group) ? group_kind(placement_.ends_of(varied.front()), varied)
                                      : group_kind(placement_, varied);
      shapes_[i] = kinds_[i]->shape;
      uniform_[i] = kinds_[i]->uniform;
    }
  }
  pp_axis_ = group_axes(CommGroup::Pipeline, order).front();
  boundary_models_.resize(static_cast<size_t>(placement_.axes()[pp_axis_].size));
}

size_t GroupPricing::index(CommGroup group) {
  return static_cast<size_t>(std::find(kTrainingGroups.begin(), kTrainingGroups.end(), group) -
                             kTrainingGroups.begin());
}

const CollectiveModel& GroupPricing::model(CommGroup group) {
  const size_t i = same_as_[index(group)];
  if (!models_[i]) {
    if (!kinds_[i])  // one-rank groups have no kind: their collectives are free (price)
      throw std::logic_error("GroupPricing::model: no collective model for a one-rank group");
    models_[i] = std::make_unique<CollectiveModel>(links_, std::move(*kinds_[i]));
    kinds_[i].reset();
  }
  return *models_[i];
}

CollectiveCost GroupPricing::price(CollectiveKind kind, CommGroup group, Bytes bytes,
                                   Algorithm algorithm) {
  CollectiveCosts& costs = group == CommGroup::World && world_costs_ ? *world_costs_ : costs_;
  const CostKey key{kind, kTrainingGroups[same_as_[index(group)]], bytes, algorithm};
  if (const auto it = costs.find(key); it != costs.end()) return it->second;
  const CollectiveCost cost =
      shape(group).ranks <= 1
          ? CollectiveCost{Time::zero(), algorithm == Algorithm::Auto ? Algorithm::Ring : algorithm}
          : model(group).cost(kind, bytes, algorithm);
  costs.emplace(key, cost);
  return cost;
}

TransferCost GroupPricing::transfer(int64_t k, Bytes bytes) {
  PairModel*& boundary = boundary_models_.at(static_cast<size_t>(k));
  if (!boundary) {
    std::vector<int64_t> pair = placement_.boundary_pair(pp_axis_, k);
    // The key: the pair's shape (which the model's protocol limits read) and its route class.
    const GroupShape shape = placement_.shape_of(pair);
    std::vector<int64_t> key = shape.span;
    key.insert(key.end(), shape.blocks.begin(), shape.blocks.end());
    key.insert(key.end(), shape.fewest.begin(), shape.fewest.end());
    key.push_back(shape.ranks);
    key.push_back(shape.crosses_leaves ? 1 : 0);
    if (pair.size() == 2) {
      const std::vector<int64_t> crossed = links_.route_class(pair[0], pair[1]);
      key.insert(key.end(), crossed.begin(), crossed.end());
    }
    boundary = &pair_models_[key];
    if (!boundary->model)
      boundary->model = std::make_unique<CollectiveModel>(
          links_, std::vector<std::vector<int64_t>>{std::move(pair)});
  }
  const auto [it, priced] = boundary->transfers.try_emplace(bytes);
  if (priced) it->second = point_to_point_cost(*boundary->model, bytes);
  return it->second;
}

std::shared_ptr<GroupPricing> GroupPricingCache::get(const Topology& topology,
                                                     const std::vector<ParallelAxis>& axes,
                                                     const std::vector<TrainingAxis>& order) {
  if (!topology_ || !(*topology_ == topology) || entries_.size() >= kMaxEntries) {
    entries_.clear();
    world_costs_.clear();
    topology_ = topology;
  }
  std::vector<std::pair<std::string, int64_t>> key;
  key.reserve(axes.size());
  int64_t world = 1;
  for (const ParallelAxis& a : axes) {
    key.emplace_back(a.name, a.size);
    world *= a.size;
  }
  auto& slot = entries_[key];
  if (!slot) {
    std::shared_ptr<CollectiveCosts>& shared = world_costs_[world];
    if (!shared) shared = std::make_shared<CollectiveCosts>();
    try {
      slot = std::make_shared<GroupPricing>(topology, axes, order, shared);
    } catch (...) {
      entries_.erase(key);
      throw;
    }
  }
  return slot;
}

}  // namespace orrery
