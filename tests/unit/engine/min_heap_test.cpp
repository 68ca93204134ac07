// The engine's 4-ary min-heap (engine/min_heap.h): entries come out least first, whatever the
// order they went in and however pushes and pops interleave.
#include "engine/min_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace orrery::engine {
namespace {

TEST(MinHeap, EntriesComeOutLeastFirst) {
  // 1,000 distinct keys pushed shuffled / popped in ascending order, because every level keeps
  // no child less than its parent.
  std::vector<uint32_t> keys(1000);
  for (uint32_t i = 0; i < keys.size(); ++i)
    keys[i] = i * 7;
  std::mt19937 random(5);
  std::shuffle(keys.begin(), keys.end(), random);
  MinHeap<uint32_t> heap;
  for (const uint32_t k : keys)
    heap.push(k);
  ASSERT_EQ(heap.size(), keys.size());
  for (uint32_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(heap.top(), i * 7);
    heap.pop();
  }
  EXPECT_TRUE(heap.empty());
}

TEST(MinHeap, InterleavedPushesAndPopsMatchASortedList) {
  // A random mix of pushes and pops (sizes 0 to a few hundred, so partly filled last levels) /
  // each pop gives the least of what is in, as a sorted list says.
  std::mt19937 random(11);
  MinHeap<uint64_t> heap;
  std::vector<uint64_t> in;
  for (int step = 0; step < 20000; ++step) {
    if (in.empty() || random() % 3 != 0) {
      const uint64_t k = random();
      heap.push(k);
      in.insert(std::upper_bound(in.begin(), in.end(), k), k);
    } else {
      ASSERT_EQ(heap.top(), in.front()) << "step " << step;
      heap.pop();
      in.erase(in.begin());
    }
    ASSERT_EQ(heap.size(), in.size());
  }
}

}  // namespace
}  // namespace orrery::engine
