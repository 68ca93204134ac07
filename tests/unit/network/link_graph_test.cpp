#include "network/link_graph.h"

#include <gtest/gtest.h>

#include "test_topologies.h"

namespace orrery {
namespace {

TEST(LinkGraph, SpinesAreSizedByTheJobNotTheDeclaredLeaf) {
  // A leaf declared to hold 10^12 servers: a 16-GPU job on 2 servers of 8 has one pod and so no
  // spine traffic; its links are 2 x 16 switch ports, 2 x 2 x 8 NIC links and at most 2 x 8 x 2
  // leaf-spine links (one spine per server in the pod): 96, not 10^12.
  std::vector<Dimension> dims = testing::two_tier().dimensions();
  dims[1].servers_per_leaf = 1'000'000'000'000;
  const LinkGraph g(Topology(dims), 16);
  EXPECT_EQ(g.link_count(), 96u);
}

TEST(LinkGraph, RoutesAreDimensionOrderAndRailAligned) {
  // two_tier(): servers of 8, 8 rails, 4 servers per leaf (pods), spines shared.
  const Topology t = testing::two_tier();
  const LinkGraph g(t, 64);
  std::vector<LinkId> path;
  // Inside a server: up to the switch and down.
  EXPECT_EQ(g.route(0, 5, 0, path), Time::from_us(1));
  EXPECT_EQ(path.size(), 2u);
  EXPECT_EQ(g.link_name(path[0]), "nvlink up from gpu 0");
  EXPECT_EQ(g.link_name(path[1]), "nvlink down to gpu 5");
  // Same rail, same pod (servers 0 and 1): NIC up and NIC down.
  path.clear();
  EXPECT_EQ(g.route(3, 11, 0, path), Time::from_us(5));
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(g.link_name(path[0]), "fabric server 0 rail 3 NIC up");
  EXPECT_EQ(g.link_name(path[1]), "fabric server 1 rail 3 NIC down");
  // Another pod (server 4): through a spine.
  path.clear();
  g.route(3, 35, 7, path);
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(g.link_name(path[1]).substr(0, 12), "fabric leaf ");
  // Different local position and server: first to the right GPU in the switch (as PXN), then
  // the rail of the destination.
  path.clear();
  g.route(0, 13, 0, path);
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(g.link_name(path[1]), "nvlink down to gpu 5");
  EXPECT_EQ(g.link_name(path[2]), "fabric server 0 rail 5 NIC up");
}

// two_tier() (servers of 8, 4 servers a leaf) and torus() (4 x 4 x 4) / pairs whose routes cross
// the same families as often, both ways, share a route class; a switch hop more (PXN), a spine,
// or a ring hop more tells them apart, because those change the links loaded or the latency.
TEST(LinkGraph, RouteClassIsWhatTheRoutesCross) {
  const Topology t = testing::two_tier();
  const LinkGraph g(t, 64);
  EXPECT_EQ(g.route_class(19, 27), g.route_class(3, 11));  // servers 2-3 and 0-1: one pod, a rail
  EXPECT_EQ(g.route_class(5, 1), g.route_class(0, 5));     // inside a server
  EXPECT_NE(g.route_class(3, 35), g.route_class(3, 11));   // server 4: another pod, a spine
  EXPECT_NE(g.route_class(0, 13), g.route_class(3, 11));   // PXN: the switch, then the rail
  const Topology t3 = testing::torus();
  const LinkGraph torus(t3, 64);
  EXPECT_EQ(torus.route_class(1, 0), torus.route_class(0, 3));  // one hop either way
  EXPECT_NE(torus.route_class(0, 2), torus.route_class(0, 1));  // two hops against one
}

// A fat-tree with a dimension outside it and leaves of 5 servers that do not divide its 4
// positions: routes find the destination's leaf from the source's outer coordinates, so ranks
// 48 -> 64 (servers 6 and 8) cross a spine one way and not the other, where 16 -> 32 stays
// inside its leaf both ways: two classes, though both pairs join two servers of one rail.
TEST(LinkGraph, RouteClassFollowsTheRouteNotTheCoordinates) {
  const Topology t = testing::fat_tree_inside_a_switch(4, 5);
  const LinkGraph g(t, 80);
  EXPECT_NE(g.route_class(48, 64), g.route_class(16, 32));
}

TEST(LinkGraph, TorusTakesTheShorterWayHopByHop) {
  const Topology t = testing::torus();
  const LinkGraph g(t, 64);
  std::vector<LinkId> path;
  EXPECT_EQ(g.route(0, 3, 0, path), Time::from_us(1));  // one hop back around the ring of 4
  EXPECT_EQ(path.size(), 1u);
  path.clear();
  EXPECT_EQ(g.route(0, 2 + 4 * 1, 0, path), Time::from_us(2));  // 2 hops in x, 1 in y
  EXPECT_EQ(path.size(), 3u);
}

TEST(LinkGraph, AFatTreeOutsideAPartlyUsedDimensionHasItsServers) {
  // Switches of 8 in a mesh of 4, then a fat-tree whose servers are 32-GPU blocks: 8 or 16 GPUs
  // use one block of the fat-tree (this divided by zero: servers = 8 / 32).
  std::vector<Dimension> dims = {testing::dimension("s", DimensionKind::Switch, 8, 100),
                                 testing::dimension("m", DimensionKind::Mesh, 4, 25),
                                 testing::dimension("f", DimensionKind::FatTree, 0, 25)};
  dims[2].rails = 2;
  const Topology t(dims);
  for (const int64_t gpus : {8, 16, 64}) {
    const LinkGraph g(t, gpus);
    std::vector<LinkId> path;
    g.route(0, gpus - 1, 0, path);
    EXPECT_FALSE(path.empty());
  }
  // 64 GPUs: two servers; GPU 63 (local 31, rail 1) reaches GPU 0 through rail 0 (PXN: first
  // to local 0 of its own server over the switch and the mesh).
  const LinkGraph g(t, 64);
  std::vector<LinkId> path;
  g.route(63, 0, 0, path);
  EXPECT_EQ(g.link_name(path[path.size() - 2]), "f server 1 rail 0 NIC up");
}

TEST(LinkGraph, CapacitiesAreEffectiveAndOversubscribedAboveTheLeaf) {
  const Topology t = testing::two_tier();
  const LinkGraph g(t, 64);
  std::vector<LinkId> path;
  g.route(3, 35, 7, path);
  EXPECT_DOUBLE_EQ(g.capacity(path[0]), 25e9);    // NIC
  EXPECT_DOUBLE_EQ(g.capacity(path[1]), 12.5e9);  // leaf to spine, 2:1
}

}  // namespace
}  // namespace orrery
