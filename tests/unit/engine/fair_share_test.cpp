#include "engine/fair_share.h"

#include <gtest/gtest.h>

#include <deque>
#include <span>
#include <utility>
#include <vector>

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

TEST(FairShare, AFlowWhoseRateHoldsEndsOnTimeWhileItsComponentChanges) {
  // Link 0: 1 GB/s under A, B and C; link 1: 0.2 GB/s under C alone. C freezes first at
  // 0.2 GB/s (its link 1), A and B share the 0.8 GB/s left: 0.4 each. A (0.4 GB) ends at 1 s;
  // B (1.2 GB, 0.8 left) then runs at 0.8 GB/s and ends at 2 s. C is re-solved at both ends and
  // keeps 0.2 GB/s throughout, so the solver keeps its queued completion rather than queueing it
  // again: it must still end, at 0.6 GB / 0.2 GB/s = 3 s.
  FairShare net({1e9, 0.2e9});
  const ResourceId a[] = {0}, c[] = {0, 1};
  net.start(a, 0.4e9, Time::zero());
  net.start(a, 1.2e9, Time::zero());
  net.start(c, 0.6e9, Time::zero());
  const auto end = drain(net, 3);
  EXPECT_EQ(end[0], ms(1000));
  EXPECT_EQ(end[1], ms(2000));
  EXPECT_EQ(end[2], ms(3000));
  EXPECT_DOUBLE_EQ(net.usage(1).amount, 0.6e9);
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

// Batches: k activities started together. Expectations are those of k start() calls.

// Links of batches laid out as start_batch takes them, each batch's kept until the end (a batch
// keeps its caller's links, which must outlive it).
class BatchLinks {
 public:
  // Lays out one batch; `paths` lists each member's links.
  std::pair<std::span<const ResourceId>, std::span<const uint32_t>> add(
      const std::vector<std::vector<ResourceId>>& paths) {
    auto& [links, begin] = kept_.emplace_back();
    for (const auto& p : paths) {
      begin.push_back(static_cast<uint32_t>(links.size()));
      links.insert(links.end(), p.begin(), p.end());
    }
    begin.push_back(static_cast<uint32_t>(links.size()));
    return {links, begin};
  }

 private:
  std::deque<std::pair<std::vector<ResourceId>, std::vector<uint32_t>>> kept_;
};

// Starts one batch on `net`, its links kept in `kept`.
std::vector<FairShare::ActivityId> start_batch(FairShare& net, BatchLinks& kept,
                                               const std::vector<std::vector<ResourceId>>& paths,
                                               const std::vector<double>& amounts, Time now) {
  const auto [links, begin] = kept.add(paths);
  std::vector<FairShare::ActivityId> ids;
  net.start_batch(links, begin, amounts, now, 0, ids);
  return ids;
}

TEST(FairShareBatch, MembersAloneOnTheirLinksEndTogetherInIdOrder) {
  // Two members of 1 GB on disjoint 2-link paths of 1 GB/s: each alone at 1 GB/s, both done at
  // 1 s, reported by one complete() as ids 0 then 1 (what two start() calls give); each link
  // carried 1 GB.
  FairShare net({1e9, 1e9, 1e9, 1e9});
  BatchLinks kept;
  EXPECT_EQ(start_batch(net, kept, {{0, 1}, {2, 3}}, {1e9, 1e9}, Time::zero()),
            (std::vector<FairShare::ActivityId>{0, 1}));
  EXPECT_EQ(net.next_completion(), ms(1000));
  std::vector<FairShare::ActivityId> done;
  net.complete(ms(1000), done);
  EXPECT_EQ(done, (std::vector<FairShare::ActivityId>{0, 1}));
  EXPECT_EQ(net.next_completion(), Time::max());
  net.flush_usage(ms(1000));
  for (ResourceId r = 0; r < 4; ++r)
    EXPECT_DOUBLE_EQ(net.usage(r).amount, 1e9);
}

TEST(FairShareBatch, AFlowJoiningOneMemberSlowsThatMemberAlone) {
  // Members of 1 GB on links 0 and 1 (1 GB/s each). At 0.5 s a 0.25 GB flow joins link 0: member
  // 0 has 0.5 GB left and both run at 0.5 GB/s; the newcomer ends at 1 s with member 1 (which
  // kept 1 GB/s), member 0 then has 0.25 GB left alone at 1 GB/s: done at 1.25 s.
  FairShare net({1e9, 1e9});
  BatchLinks kept;
  start_batch(net, kept, {{0}, {1}}, {1e9, 1e9}, Time::zero());
  EXPECT_EQ(net.next_completion(), ms(1000));
  const ResourceId path[] = {0};
  EXPECT_EQ(net.start(path, 0.25e9, ms(500)), 2u);
  std::vector<FairShare::ActivityId> done;
  EXPECT_EQ(net.next_completion(), ms(1000));
  net.complete(ms(1000), done);
  EXPECT_EQ(done, (std::vector<FairShare::ActivityId>{1, 2}));
  EXPECT_EQ(net.next_completion(), ms(1250));
}

TEST(FairShareBatch, MembersSharingALinkShareItFairly) {
  // Both members cross link 0 (1 GB/s) and a 2 GB/s link of their own: 0.5 GB/s each, 1 GB each
  // done at 2 s; link 0 was full (peak 1), the others half used.
  FairShare net({1e9, 2e9, 2e9});
  BatchLinks kept;
  start_batch(net, kept, {{0, 1}, {0, 2}}, {1e9, 1e9}, Time::zero());
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(2000));
  EXPECT_EQ(end[1], ms(2000));
  EXPECT_DOUBLE_EQ(net.usage(0).peak, 1.0);
  EXPECT_DOUBLE_EQ(net.usage(1).peak, 0.25);
}

