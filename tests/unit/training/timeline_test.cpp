// The recorded timeline (--trace, --report) against timelines derived by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "synthetic_workloads.h"
#include "training/event_simulator.h"
#include "training/flow_simulator.h"

namespace orrery {
namespace {

using testing::layer;
using testing::ms;
using testing::uniform_workload;
using testing::us;

// 2 stages on two servers (tp 8), 1 micro-batch, F = 1 ms, ig = wg = 0.5 ms, an 8 MB transfer
// across servers at 25 GB/s = 320 us each way (event_simulator_test's
// TransfersSitOnTheCriticalPath):
//   stage 0: fwd [0, 1], send fwd [1, 1.32], ig [3.64, 4.14], wg [4.14, 4.64] ms
//   stage 1: fwd [1.32, 2.32], ig [2.32, 2.82], wg [2.82, 3.32], send bwd [3.32, 3.64] ms
Workload two_stages() {
  Workload w = uniform_workload(2, 1, 1, layer("l", ms(1), ms(0.5), ms(0.5)), 1, 8, 16);
  w.stage_boundary_bytes = 8'000'000;
  return w;
}

SimulationOptions recording() {
  SimulationOptions o;
  o.record_timeline = true;
  return o;
}

const TimelineTrack& track(const IterationTimeline& t, int64_t stage, const std::string& stream) {
  const auto it = std::find_if(t.tracks.begin(), t.tracks.end(), [&](const TimelineTrack& k) {
    return k.stage == stage && k.stream == stream;
  });
  if (it == t.tracks.end()) throw std::runtime_error("no track " + stream);
  return *it;
}

void expect_slice(const TimelineSlice& s, const std::string& name, Time start, Time duration) {
  EXPECT_EQ(s.name, name);
  EXPECT_EQ(s.start, start) << name;
  EXPECT_EQ(s.duration, duration) << name;
}

void expect_two_stage_timeline(const IterationTimeline& t) {
  const auto& c0 = track(t, 0, "compute").slices;
  ASSERT_EQ(c0.size(), 3u);
  expect_slice(c0[0], "l fwd mb0", Time::zero(), ms(1));
  expect_slice(c0[1], "l ig mb0", ms(3.64), ms(0.5));
  expect_slice(c0[2], "l wg mb0", ms(4.14), ms(0.5));
  EXPECT_EQ(c0[0].phase, "fwd");
  EXPECT_EQ(c0[0].micro_batch, 0);
  EXPECT_EQ(c0[0].chunk, -1);  // one chunk per stage: none named
  const auto& send = track(t, 0, "pp send fwd").slices;
  ASSERT_EQ(send.size(), 1u);
  expect_slice(send[0], "send fwd mb0 to stage 1", ms(1), us(320));
  EXPECT_EQ(send[0].bytes, 8'000'000u);
  EXPECT_EQ(send[0].group, "pp");
  const auto& c1 = track(t, 1, "compute").slices;
  ASSERT_EQ(c1.size(), 3u);
  expect_slice(c1[0], "l fwd mb0", ms(1.32), ms(1));
  expect_slice(c1[1], "l ig mb0", ms(2.32), ms(0.5));
  expect_slice(c1[2], "l wg mb0", ms(2.82), ms(0.5));
  expect_slice(track(t, 1, "pp send bwd").slices.at(0), "send bwd mb0 to stage 0", ms(3.32),
               us(320));
}

TEST(Timeline, EventModeRecordsEveryStageStreams) {
  Diagnostics d;
  const Result r = EventSimulator().simulate(two_stages(), testing::test_cluster(), recording(), d);
  ASSERT_TRUE(r.timeline);
  expect_two_stage_timeline(*r.timeline);
  for (const TimelineTrack& k : r.timeline->tracks)
    EXPECT_EQ(k.rank, -1);  // a rank class
  EXPECT_TRUE(r.timeline->links.empty());
}

TEST(Timeline, RecordingChangesNothingElse) {
  Diagnostics d1, d2;
  const Result plain = EventSimulator().simulate(two_stages(), testing::test_cluster(), {}, d1);
  const Result traced =
      EventSimulator().simulate(two_stages(), testing::test_cluster(), recording(), d2);
  EXPECT_FALSE(plain.timeline);
  EXPECT_EQ(plain.iteration_time, traced.iteration_time);
  EXPECT_EQ(plain.simulated_tasks, traced.simulated_tasks);
}

TEST(Timeline, FlowModeShowsOneRankPerStageAndTheBusiestLinks) {
  Diagnostics d;
  const Result r = FlowSimulator().simulate(two_stages(), testing::test_cluster(), recording(), d);
  ASSERT_TRUE(r.timeline);
  // Uncontended: every rank sees the event mode's timeline.
  expect_two_stage_timeline(*r.timeline);
  EXPECT_EQ(track(*r.timeline, 0, "compute").rank / 8, 0);  // tp innermost: ranks 0-7 stage 0
  EXPECT_EQ(track(*r.timeline, 1, "compute").rank / 8, 1);
  ASSERT_FALSE(r.timeline->links.empty());
  ASSERT_LE(r.timeline->links.size(), 10u);
  // Each transfer alone on its NIC fills it for its 320 us: 100 % from its start, then 0.
  const auto& points = r.timeline->links.front().points;
  ASSERT_EQ(points.size(), 2u);
  EXPECT_TRUE(points[0].first == ms(1) || points[0].first == ms(3.32));
  EXPECT_DOUBLE_EQ(points[0].second, 1.0);
  EXPECT_EQ(points[1].first, points[0].first + us(320));
  EXPECT_DOUBLE_EQ(points[1].second, 0.0);
}

TEST(Timeline, FlowModeShowsTheRanksAsked) {
  SimulationOptions o = recording();
  o.timeline_ranks = {3, 12};
  Diagnostics d;
  const Result r = FlowSimulator().simulate(two_stages(), testing::test_cluster(), o, d);
  EXPECT_EQ(track(*r.timeline, 0, "compute").rank, 3);
  EXPECT_EQ(track(*r.timeline, 1, "compute").rank, 12);
  o.timeline_ranks = {16};
  EXPECT_THROW(FlowSimulator().simulate(two_stages(), testing::test_cluster(), o, d), InputError);
}

TEST(Timeline, InterleavedSlicesNameTheirChunk) {
  // 2 stages, 2 chunks of one layer each: stage 0 runs chunk 0 then chunk 1 of micro-batch 0.
  const Workload w = uniform_workload(2, 2, 2, layer("l", ms(1), ms(1), ms(1)), 2);
  Diagnostics d;
  const Result r = EventSimulator().simulate(w, testing::test_cluster(), recording(), d);
  const auto& c0 = track(*r.timeline, 0, "compute").slices;
  EXPECT_EQ(c0.front().name, "l fwd mb0 c0");
  EXPECT_EQ(c0.front().chunk, 0);
  const auto chunk1 =
      std::find_if(c0.begin(), c0.end(), [](const TimelineSlice& s) { return s.chunk == 1; });
  ASSERT_NE(chunk1, c0.end());
  EXPECT_EQ(chunk1->name.substr(chunk1->name.size() - 3), " c1");
}

}  // namespace
}  // namespace orrery
