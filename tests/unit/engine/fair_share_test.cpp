#include "engine/fair_share.h"

#include <gtest/gtest.h>

namespace orrery::engine {
namespace {

Time ms(double v) {
  return Time::from_seconds(v * 1e-3);
}

// Runs the network until no flow is left; returns each flow's completion time.
std::vector<Time> drain(FairShare& net, size_t flows) {
  std::vector<Time> end(flows, Time::max());
  std::vector<FairShare::ActivityId> done;
  for (Time t = net.next_completion(); t != Time::max(); t = net.next_completion()) {
    done.clear();
    net.complete(t, done);
    for (const auto id : done)
      end[id] = t;
  }
  return end;
}

TEST(FairShare, AFlowAloneRunsAtItsBottleneck) {
  // Links of 1 GB/s and 2 GB/s: 1 GB takes 1 s.
  FairShare net({1e9, 2e9});
  const ResourceId path[] = {0, 1};
  net.start(path, 1e9, Time::zero());
  EXPECT_EQ(drain(net, 1)[0], ms(1000));
}

TEST(FairShare, TwoEqualFlowsOnOneLinkEachGetHalf) {
  // 1 GB each over one 1 GB/s link: both at 0.5 GB/s, both done at 2 s.
  FairShare net({1e9});
  const ResourceId path[] = {0};
  net.start(path, 1e9, Time::zero());
  net.start(path, 1e9, Time::zero());
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(2000));
  EXPECT_EQ(end[1], ms(2000));
  EXPECT_DOUBLE_EQ(net.usage(0).amount, 2e9);
  EXPECT_EQ(net.usage(0).busy, ms(2000));
  EXPECT_DOUBLE_EQ(net.usage(0).peak, 1.0);
}

TEST(FairShare, MaxMinFairnessAcrossBottlenecks) {
  // Link 0: 1 GB/s shared by A and B; link 1: 3 GB/s shared by B and C.
  // Progressive filling: link 0 saturates first at 0.5 GB/s each (A, B frozen); C then takes the
  // 2.5 GB/s left on link 1. A: 0.5 GB -> 1 s; B: 0.5 GB -> 1 s; C: 2.5 GB -> 1 s.
  FairShare net({1e9, 3e9});
  const ResourceId a[] = {0}, b[] = {0, 1}, c[] = {1};
  net.start(a, 0.5e9, Time::zero());
  net.start(b, 0.5e9, Time::zero());
  net.start(c, 2.5e9, Time::zero());
  const auto end = drain(net, 3);
  EXPECT_EQ(end[0], ms(1000));
  EXPECT_EQ(end[1], ms(1000));
  EXPECT_EQ(end[2], ms(1000));
}

TEST(FairShare, RatesChangeWhenAFlowEnds) {
  // A short (0.5 GB) and a long (1.5 GB) flow on one 1 GB/s link: both at 0.5 GB/s until the
  // short one ends at 1 s (the long one has 1 GB left), then the long one alone: done at 2 s.
  FairShare net({1e9});
  const ResourceId path[] = {0};
  net.start(path, 0.5e9, Time::zero());
  net.start(path, 1.5e9, Time::zero());
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(1000));
  EXPECT_EQ(end[1], ms(2000));
}

TEST(FairShare, ALateFlowSlowsTheOneInFlight) {
  // 1 GB at 1 GB/s alone for 0.5 s, then shared with a second 0.25 GB flow: each at 0.5 GB/s;
  // the second ends at 1 s, the first has 0.25 GB left at full rate: ends at 1.25 s.
  FairShare net({1e9});
  const ResourceId path[] = {0};
  net.start(path, 1e9, Time::zero());
  std::vector<FairShare::ActivityId> done;
  EXPECT_EQ(net.next_completion(), ms(1000));
  net.start(path, 0.25e9, ms(500));
  std::vector<Time> end(2);
  for (Time t = net.next_completion(); t != Time::max(); t = net.next_completion()) {
    done.clear();
    net.complete(t, done);
    for (const auto id : done)
      end[id] = t;
  }
  EXPECT_EQ(end[1], ms(1000));
  EXPECT_EQ(end[0], ms(1250));
}

TEST(FairShare, IndependentComponentsDoNotInteract) {
  FairShare net({1e9, 1e9});
  const ResourceId a[] = {0}, b[] = {1};
  net.start(a, 1e9, Time::zero());
  net.start(b, 0.5e9, Time::zero());
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(1000));
  EXPECT_EQ(end[1], ms(500));
}

TEST(FairShare, EmptyFlowsEndAtOnce) {
  FairShare net({1e9});
  net.start({}, 1e9, ms(3));
  const ResourceId path[] = {0};
  net.start(path, 0, ms(3));
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(3));
  EXPECT_EQ(end[1], ms(3));
}

}  // namespace
}  // namespace orrery::engine
