// The kernel with activities whose rate changes while they run. Each test: the system, then the
// expectation and why, with the numbers derived by hand (GB = 1e9 bytes, rates in GB/s).
#include "engine/kernel.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace orrery::engine {
namespace {

constexpr double kGB = 1e9;

Time ms(int64_t v) {
  return Time::from_ns(v * 1'000'000);
}

// Runs `kernel` to the end and returns when each event fired, indexed by its `a`.
std::vector<Time> fired(Kernel& kernel, size_t events) {
  std::vector<Time> at(events, Time::max());
  kernel.run([&](Event e) { at[e.a] = kernel.now(); });
  return at;
}

TEST(Kernel, TwoFlowsShareOneLinkThenTheLongerRunsAlone) {
  // One 10 GB/s link; A = 10 GB and B = 30 GB both start at 0.
  // Each gets 10 / 2 = 5 GB/s until A ends: 10 / 5 = 2 s. B has 30 - 2 x 5 = 20 GB left and the
  // link to itself: 20 / 10 = 2 s more, so B ends at 4 s. The link carried 40 GB, busy 4 s, full.
  Kernel kernel({10 * kGB});
  const ResourceId link[] = {0};
  kernel.start(link, 10 * kGB, {0, 0, 0});
  kernel.start(link, 30 * kGB, {0, 1, 0});
  const auto at = fired(kernel, 2);
  EXPECT_EQ(at[0], ms(2000));
  EXPECT_EQ(at[1], ms(4000));
  kernel.sharing().flush_usage(kernel.now());
  EXPECT_DOUBLE_EQ(kernel.sharing().usage(0).amount, 40 * kGB);
  EXPECT_EQ(kernel.sharing().usage(0).busy, ms(4000));
  EXPECT_DOUBLE_EQ(kernel.sharing().usage(0).peak, 1.0);
}

TEST(Kernel, AFlowStartedByAnEventSlowsTheOneInFlight) {
  // One 10 GB/s link; A = 20 GB from 0; a timed event at 1 s starts B = 5 GB.
  // A alone for 1 s: 10 GB done, 10 left. Then 5 GB/s each: B ends at 1 + 5 / 5 = 2 s, when A
  // has 10 - 5 = 5 GB left; alone again at 10 GB/s: A ends at 2 + 0.5 = 2.5 s.
  Kernel kernel({10 * kGB});
  const ResourceId link[] = {0};
  kernel.start(link, 20 * kGB, {0, 0, 0});
  kernel.at(ms(1000), {1, 2, 0});
  std::vector<Time> at(3, Time::max());
  kernel.run([&](Event e) {
    at[e.a] = kernel.now();
    if (e.kind == 1) kernel.start(link, 5 * kGB, {0, 1, 0});
  });
  EXPECT_EQ(at[2], ms(1000));
  EXPECT_EQ(at[1], ms(2000));
  EXPECT_EQ(at[0], ms(2500));
}

TEST(Kernel, AFlowKeepsItsRateWhenItsBottleneckIsElsewhere) {
  // Link L0 = 10 GB/s carries A and B; link L1 = 4 GB/s carries B and C. A = 8 GB, B = 4 GB,
  // C = 6 GB, all from 0. Progressive filling: L0 offers 10 / 2 = 5 each, L1 4 / 2 = 2 each;
  // L1 saturates first, so B = C = 2 GB/s, and A takes what L0 has left, 10 - 2 = 8 GB/s.
  //   A ends at 8 / 8 = 1 s. B's bottleneck is L1, so A's end leaves B and C at 2 GB/s.
  //   B ends at 4 / 2 = 2 s; C then has 6 - 2 x 2 = 2 GB left alone on L1: 2 / 4 = 0.5 s more.
  Kernel kernel({10 * kGB, 4 * kGB});
  const ResourceId a[] = {0}, b[] = {0, 1}, c[] = {1};
  kernel.start(a, 8 * kGB, {0, 0, 0});
  kernel.start(b, 4 * kGB, {0, 1, 0});
  kernel.start(c, 6 * kGB, {0, 2, 0});
  const auto at = fired(kernel, 3);
  EXPECT_EQ(at[0], ms(1000));
  EXPECT_EQ(at[1], ms(2000));
  EXPECT_EQ(at[2], ms(2500));
  EXPECT_DOUBLE_EQ(kernel.sharing().usage(0).peak, 1.0);  // 8 + 2 = 10 GB/s on L0 until 1 s
}

TEST(Kernel, TasksFlowsAndLatenciesChain) {
  // A 3 ms task (a timed event), then a 2 GB flow on a 1 GB/s link, then 5 ms of latency: the
  // flow starts at 3 ms and takes 2 s; the latency ends at 3 + 2000 + 5 = 2008 ms.
  enum : uint32_t { kTaskDone, kFlowDone, kLatencyDone };
  Kernel kernel({1 * kGB});
  const ResourceId link[] = {0};
  kernel.at(ms(3), {kTaskDone, 0, 0});
  std::vector<Time> at(3, Time::max());
  kernel.run([&](Event e) {
    at[e.kind] = kernel.now();
    if (e.kind == kTaskDone) kernel.start(link, 2 * kGB, {kFlowDone, 0, 0});
    if (e.kind == kFlowDone) kernel.after(ms(5), {kLatencyDone, 0, 0});
  });
  EXPECT_EQ(at[kTaskDone], ms(3));
  EXPECT_EQ(at[kFlowDone], ms(2003));
  EXPECT_EQ(at[kLatencyDone], ms(2008));
}

TEST(Kernel, AtOneInstantFlowsEndBeforeTimedEventsWhichKeepTheirOrder) {
  // A 1 GB flow on a 1 GB/s link ends at 1 s; two events are scheduled for 1 s, the second
  // before the flow starts. The flow's end is handled first (activities first), then the events
  // in the order scheduled, so a run does not depend on how the queue breaks ties.
  Kernel kernel({1 * kGB});
  const ResourceId link[] = {0};
  kernel.at(ms(1000), {0, 1, 0});
  kernel.at(ms(1000), {0, 2, 0});
  kernel.start(link, 1 * kGB, {0, 0, 0});
  std::vector<uint32_t> order;
  kernel.run([&](Event e) { order.push_back(e.a); });
  EXPECT_EQ(order, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(kernel.now(), ms(1000));
}

TEST(Kernel, EventsForOneTimeFireInTheOrderScheduledWhateverCameBetween) {
  // Scheduled in this order: a (2 ms), b (2 ms), c (1 ms), d (2 ms); when a fires it schedules e
  // for now (2 ms) and f for 3 ms, when e fires g for now. By (time, order of scheduling): c at
  // 1 ms; a, b, d, e, g at 2 ms (e and g were scheduled after the others); f at 3 ms.
  Kernel kernel;
  enum : uint32_t { a, b, c, d, e, f, g };
  kernel.at(ms(2), {0, a, 0});
  kernel.at(ms(2), {0, b, 0});
  kernel.at(ms(1), {0, c, 0});
  kernel.at(ms(2), {0, d, 0});
  std::vector<uint32_t> order;
  kernel.run([&](Event ev) {
    order.push_back(ev.a);
    if (ev.a == a) {
      kernel.after(Time::zero(), {0, e, 0});
      kernel.at(ms(3), {0, f, 0});
    }
    if (ev.a == e) kernel.at(ms(2), {0, g, 0});
  });
  EXPECT_EQ(order, (std::vector<uint32_t>{c, a, b, d, e, g, f}));
}

TEST(Kernel, ALongChainAtOneInstantKeepsItsOrder) {
  // 100 events at 1 ms scheduled up front; each, when it fires, schedules two more for now until
  // 10,000 have fired (the run grows while it fires and drops what it has fired along the way),
  // and one event at 2 ms. Expectation: 1 ms's events in the order scheduled (0, 1, 2, ...: each
  // handler appends after every earlier one), then the 2 ms event, because the run is one
  // (time, order of scheduling) queue however often it is compacted.
  Kernel kernel;
  for (uint32_t i = 0; i < 100; ++i)
    kernel.at(ms(1), {0, i, 0});
  kernel.at(ms(2), {0, 1'000'000, 0});
  uint32_t scheduled = 100;
  std::vector<uint32_t> order;
  kernel.run([&](Event ev) {
    order.push_back(ev.a);
    for (int i = 0; i < 2 && scheduled < 10'000; ++i)
      kernel.after(Time::zero(), {0, scheduled++, 0});
  });
  ASSERT_EQ(order.size(), 10'001u);
  for (uint32_t i = 0; i < 10'000; ++i)
    ASSERT_EQ(order[i], i);
  EXPECT_EQ(order.back(), 1'000'000u);
  EXPECT_EQ(kernel.now(), ms(2));
}

TEST(Kernel, AFlowNeverEndsEarly) {
  // 1 byte at 3 bytes/s takes 1/3 s = 333,333,333,333.3 ps: the end is rounded up to the next
  // whole picosecond, 333,333,333,334 ps, so the byte is in when the event fires.
  Kernel kernel({3.0});
  const ResourceId link[] = {0};
  kernel.start(link, 1.0, {});
  kernel.run([](Event) {});
  EXPECT_EQ(kernel.now(), Time::from_ps(333'333'333'334));
}

TEST(Kernel, NoWorkEndsAtOnceAndThePastIsRefused) {
  // No bytes, or no link to cross: the activity ends at the instant it starts.
  Kernel kernel({1 * kGB});
  kernel.at(ms(7), {1, 0, 0});
  const ResourceId link[] = {0};
  std::vector<Time> at;
  kernel.run([&](Event e) {
    at.push_back(kernel.now());
    if (e.kind == 1) {
      kernel.start(link, 0, {});
      kernel.start({}, 1 * kGB, {});
    }
  });
  EXPECT_EQ(at, (std::vector<Time>{ms(7), ms(7), ms(7)}));
  EXPECT_THROW(kernel.at(ms(6), {}), std::logic_error);
}

TEST(Kernel, ABatchFiresItsEventOncePerFlowWithTheOthersEndingThen) {
  // Links 0 and 1 of 10 GB/s carry a batch of two 10 GB flows (event a = 0), link 2 a lone
  // 10 GB flow started first (a = 1): each alone at 10 GB/s, all three end at 1 s. Handled in
  // the order of their ids: the lone flow (id 0), then the batch's two (ids 1, 2).
  Kernel kernel({10 * kGB, 10 * kGB, 10 * kGB});
  const ResourceId lone[] = {2};
  kernel.start(lone, 10 * kGB, {0, 1, 0});
  const ResourceId links[] = {0, 1};
  const uint32_t begin[] = {0, 1, 2};
  const double amounts[] = {10 * kGB, 10 * kGB};
  kernel.start_batch(links, begin, amounts, {0, 0, 0});
  std::vector<std::pair<uint32_t, Time>> seen;
  kernel.run([&](Event e) { seen.emplace_back(e.a, kernel.now()); });
  const std::vector<std::pair<uint32_t, Time>> expected = {
      {1, ms(1000)}, {0, ms(1000)}, {0, ms(1000)}};
  EXPECT_EQ(seen, expected);
}

}  // namespace
}  // namespace orrery::engine
