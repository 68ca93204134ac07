// Successor lists (engine/successors.h): each task's dependents in the order given, and each
// task's count of predecessors, on a small graph written out by hand.
#include "engine/successors.h"

#include <gtest/gtest.h>

#include <vector>

namespace orrery::engine {
namespace {

std::vector<uint32_t> list(std::span<const uint32_t> s) {
  return {s.begin(), s.end()};
}

// 0 -> 2, 1 -> 2, 0 -> 3, 2 -> 3, given in that order; task 4 stands alone.
TEST(Successors, ListsDependentsInTheOrderGiven) {
  const std::vector<std::pair<uint32_t, uint32_t>> edges = {{0, 2}, {1, 2}, {0, 3}, {2, 3}};
  const Successors s(5, edges);
  EXPECT_EQ(list(s.of(0)), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(list(s.of(1)), (std::vector<uint32_t>{2}));
  EXPECT_EQ(list(s.of(2)), (std::vector<uint32_t>{3}));
  EXPECT_TRUE(s.of(3).empty());
  EXPECT_TRUE(s.of(4).empty());
  EXPECT_EQ(s.predecessor_counts(), (std::vector<uint32_t>{0, 0, 2, 2, 0}));
}

// A dependency given twice is two releases of its successor, as the simulators count it.
TEST(Successors, RepeatedDependencyCountsTwice) {
  const std::vector<std::pair<uint32_t, uint32_t>> edges = {{1, 0}, {1, 0}};
  const Successors s(2, edges);
  EXPECT_EQ(list(s.of(1)), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(s.predecessor_counts(), (std::vector<uint32_t>{2, 0}));
}

TEST(Successors, NoTasks) {
  const Successors s(0, {});
  EXPECT_TRUE(s.predecessor_counts().empty());
}

}  // namespace
}  // namespace orrery::engine
