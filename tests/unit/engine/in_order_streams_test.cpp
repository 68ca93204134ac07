// In-order streams gated by dependencies, driven by hand: each test names the streams, the
// predecessor counts, and which task each stream may start after each step.
#include "engine/in_order_streams.h"

#include <gtest/gtest.h>

#include <vector>

namespace orrery::engine {
namespace {

constexpr auto kNone = InOrderStreams::kNone;

TEST(InOrderStreams, AStreamRunsItsTasksOneAtATimeInOrder) {
  // One stream of tasks 2, 0, 1 (in that order), none with predecessors.
  const std::vector<uint32_t> order = {2, 0, 1};
  InOrderStreams streams(std::vector<uint32_t>(3, 0));
  const auto s = streams.add_stream(order);
  EXPECT_EQ(streams.ready(s), 2u);
  streams.start(s);
  EXPECT_EQ(streams.ready(s), kNone);  // busy with 2
  EXPECT_EQ(streams.next(s), 2u);
  EXPECT_EQ(streams.position(s), 0u);  // running its first task
  streams.finish(s);
  EXPECT_EQ(streams.ready(s), 0u);
  EXPECT_EQ(streams.position(s), 1u);
  streams.start(s);
  streams.finish(s);
  EXPECT_EQ(streams.ready(s), 1u);
  streams.start(s);
  streams.finish(s);
  EXPECT_EQ(streams.ready(s), kNone);  // all run
  EXPECT_EQ(streams.next(s), kNone);
}

TEST(InOrderStreams, ATaskWaitsForEachOfItsPredecessors) {
  // Stream A runs task 0, stream B runs task 1; task 1 has two predecessors.
  const std::vector<uint32_t> a = {0}, b = {1};
  InOrderStreams streams({0, 2});
  const auto sa = streams.add_stream(a);
  const auto sb = streams.add_stream(b);
  EXPECT_EQ(streams.ready(sa), 0u);
  EXPECT_EQ(streams.ready(sb), kNone);
  EXPECT_FALSE(streams.release(1));  // one of two ended
  EXPECT_EQ(streams.ready(sb), kNone);
  EXPECT_TRUE(streams.release(1));  // the last
  EXPECT_EQ(streams.ready(sb), 1u);
}

TEST(InOrderStreams, IdenticalRanksShareOneOrderWithTheirOwnTaskIds) {
  // Two ranks run the same program of tasks {0, 1} on one stream: rank r's task i is 2 r + i.
  const std::vector<uint32_t> order = {0, 1};
  InOrderStreams streams;
  streams.add_tasks(std::vector<uint32_t>{0, 1});
  const auto first = streams.add_stream(order, 0);
  streams.add_tasks(std::vector<uint32_t>{0, 1});
  const auto second = streams.add_stream(order, 2);
  EXPECT_EQ(streams.task_count(), 4u);
  EXPECT_EQ(streams.ready(first), 0u);
  EXPECT_EQ(streams.ready(second), 2u);
  streams.start(second);
  streams.finish(second);
  EXPECT_EQ(streams.ready(second), kNone);  // task 3 still waits for its predecessor
  EXPECT_EQ(streams.next(second), 3u);
  EXPECT_TRUE(streams.release(3));
  EXPECT_EQ(streams.ready(second), 3u);
  EXPECT_EQ(streams.ready(first), 0u);  // the first rank's stream did not move
}

}  // namespace
}  // namespace orrery::engine
