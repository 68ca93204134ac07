// Collectives in flight on the kernel (network/collective_runs.h): steps run in order, a step's
// runs one after another each followed by its latency, concurrent collectives sharing a link, a
// collective launched when another ends, and the stop once the solver's work passes its limit.
// Numbers derived by hand: one 1 GB/s link (1e9 bytes per second), so 1e6 bytes alone take 1 ms.
#include "network/collective_runs.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/diagnostics.h"

namespace orrery {
namespace {

constexpr uint32_t kFlow = 0;  // the collectives' event kinds: kFlow and kFlow + 1

Time us(int64_t v) {
  return Time::from_ns(v * 1000);
}

// A step of `flows` flows of `bytes` each on link 0, repeated `repeat` times, each run followed by
// `latency`.
RoutedStep on_link0(size_t flows, double bytes, Time latency, int64_t repeat = 1) {
  RoutedStep s;
  s.path_begin.push_back(0);
  for (size_t i = 0; i < flows; ++i) {
    s.links.push_back(0);
    s.path_begin.push_back(static_cast<uint32_t>(s.links.size()));
    s.bytes.push_back(bytes);
  }
  s.latency = latency;
  s.repeat = repeat;
  return s;
}

struct Ended {
  int payload;
  Time at;
};

// Step 1: one flow of 1e6 B (1 ms), then 5 us, twice: 2.010 ms. Step 2: no flows, 3 us.
// Ends at 2.013 ms; it started 2 flows.
TEST(CollectiveRuns, StepsAndRepeatsRunInOrder) {
  engine::Kernel kernel({1e9});
  std::vector<Ended> ended;
  CollectiveRuns<int> runs(kernel, kFlow, [&](int p) { ended.push_back({p, kernel.now()}); });
  const std::vector<RoutedStep> steps = {on_link0(1, 1e6, us(5), 2), on_link0(0, 0, us(3))};
  runs.launch(steps, 7);
  kernel.run([&](const engine::Event& e) { runs.handle(e); });
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].payload, 7);
  EXPECT_EQ(ended[0].at, us(2013));
  EXPECT_EQ(flow_count(steps), 2u);
  EXPECT_EQ(kernel.sharing().activities_started(), 2u);
}

// Two collectives start together on the one link: A's step is 2 flows of 1e6 B, B's 1 flow of
// 2e6 B. The three flows share 1 GB/s, a third each, until A's two end at 3 ms; B's flow then has
// 2e6 - 1e6 = 1e6 B left and the link alone: 1 ms more. A (no latency) ends at 3 ms, B at 4 ms
// (a flow's end is rounded up to the picosecond: within 2 ps).
TEST(CollectiveRuns, ConcurrentCollectivesShareALink) {
  engine::Kernel kernel({1e9});
  std::vector<Ended> ended;
  CollectiveRuns<int> runs(kernel, kFlow, [&](int p) { ended.push_back({p, kernel.now()}); });
  const std::vector<RoutedStep> a = {on_link0(2, 1e6, Time::zero())};
  const std::vector<RoutedStep> b = {on_link0(1, 2e6, Time::zero())};
  runs.launch(a, 1);
  runs.launch(b, 2);
  kernel.run([&](const engine::Event& e) { runs.handle(e); });
  ASSERT_EQ(ended.size(), 2u);
  EXPECT_EQ(ended[0].payload, 1);
  EXPECT_NEAR(static_cast<double>(ended[0].at.ps()), 3e9, 2);
  EXPECT_EQ(ended[1].payload, 2);
  EXPECT_NEAR(static_cast<double>(ended[1].at.ps()), 4e9, 2);
}

// The owner launches the next collective when one ends (reusing its slot): three in a row of
// 1 ms + 1 us each end at 1.001, 2.002 and 3.003 ms. A collective of no steps ends at once.
TEST(CollectiveRuns, ACollectiveMayBeLaunchedWhenAnotherEnds) {
  engine::Kernel kernel({1e9});
  const std::vector<RoutedStep> steps = {on_link0(1, 1e6, us(1))};
  const std::vector<RoutedStep> none;
  std::vector<Ended> ended;
  std::function<void(int)> on_end;
  CollectiveRuns<int> runs(kernel, kFlow, [&](int p) { on_end(p); });
  on_end = [&](int p) {
    ended.push_back({p, kernel.now()});
    if (p < 3) runs.launch(steps, p + 1);
  };
  runs.launch(none, 0);
  ASSERT_EQ(ended.size(), 1u);  // before the kernel runs
  kernel.run([&](const engine::Event& e) { runs.handle(e); });
  ASSERT_EQ(ended.size(), 4u);
  EXPECT_EQ(ended[1].at, us(1001));
  EXPECT_EQ(ended[2].at, us(2002));
  EXPECT_EQ(ended[3].at, us(3003));
}

// A step of two equal flows on the one link, ten times: each run's two flows form one component,
// solved once as they start (2 activities solved); they end together, leaving the link idle (no
// solve). With at most 5 solved, runs 1-3 start (0, 2 and 4 solved before them) and run 4 (6
// solved) is refused with the count; with the default limit all ten run.
TEST(CollectiveRuns, ARunStopsOnceItsFlowsContendPastTheLimit) {
  const std::vector<RoutedStep> steps = {on_link0(2, 1e6, Time::zero(), 10)};
  {
    engine::Kernel kernel({1e9});
    int ended = 0;
    CollectiveRuns<int> runs(
        kernel, kFlow, [&](int) { ++ended; }, 5);
    runs.launch(steps, 0);
    try {
      kernel.run([&](const engine::Event& e) { runs.handle(e); });
      FAIL() << "expected the run to stop";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("re-solved 6 times"), std::string::npos) << e.what();
    }
    EXPECT_EQ(kernel.sharing().activities_solved(), 6u);
    EXPECT_EQ(ended, 0);
  }
  engine::Kernel kernel({1e9});
  int ended = 0;
  CollectiveRuns<int> runs(kernel, kFlow, [&](int) { ++ended; });
  runs.launch(steps, 0);
  kernel.run([&](const engine::Event& e) { runs.handle(e); });
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(kernel.sharing().activities_solved(), 20u);
}

}  // namespace
}  // namespace orrery
