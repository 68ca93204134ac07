// Conservation in flow mode, over random flows on random paths (fixed seeds): every flow started
// is delivered once, no sooner than its bottleneck link allows, and every link carries exactly
// the bytes of the flows that cross it. The simulators' Result does not expose bytes sent and
// received (only the flows started and the hottest links), so the property is checked on the
// engine's fair sharing every flow-mode transfer runs on (engine/fair_share.h).
#include "engine/fair_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "random_inputs.h"

namespace orrery::engine {
namespace {

struct PlannedFlow {
  std::vector<ResourceId> path;
  double bytes = 0;
  Time start;
  uint32_t tag = 0;
};

TEST(FlowNetworkProperties, EveryByteSentIsCarriedAndDelivered) {
  // 200 random networks of 2 to 40 links (1 MB/s to 100 GB/s) and 1 to 60 flows each (1 B to
  // 1 GB, on 1 to 6 distinct links, started at random times, in 1 to 3 tags) / each flow
  // completes exactly once, not before start + bytes / its slowest link, and each link's bytes
  // (in all and per tag) are the bytes of the flows that cross it, because max-min sharing only
  // divides capacity among flows, it neither loses nor makes traffic. Completions are rounded up
  // to the picosecond, so a link may carry up to a picosecond's worth more per flow.
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    testing::Draw draw(seed);
    const auto links = static_cast<size_t>(draw.between(2, 40));
    std::vector<double> capacity(links);
    for (double& c : capacity)
      c = draw.log_between(1e6, 1e11);
    const auto tags = static_cast<uint32_t>(draw.between(1, 3));
    std::vector<PlannedFlow> planned(static_cast<size_t>(draw.between(1, 60)));
    for (PlannedFlow& f : planned) {
      std::vector<ResourceId> all(links);
      for (size_t l = 0; l < links; ++l)
        all[l] = static_cast<ResourceId>(l);
      const auto hops = std::min<size_t>(links, static_cast<size_t>(draw.between(1, 6)));
      for (size_t k = 0; k < hops; ++k) {  // distinct links, in random order
        std::swap(
            all[k],
            all[k + static_cast<size_t>(draw.between(0, static_cast<int64_t>(links - k) - 1))]);
        f.path.push_back(all[k]);
      }
      f.bytes = draw.chance(0.05) ? 0 : std::floor(draw.log_between(1, 1e9));
      f.start = Time::from_seconds(draw.chance(0.3) ? 0 : draw.log_between(1e-6, 1.0));
      f.tag = static_cast<uint32_t>(draw.between(0, tags - 1));
    }
    std::stable_sort(planned.begin(), planned.end(),
                     [](const PlannedFlow& a, const PlannedFlow& b) { return a.start < b.start; });

    FairShare net(capacity);
    net.set_tags(tags);
    std::map<FairShare::ActivityId, size_t> in_flight;  // id -> planned index
    std::vector<Time> done_at(planned.size(), Time::max());
    std::vector<int> completions(planned.size(), 0);
    std::vector<FairShare::ActivityId> done;
    size_t next = 0;
    Time now = Time::zero();
    while (next < planned.size() || !in_flight.empty()) {
      const Time completion = net.next_completion();
      if (next < planned.size() && planned[next].start <= completion) {
        now = planned[next].start;
        const FairShare::ActivityId id =
            net.start(planned[next].path, planned[next].bytes, now, planned[next].tag);
        ASSERT_EQ(in_flight.count(id), 0u) << "seed " << seed;
        in_flight[id] = next++;
        continue;
      }
      ASSERT_NE(completion, Time::max()) << "seed " << seed << ": flows in flight never end";
      now = completion;
      done.clear();
      net.complete(now, done);
      for (const FairShare::ActivityId id : done) {
        const auto it = in_flight.find(id);
        ASSERT_NE(it, in_flight.end()) << "seed " << seed << ": flow " << id << " ended twice";
        ++completions[it->second];
        done_at[it->second] = now;
        in_flight.erase(it);
      }
    }
    net.flush_usage(now);

    std::vector<double> expected(links, 0);
    std::vector<std::vector<double>> expected_tag(tags, std::vector<double>(links, 0));
    std::vector<int64_t> flows_on(links, 0);
    for (size_t i = 0; i < planned.size(); ++i) {
      const PlannedFlow& f = planned[i];
      EXPECT_EQ(completions[i], 1) << "seed " << seed << ", flow " << i;
      double slowest = std::numeric_limits<double>::infinity();
      for (const ResourceId l : f.path) {
        expected[l] += f.bytes;
        expected_tag[f.tag][l] += f.bytes;
        ++flows_on[l];
        slowest = std::min(slowest, capacity[l]);
      }
      EXPECT_GE(done_at[i], f.start + Time::from_seconds(f.bytes / slowest) - Time::from_ps(1))
          << "seed " << seed << ", flow " << i << " faster than its slowest link";
    }
    // A link carries every byte of its flows, to the rounding of its sums of rate x time (seen:
    // a relative 8e-12), and at most a picosecond's worth more per flow: each completion is
    // rounded up to the picosecond.
    const auto expect_carried = [&](double carried, double sent, double flows, double rate,
                                    const std::string& what) {
      EXPECT_GE(carried, sent * (1 - 1e-9)) << "seed " << seed << ", " << what;
      EXPECT_LE(carried, sent * (1 + 1e-9) + flows * rate * 1e-12)
          << "seed " << seed << ", " << what;
    };
    for (size_t l = 0; l < links; ++l) {
      const auto link = static_cast<ResourceId>(l);
      expect_carried(net.usage(link).amount, expected[l], static_cast<double>(flows_on[l]),
                     capacity[l], "link " + std::to_string(l));
      for (uint32_t t = 0; t < tags; ++t)
        expect_carried(net.usage(link, t).amount, expected_tag[t][l],
                       static_cast<double>(flows_on[l]), capacity[l],
                       "link " + std::to_string(l) + ", tag " + std::to_string(t));
    }
  }
}

}  // namespace
}  // namespace orrery::engine
