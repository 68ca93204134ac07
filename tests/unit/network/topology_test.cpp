#include "network/topology.h"

#include <gtest/gtest.h>

#include "test_topologies.h"

namespace orrery {
namespace {

TEST(Topology, CoordinatesAreMixedRadixInnermostFirst) {
  const Topology t = testing::torus();
  EXPECT_EQ(t.coordinates(0), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(t.coordinates(5), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(t.coordinates(63), (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(t.capacity(), 64);
  const Topology open = testing::two_tier();
  EXPECT_FALSE(open.capacity());
  EXPECT_EQ(open.coordinates(1000), (std::vector<int64_t>{0, 125}));
  EXPECT_EQ(open.extent(1, 1000), 125);
}

TEST(Topology, StepBandwidthPerGpu) {
  const Topology t = testing::two_tier();
  EXPECT_DOUBLE_EQ(t.step_bandwidth(0).in_gb_per_second(), 100);
  EXPECT_DOUBLE_EQ(t.step_bandwidth(1).in_gb_per_second(), 25);          // 8 rails x 25 / 8 GPUs
  EXPECT_DOUBLE_EQ(t.step_bandwidth(1, true).in_gb_per_second(), 12.5);  // 2:1 above the leaf
  EXPECT_DOUBLE_EQ(testing::torus().step_bandwidth(2).in_gb_per_second(),
                   100);  // both ring directions
}

TEST(Topology, RejectsInconsistentDimensions) {
  const Dimension inner = testing::dimension("a", DimensionKind::Switch, 0, 1);
  const Dimension outer = testing::dimension("b", DimensionKind::Switch, 4, 1);
  EXPECT_THROW(Topology({inner, outer}), std::invalid_argument);  // open size not outermost
  EXPECT_THROW(Topology(std::vector<Dimension>{}), std::invalid_argument);
  Dimension ring = testing::dimension("r", DimensionKind::Ring, 4, 1);
  ring.nvls = true;
  EXPECT_THROW(Topology({ring}), std::invalid_argument);
}

TEST(Topology, RejectsAbsurdValuesAndASecondFatTree) {
  const Dimension sw = testing::dimension("s", DimensionKind::Switch, 8, 100);
  Dimension ft = testing::dimension("f", DimensionKind::FatTree, 4, 25);
  ft.rails = 8;
  Dimension outer = ft;
  outer.size = 0;
  outer.rails = 2;
  EXPECT_THROW(Topology({sw, ft, outer}), std::invalid_argument);  // one fat-tree at most
  Dimension fast = sw, slow = sw, late = sw;
  fast.link_bandwidth = Bandwidth::bytes_per_second(1e300);
  slow.link_bandwidth = Bandwidth::bytes_per_second(1e-300);
  late.latency = Time::from_seconds(2);
  EXPECT_THROW(Topology({fast}), std::invalid_argument);
  EXPECT_THROW(Topology({slow}), std::invalid_argument);
  EXPECT_THROW(Topology({late}), std::invalid_argument);
  // A rendezvous is a network transport's: on a fat-tree only, and within 1 s there too.
  Dimension handshake = sw;
  handshake.rendezvous_latency = Time::from_us(7);
  EXPECT_THROW(Topology({handshake}), std::invalid_argument);
  Dimension slow_handshake = ft;
  slow_handshake.rendezvous_latency = Time::from_seconds(2);
  EXPECT_THROW(Topology({sw, slow_handshake}), std::invalid_argument);
  slow_handshake.rendezvous_latency = Time::from_us(7);
  EXPECT_NO_THROW(Topology({sw, slow_handshake}));
  // Three dimensions of 2^32 positions: 2^96 GPUs, not an overflowed "0".
  Dimension huge = sw;
  huge.size = int64_t{1} << 32;
  EXPECT_THROW(Topology({huge, huge, huge}), std::invalid_argument);
}

TEST(Topology, MoreRailsThanGpusBondIntoOneNicPerGpu) {
  // 16 rails of 25 GB/s on 8 GPUs: 8 rail groups of 2 x 25 GB/s, one per GPU.
  const Dimension sw = testing::dimension("s", DimensionKind::Switch, 8, 400);
  Dimension ft = testing::dimension("f", DimensionKind::FatTree, 0, 25);
  ft.rails = 16;
  const Topology t({sw, ft});
  EXPECT_EQ(t.rail_groups(1), 8);
  EXPECT_DOUBLE_EQ(t.nic_bandwidth(1).in_gb_per_second(), 50);
  EXPECT_DOUBLE_EQ(t.step_bandwidth(1).in_gb_per_second(), 50);
  // 4 rails: GPUs 2r and 2r + 1 share rail r.
  ft.rails = 4;
  const Topology four({sw, ft});
  EXPECT_EQ(four.rail_of(1, 5), 2);
  EXPECT_DOUBLE_EQ(four.nic_bandwidth(1).in_gb_per_second(), 25);
}

}  // namespace
}  // namespace orrery