TEST(FairShareBatch, TwoBatchesStartedOnOneLinkAtOnceShareIt) {
  // Batches {0}, {1} and {0}, {2} of 1 GB each on 1 GB/s links, both at 0, before any solve: the
  // members on link 0 (ids 0 and 2) leave their batches and share it at 0.5 GB/s, done at 2 s;
  // ids 1 and 3 are alone at 1 GB/s, done at 1 s.
  FairShare net({1e9, 1e9, 1e9});
  BatchLinks kept;
  start_batch(net, kept, {{0}, {1}}, {1e9, 1e9}, Time::zero());
  start_batch(net, kept, {{0}, {2}}, {1e9, 1e9}, Time::zero());
  std::vector<FairShare::ActivityId> done;
  EXPECT_EQ(net.next_completion(), ms(1000));
  net.complete(ms(1000), done);
  EXPECT_EQ(done, (std::vector<FairShare::ActivityId>{1, 3}));
  done.clear();
  EXPECT_EQ(net.next_completion(), ms(2000));
  net.complete(ms(2000), done);
  EXPECT_EQ(done, (std::vector<FairShare::ActivityId>{0, 2}));
  EXPECT_EQ(net.next_completion(), Time::max());
}

TEST(FairShareBatch, MembersOfUnequalRatesEndApart) {
  // 1 GB on a 1 GB/s link and 1 GB on a 2 GB/s link: 1 s and 0.5 s.
  FairShare net({1e9, 2e9});
  BatchLinks kept;
  start_batch(net, kept, {{0}, {1}}, {1e9, 1e9}, Time::zero());
  const auto end = drain(net, 2);
  EXPECT_EQ(end[0], ms(1000));
  EXPECT_EQ(end[1], ms(500));
}

TEST(FairShareBatch, ManyEndingTogetherAreReportedInIdOrder) {
  // 70 links of 1 GB/s. First 70 activities of 0.5 GB, one per link (ids 0 to 69), end at
  // 0.5 s; freed ids come back largest first. Then 1 GB on each link: 35 one by one (ids 69 down
  // to 35) and a batch of 35 (ids 34 down to 0), all alone at 1 GB/s, so all end at 1.5 s, and one
  // complete() reports ids 0 to 69 in ascending order, as 70 start() calls would.
  constexpr uint32_t kLinks = 70;
  FairShare net(std::vector<double>(kLinks, 1e9));
  for (ResourceId l = 0; l < kLinks; ++l) {
    const ResourceId path[] = {l};
    net.start(path, 0.5e9, Time::zero());
  }
  std::vector<FairShare::ActivityId> done;
  EXPECT_EQ(net.next_completion(), ms(500));
  net.complete(ms(500), done);
  done.clear();
  for (ResourceId l = 0; l < kLinks / 2; ++l) {
    const ResourceId path[] = {l};
    net.start(path, 1e9, ms(500));
  }
  BatchLinks kept;
  std::vector<std::vector<ResourceId>> paths;
  for (ResourceId l = kLinks / 2; l < kLinks; ++l)
    paths.push_back({l});
  start_batch(net, kept, paths, std::vector<double>(kLinks / 2, 1e9), ms(500));
  EXPECT_EQ(net.next_completion(), ms(1500));
  net.complete(ms(1500), done);
  std::vector<FairShare::ActivityId> ascending(kLinks);
  for (uint32_t i = 0; i < kLinks; ++i)
    ascending[i] = i;
  EXPECT_EQ(done, ascending);
}

