#include "network/group_kind.h"

#include <gtest/gtest.h>

#include <string>

#include "network/collective_model.h"
#include "test_topologies.h"

namespace orrery {
namespace {

// Servers of `gpus` on a switch, joined by a fat-tree of `rails` NICs, `per_leaf` servers per
// leaf (0: one pod), `oversubscription`:1, with the protocols' terms (not ideal links), so that
// every term of the closed form is compared.
Topology fabric(int64_t gpus, int64_t rails, int64_t per_leaf, double oversubscription,
                bool mesh = false) {
  std::vector<Dimension> dims = testing::two_tier(true).dimensions();
  dims[0].size = gpus;
  dims[0].kind = mesh ? DimensionKind::Mesh : DimensionKind::Switch;
  dims[0].nvls = !mesh;
  dims[0].base_latency = Time::from_us(8);
  dims[1].rails = rails;
  dims[1].servers_per_leaf = per_leaf;
  dims[1].oversubscription = oversubscription;
  dims[1].base_latency = Time::from_us(8);
  Topology t(dims);
  t.set_gpu_memory(Bandwidth::gb_per_second(2000));
  return t;
}

struct Plan {
  int64_t tp, ep, dp, pp;
};

std::vector<ParallelAxis> axes(const Plan& p) {
  return {{"tp", p.tp}, {"ep", p.ep}, {"dp", p.dp}, {"pp", p.pp}};
}

// Prices every collective with every algorithm on a kind given compactly and on the same kind
// with every group listed: the times agree to 1e-9 (the leaf-spine loads add up in another
// order), and so do the algorithm and protocol.
// `ends`: the groups of the varied axis's first and last coordinate (RankPlacement::ends_of).
void expect_compact_equals_listed(const Topology& t, const Plan& plan, std::vector<size_t> varied,
                                  bool expect_compact = true, bool ends = false) {
  const RankPlacement whole(axes(plan), t);
  const RankPlacement placement = ends ? whole.ends_of(varied.front()) : whole;
  const std::string what = "tp " + std::to_string(plan.tp) + " ep " + std::to_string(plan.ep) +
                           " dp " + std::to_string(plan.dp) + " pp " + std::to_string(plan.pp) +
                           " varying axis " + std::to_string(varied.front());
  GroupKind kind = group_kind(placement, varied);
  ASSERT_EQ(kind.compact, expect_compact) << what;
  bool uniform = false;
  const GroupShape shape = placement.group_shape(varied, &uniform);
  EXPECT_EQ(kind.uniform, uniform) << what;
  EXPECT_EQ(kind.shape.span, shape.span) << what;
  EXPECT_EQ(kind.shape.blocks, shape.blocks) << what;
  EXPECT_EQ(kind.shape.fewest, shape.fewest) << what;
  EXPECT_EQ(kind.shape.crosses_leaves, shape.crosses_leaves) << what;

  const LinkGraph links(t, placement.world_size());
  const CollectiveModel compact(links, std::move(kind));
  const CollectiveModel listed(links, placement.groups(varied));
  for (const auto op :
       {CollectiveKind::AllReduce, CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllToAll, CollectiveKind::Broadcast, CollectiveKind::Reduce,
        CollectiveKind::SendRecv})
    for (const Algorithm a : all_algorithms())
      for (const Bytes bytes : {Bytes{4096}, Bytes{1} << 24, Bytes{1} << 32}) {
        const auto c = compact.price(a, op, bytes);
        const auto l = listed.price(a, op, bytes);
        ASSERT_EQ(c.has_value(), l.has_value()) << what;
        if (!c) continue;
        const auto ps = static_cast<double>(l->time.ps());
        EXPECT_NEAR(static_cast<double>(c->time.ps()), ps, 1 + ps * 1e-9)
            << what << ": " << to_string(a) << " " << to_string(op) << " " << bytes;
        EXPECT_EQ(c->protocol, l->protocol) << what;
        EXPECT_EQ(c->channels, l->channels) << what;
      }
}

TEST(GroupKind, CompactKindsPriceAsEveryGroupListed) {
  // Leaves of 4 servers and 2:1 uplinks, so that leaf-spine links are the busiest where groups
  // cross pods; uneven rails (3 NICs on 8 GPUs) share NICs between groups; pods of 3 servers do
  // not divide the shifts, so the clusters' copies sit at every phase among the pods.
  for (const Topology& t :
       {fabric(8, 8, 4, 2), fabric(8, 3, 3, 4), fabric(8, 8, 0, 1), fabric(4, 2, 2, 8, true)}) {
    const int64_t g = t[0].size;
    for (const Plan& p : {Plan{g, 1, 8, 3}, Plan{g, 2, 4, 2}, Plan{g / 2, 2, 6, 2},
                          Plan{2, 1, 12, 2}, Plan{g, 1, 1, 12}, Plan{1, g, 2, 3}})
      for (size_t axis = 0; axis < 4; ++axis)
        expect_compact_equals_listed(t, p, {axis});
    // Data-parallel groups over ep and dp together.
    expect_compact_equals_listed(t, Plan{g / 2, 2, 6, 2}, {1, 2});
  }
}

// The embedding group's kind (the first and last pipeline stage of each tensor rank and
// replica) prices as its pairs listed: compact where the pairs' cluster fills its servers.
TEST(GroupKind, FirstAndLastStagesPriceAsTheirPairsListed) {
  for (const Topology& t : {fabric(8, 8, 4, 2), fabric(8, 3, 3, 4), fabric(8, 8, 0, 1)}) {
    const int64_t g = t[0].size;
    for (const Plan& p : {Plan{g, 1, 8, 3}, Plan{g, 2, 4, 4}, Plan{g, 1, 1, 12}})
      expect_compact_equals_listed(t, p, {3}, true, true);
    // Two stages in one server: the pairs' cluster does not fill it, so every pair is listed.
    expect_compact_equals_listed(t, Plan{2, 1, 1, 4}, {3}, false, true);
  }
}

TEST(GroupKind, GroupsThatDoNotFillTheirServersAreListed) {
  // TP 3 on servers of 8: a tensor-parallel cluster would span servers it shares with others.
  const Topology t = fabric(8, 8, 4, 2);
  expect_compact_equals_listed(t, Plan{3, 1, 8, 1}, {0}, false);
  // A world that is not whole servers.
  expect_compact_equals_listed(t, Plan{4, 1, 3, 1}, {2}, false);
}

TEST(GroupKind, UnevenLeafCrossingIsReportedAsEveryGroupListedReportsIt) {
  // Groups of 2 servers on pods of 3: some copies cross a leaf, some do not.
  const Topology t = fabric(8, 8, 3, 2);
  const RankPlacement placement(axes({8, 1, 2, 6}), t);
  const std::vector<size_t> dp = {2};
  const GroupKind kind = group_kind(placement, dp);
  EXPECT_TRUE(kind.compact);
  EXPECT_EQ(kind.clusters(), 6);
  EXPECT_FALSE(kind.uniform);
  EXPECT_TRUE(kind.shape.crosses_leaves);
  expect_compact_equals_listed(t, Plan{8, 1, 2, 6}, dp);
}

// A million GPUs as seed 001 lays them out (TP 8, DP 8,192, PP 16 on 8-GPU servers, leaves of
// 20): each kind is priced by routing one cluster, so the work is the same on 1,024 GPUs' worth
// of clusters as on 2^20, and the tensor-parallel kind's 131,072 groups cost what one does.
TEST(GroupKind, AMillionGpusArePricedByRoutingOneCluster) {
  const Topology t = fabric(8, 8, 20, 1);
  const auto price = [&](const Plan& p, size_t axis, Bytes bytes, int64_t* routed) {
    const RankPlacement placement(axes(p), t);
    const LinkGraph links(t, placement.world_size());
    const std::vector<size_t> varied = {axis};
    const CollectiveModel model(links, group_kind(placement, varied));
    const CollectiveCost cost = model.cost(CollectiveKind::AllReduce, bytes);
    *routed = model.routed();
    return cost.time;
  };
  int64_t million = 0, small = 0;
  // Tensor parallel: one server, 131,072 groups in 131,072 clusters.
  EXPECT_EQ(price({8, 1, 8192, 16}, 0, Bytes{1} << 27, &million),
            price({8, 1, 8, 16}, 0, Bytes{1} << 27, &small));
  EXPECT_EQ(million, small);
  EXPECT_LE(million, 3 * 8 * 2);  // ring and NVLS steps of 8 transfers, base latency steps
  // Data parallel: 16 clusters of 8 groups of 8,192; routing one costs what a job of one
  // pipeline stage costs.
  price({8, 1, 8192, 16}, 2, Bytes{1} << 30, &million);
  price({8, 1, 8192, 1}, 2, Bytes{1} << 30, &small);
  EXPECT_EQ(million, small);
  EXPECT_LE(million, 2 * 8 * 8192);  // the ring (tree reads its loads) and NVLS's none
}

}  // namespace
}  // namespace orrery
