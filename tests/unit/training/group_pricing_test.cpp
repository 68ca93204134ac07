// The network pricing of one parallel layout, built afresh or shared through GroupPricingCache.
#include "training/group_pricing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "cluster/cluster.h"
#include "network/group_kind.h"
#include "network/test_topologies.h"

namespace orrery {
namespace {

// tp 8, dp 4, pp 4 on 128 GPUs of DGX A100 servers (the cluster's placement order).
struct Layout {
  std::vector<TrainingAxis> order = rank_order({"tp", "ep", "dp", "pp"});
  std::vector<ParallelAxis> axes;
  explicit Layout(int64_t tp = 8) {
    Parallelism par;
    par.tp = tp;
    par.pp = 4;
    par.world_size = tp * 4 * 4;
    axes = parallel_axes(par, order);
  }
};

// One layout / the cached pricing gives every cost a fresh one gives, because the costs depend
// only on the topology and the axes.
TEST(GroupPricing, CachedEqualsFresh) {
  const Cluster cluster = load_cluster("dgx-a100");
  const Layout layout;
  GroupPricingCache cache;
  const auto cached = cache.get(cluster.network, layout.axes, layout.order);
  GroupPricing fresh(cluster.network, layout.axes, layout.order);
  for (const CommGroup group : {CommGroup::Tensor, CommGroup::Data, CommGroup::Pipeline})
    for (const CollectiveKind kind : {CollectiveKind::AllReduce, CollectiveKind::AllGather})
      for (const Bytes bytes : {Bytes{4096}, Bytes{50'000'000}}) {
        const CollectiveCost a = cached->price(kind, group, bytes, Algorithm::Auto);
        const CollectiveCost b = fresh.price(kind, group, bytes, Algorithm::Auto);
        EXPECT_EQ(a.time, b.time);
        EXPECT_EQ(a.algorithm, b.algorithm);
        EXPECT_EQ(a.channels, b.channels);
      }
  EXPECT_EQ(cached->transfer(0, 1 << 20).time, fresh.transfer(0, 1 << 20).time);
  EXPECT_EQ(cached->shape(CommGroup::Tensor).ranks, 8);
  EXPECT_EQ(cached->shape(CommGroup::Data).ranks, 4);
}

// The axes of tp x dp x pp ranks in Megatron's order.
const std::vector<TrainingAxis> kOrder = rank_order({"tp", "ep", "dp", "pp"});
std::vector<ParallelAxis> pipeline_axes(int64_t tp, int64_t dp, int64_t pp) {
  Parallelism par;
  par.tp = tp;
  par.pp = pp;
  par.world_size = tp * dp * pp;
  return parallel_axes(par, kOrder);
}

// Every boundary's transfer (time, rate and latency, which the flow mode reads) / what a model
// of its own pair gives, although alike boundaries share one model: sharing may change the work,
// never an answer.
void expect_each_boundary_priced_as_its_own_pair(const Topology& topology, int64_t tp, int64_t dp,
                                                 int64_t pp) {
  const std::vector<ParallelAxis> axes = pipeline_axes(tp, dp, pp);
  GroupPricing pricing(topology, axes, kOrder);
  const RankPlacement placement(axes, topology);
  const LinkGraph links(topology, tp * dp * pp);
  const auto pp_axis = static_cast<size_t>(
      std::find_if(axes.begin(), axes.end(), [](auto& a) { return a.name == "pp"; }) -
      axes.begin());
  ASSERT_LT(pp_axis, axes.size());
  for (int64_t k = 0; k < pp; ++k)
    for (const Bytes bytes : {Bytes{8192}, Bytes{64 << 20}}) {
      const CollectiveModel own(links, {placement.boundary_pair(pp_axis, k)});
      const TransferCost shared = pricing.transfer(k, bytes),
                         alone = point_to_point_cost(own, bytes);
      EXPECT_EQ(shared.time, alone.time) << "boundary " << k << ", " << bytes << " bytes";
      EXPECT_EQ(shared.rate, alone.rate) << "boundary " << k;
      EXPECT_EQ(shared.latency, alone.latency) << "boundary " << k;
    }
}

// tp 4, pp 16 on 64 GPUs of two_tier() (servers of 8, four a leaf): boundaries alternate inside a
// server and across servers (through the switch first: PXN), boundary 7 crosses pods.
TEST(GroupPricing, AlikeBoundariesShareAModelAndItsAnswers) {
  expect_each_boundary_priced_as_its_own_pair(testing::two_tier(), 4, 1, 16);
  GroupPricing pricing(testing::two_tier(), pipeline_axes(4, 1, 16), kOrder);
  EXPECT_LT(pricing.transfer(0, 50'000'000).time, pricing.transfer(1, 50'000'000).time);
}

// tp 8, dp 2, pp 5 on a fat-tree of 4 positions with a dimension outside it and leaves of 5
// servers, oversubscribed 8:1: some boundaries cross a spine one way only (routes find the
// destination's leaf from the source's outer coordinates), and a shared model that missed it
// priced boundary 3 37 % too fast (found by review).
TEST(GroupPricing, BoundariesShareOnlyWhereTheirRoutesAreAlike) {
  expect_each_boundary_priced_as_its_own_pair(testing::fat_tree_inside_a_switch(4, 5), 8, 2, 5);
  // And on a grid of such networks and plans (3 to 5 positions, leaves of 2, 3 or 5 servers).
  for (const int64_t positions : {3, 4, 5})
    for (const int64_t per_leaf : {2, 3, 5})
      for (const int64_t dp : {1, 2, 3})
        for (const int64_t pp : {3, 4, 5}) {
          SCOPED_TRACE(std::to_string(positions) + " positions, " + std::to_string(per_leaf) +
                       " a leaf, dp " + std::to_string(dp) + ", pp " + std::to_string(pp));
          expect_each_boundary_priced_as_its_own_pair(
              testing::fat_tree_inside_a_switch(positions, per_leaf), 8, dp, pp);
        }
}

// The same axes twice, then other axes / one shared entry, then two, because the key is the axes.
TEST(GroupPricing, SharedPerLayout) {
  const Cluster cluster = load_cluster("dgx-a100");
  GroupPricingCache cache;
  const auto first = cache.get(cluster.network, Layout().axes, Layout().order);
  EXPECT_EQ(cache.get(cluster.network, Layout().axes, Layout().order), first);
  EXPECT_EQ(cache.size(), 1u);
  const auto other = cache.get(cluster.network, Layout(4).axes, Layout(4).order);
  EXPECT_NE(other, first);
  EXPECT_EQ(other->shape(CommGroup::Tensor).ranks, 4);
  EXPECT_EQ(cache.size(), 2u);
}

// Two layouts of 128 GPUs from one cache / the group of every rank costs what a fresh pricing of
// the second layout says, though the cache priced it on the first: ranks 0 to 127 in order
// whatever the axes, so its costs are shared between the layouts of a world size.
TEST(GroupPricing, WorldCostsSharedBetweenLayouts) {
  const Cluster cluster = load_cluster("dgx-a100");
  const Layout first(8), small(2);
  Layout other(4);  // tp 4, dp 8 (not 4): 128 GPUs too
  Parallelism par;
  par.tp = 4;
  par.pp = 4;
  par.world_size = 128;
  other.axes = parallel_axes(par, other.order);
  GroupPricingCache cache;
  const auto a = cache.get(cluster.network, first.axes, first.order);
  const auto b = cache.get(cluster.network, other.axes, other.order);
  GroupPricing fresh(cluster.network, other.axes, other.order);
  for (const Bytes bytes : {Bytes{4}, Bytes{50'000'000}}) {
    const CollectiveCost on_first =
        a->price(CollectiveKind::AllReduce, CommGroup::World, bytes, Algorithm::Auto);
    const CollectiveCost shared =
        b->price(CollectiveKind::AllReduce, CommGroup::World, bytes, Algorithm::Auto);
    const CollectiveCost own =
        fresh.price(CollectiveKind::AllReduce, CommGroup::World, bytes, Algorithm::Auto);
    EXPECT_EQ(shared.time, own.time);
    EXPECT_EQ(shared.algorithm, own.algorithm);
    EXPECT_EQ(shared.channels, own.channels);
    EXPECT_EQ(on_first.time, own.time);
  }
  EXPECT_EQ(b->shape(CommGroup::World).ranks, 128);
  // A layout of another world size prices its own world group: 32 GPUs, whose latency-bound
  // all-reduce is quicker than 128's.
  const auto smaller = cache.get(cluster.network, small.axes, small.order);
  EXPECT_EQ(smaller->shape(CommGroup::World).ranks, 32);
  EXPECT_LT(smaller->price(CollectiveKind::AllReduce, CommGroup::World, 4, Algorithm::Auto).time,
            b->price(CollectiveKind::AllReduce, CommGroup::World, 4, Algorithm::Auto).time);
}

// Layouts of 128 DGX A100 GPUs where kinds of groups coincide (ep 1: the expert-data groups are
// the data groups; pp 1: the model-parallel groups are the tensor groups; tp 1: the pipeline
// groups; cp 1 and ep 1: one-rank groups) and one where fewer do (ep 2) / every kind's shape,
// uniformity and costs are those of its own groups priced on their own, because groups formed by
// varying the same axes of size > 1 are the same groups, which the pricing prices once.
TEST(GroupPricing, KindsOfTheSameGroupsShareOnePricing) {
  const Cluster cluster = load_cluster("dgx-a100");
  const std::vector<TrainingAxis> order = rank_order({"tp", "ep", "dp", "pp"});
  struct Degrees {
    int64_t tp, pp, ep;
  };
  for (const Degrees d : {Degrees{8, 1, 1}, Degrees{1, 4, 1}, Degrees{8, 4, 1}, Degrees{2, 2, 2}}) {
    Parallelism par;
    par.tp = d.tp;
    par.pp = d.pp;
    par.ep = d.ep;
    par.world_size = 128;
    const std::vector<ParallelAxis> axes = parallel_axes(par, order);
    GroupPricing pricing(cluster.network, axes, order);
    const RankPlacement placement(axes, cluster.network);
    const LinkGraph links(cluster.network, placement.world_size());
    for (const CommGroup group : kTrainingGroups) {
      const std::string what = "tp " + std::to_string(d.tp) + " pp " + std::to_string(d.pp) +
                               " ep " + std::to_string(d.ep) + ", " + std::string(to_string(group));
      const std::vector<size_t> varied = group_axes(group, order);
      GroupKind kind = at_axis_ends(group) ? group_kind(placement.ends_of(varied.front()), varied)
                                           : group_kind(placement, varied);
      EXPECT_EQ(pricing.shape(group).ranks, kind.shape.ranks) << what;
      EXPECT_EQ(pricing.shape(group).span, kind.shape.span) << what;
      EXPECT_EQ(pricing.uniform(group), kind.uniform) << what;
      if (kind.shape.ranks <= 1) continue;
      const CollectiveModel own(links, std::move(kind));
      for (const CollectiveKind c :
           {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter})
        for (const Bytes bytes : {Bytes{4096}, Bytes{50'000'000}}) {
          const CollectiveCost shared = pricing.price(c, group, bytes, Algorithm::Auto);
          const CollectiveCost alone = own.cost(c, bytes);
          EXPECT_EQ(shared.time, alone.time) << what;
          EXPECT_EQ(shared.algorithm, alone.algorithm) << what;
          EXPECT_EQ(shared.channels, alone.channels) << what;
        }
    }
  }
}

// Another network / the cache starts again and prices on it, because an entry is only valid for
// the topology it was routed on: with half the NVSwitch bandwidth a 1 GB tensor-parallel
// all-reduce (bandwidth-bound) takes longer.
TEST(GroupPricing, AnotherTopologyEmptiesTheCache) {
  const Cluster cluster = load_cluster("dgx-a100");
  std::vector<Dimension> dims = cluster.network.dimensions();
  dims.front().link_bandwidth = dims.front().link_bandwidth * 0.5;
  const Topology slower = cluster.network.with_dimensions(dims);
  GroupPricingCache cache;
  const Layout layout;
  const Time fast =
      cache.get(cluster.network, layout.axes, layout.order)
          ->price(CollectiveKind::AllReduce, CommGroup::Tensor, 1'000'000'000, Algorithm::Auto)
          .time;
  const Time slow =
      cache.get(slower, layout.axes, layout.order)
          ->price(CollectiveKind::AllReduce, CommGroup::Tensor, 1'000'000'000, Algorithm::Auto)
          .time;
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_GT(slow.seconds(), 1.5 * fast.seconds());
}

}  // namespace
}  // namespace orrery