// Starts the same activities in four waves, as batches or one by one, and returns every
// (time, id) complete() reports and each link's usage (in all and per tag) and recorded rate
// history at the end. Waves alternate between two tags. As in the kernel, what starts at an
// instant at which activities end starts after complete() and before the next solve.
struct Replay {
  std::vector<std::pair<Time, FairShare::ActivityId>> done;
  std::vector<double> amount, peak;
  std::vector<Time> busy;
  std::vector<std::vector<std::pair<Time, double>>> history;
};
Replay replay(bool batched) {
  const std::vector<double> capacity = {1e9, 2e9, 1e9, 3e9, 1e9, 1e9, 1e9};
  FairShare net(capacity);
  net.set_tags(2);
  const ResourceId recorded[] = {0, 1, 2, 3, 4, 5};  // link 6 is not
  net.record_rates(recorded);
  struct Wave {
    Time at;
    std::vector<std::vector<ResourceId>> batch;
    std::vector<double> amounts;     // each member's bytes
    std::vector<ResourceId> joiner;  // started alone just after the batch, at the same instant
  };
  // 0.6 GB each but one. The first wave's members are alone at 1 GB/s; at 0.3 s the second
  // wave's {1, 3} joins two of them. At 0.6 s the member on link 4 ends and a member of the third
  // wave starts there at the same rate, and a joiner takes link 6 from the other member before any
  // solve; usage is brought up to date at 0.8 s, with that wave in flight. At 0.9 s the second
  // wave's member on link 5 ends and the fourth wave's starts there, beside a member of another
  // size.
  const double w = 0.6e9;
  const std::vector<Wave> waves = {{Time::zero(), {{0, 1}, {2, 3}, {4}}, {w, w, w}, {}},
                                   {ms(300), {{5}, {1, 3}}, {w, w}, {}},
                                   {ms(600), {{4}, {6}}, {w, w}, {6}},
                                   {ms(900), {{5}, {0}, {2}}, {w, 0.3e9, w}, {}}};
  Replay r;
  BatchLinks kept;
  std::vector<FairShare::ActivityId> done;
  const auto advance = [&](Time until) {
    for (Time t = net.next_completion(); t <= until && t != Time::max();) {
      done.clear();
      net.complete(t, done);
      for (const auto id : done)
        r.done.emplace_back(t, id);
      if (t == until) break;
      t = net.next_completion();
    }
  };
  uint32_t tag = 0;
  for (const Wave& wave : waves) {
    if (wave.at == ms(900)) {
      advance(ms(800));
      net.flush_usage(ms(800));
    }
    advance(wave.at);
    if (batched) {
      const auto [links, begin] = kept.add(wave.batch);
      std::vector<FairShare::ActivityId> ids;
      net.start_batch(links, begin, wave.amounts, wave.at, tag, ids);
    } else {
      for (size_t i = 0; i < wave.batch.size(); ++i)
        net.start(wave.batch[i], wave.amounts[i], wave.at, tag);
    }
    if (!wave.joiner.empty()) net.start(wave.joiner, 0.2e9, wave.at, tag);
    tag = 1 - tag;
  }
  advance(Time::max());
  net.flush_usage(r.done.back().first);
  for (ResourceId l = 0; l < capacity.size(); ++l) {
    for (uint32_t t = 0; t < 2; ++t) {
      r.amount.push_back(net.usage(l, t).amount);
      r.peak.push_back(net.usage(l, t).peak);
      r.busy.push_back(net.usage(l, t).busy);
    }
    r.amount.push_back(net.usage(l).amount);
    r.peak.push_back(net.usage(l).peak);
    r.busy.push_back(net.usage(l).busy);
    r.history.push_back(net.rate_history(l));
  }
  return r;
}

TEST(FairShareBatch, BatchesGiveExactlyWhatOneByOneGives) {
  // Same completions (times to the picosecond, ids, order), the same usage in all and per tag,
  // and the same rate history, bit for bit.
  const Replay one = replay(false), batched = replay(true);
  EXPECT_EQ(batched.done, one.done);
  EXPECT_EQ(batched.amount, one.amount);
  EXPECT_EQ(batched.peak, one.peak);
  EXPECT_EQ(batched.busy, one.busy);
  EXPECT_EQ(batched.history, one.history);
  EXPECT_EQ(one.done.size(), 11u);
}

}  // namespace
}  // namespace orrery::engine
