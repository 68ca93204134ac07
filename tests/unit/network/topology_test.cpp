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

}  // namespace
}  // namespace orrery
