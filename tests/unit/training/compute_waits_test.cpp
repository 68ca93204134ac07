// How a gap on a stage's compute stream is charged (training/compute_waits.h): each kind of cause,
// with the split derived by hand. The compute before the gap ended at 10 us; the gap is 6 us.
#include "training/compute_waits.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

Time us(int64_t v) {
  return Time::from_ns(v * 1000);
}

const Time kPrevious = us(10), kGap = us(6);

StageTask task(StageTaskKind kind, CommGroup group = CommGroup::Data) {
  StageTask t;
  t.kind = kind;
  t.comm.group = group;
  return t;
}

// The embedding all-reduce (joins stages) ran 12 -> 16 us: 4 us exposed, the 2 us before it
// (waiting for the other stage to reach it) bubble.
TEST(ComputeWaits, CollectiveJoiningStagesSplitsIntoExposedAndBubble) {
  const StageTask c = task(StageTaskKind::Collective, CommGroup::Embedding);
  Breakdown b;
  charge_wait(b, kGap, kPrevious, {&c, us(12), us(16)});
  EXPECT_EQ(b.exposed_comm[CommGroup::Embedding], us(4));
  EXPECT_EQ(b.bubble, us(2));
  // Started before the compute ended (8 -> 16 us): only the 6 us after it count, all exposed.
  Breakdown early;
  charge_wait(early, kGap, kPrevious, {&c, us(8), us(16)});
  EXPECT_EQ(early.exposed_comm[CommGroup::Embedding], us(6));
  EXPECT_EQ(early.bubble, Time::zero());
}

// A data-parallel all-reduce is charged the whole gap, however long it ran.
TEST(ComputeWaits, OtherCollectiveIsExposedForTheWholeGap) {
  const StageTask c = task(StageTaskKind::Collective, CommGroup::Data);
  Breakdown b;
  charge_wait(b, kGap, kPrevious, {&c, us(15), us(16)});
  EXPECT_EQ(b.exposed_comm[CommGroup::Data], us(6));
  EXPECT_EQ(b.bubble, Time::zero());
}

// A transfer in flight 13 -> 16 us: 3 us p2p, 3 us bubble (the sender was still busy).
TEST(ComputeWaits, TransferSplitsIntoP2pAndBubble) {
  const StageTask t = task(StageTaskKind::Transfer);
  Breakdown b;
  charge_wait(b, kGap, kPrevious, {&t, us(13), us(16)});
  EXPECT_EQ(b.p2p, us(3));
  EXPECT_EQ(b.bubble, us(3));
}

TEST(ComputeWaits, ComputeOrNothingIsBubble) {
  const StageTask c = task(StageTaskKind::Compute);
  Breakdown b;
  charge_wait(b, kGap, kPrevious, {&c, us(11), us(16)});
  charge_wait(b, kGap, kPrevious, {});
  EXPECT_EQ(b.bubble, us(12));
  EXPECT_EQ(b.total(), us(12));
}

}  // namespace
}  // namespace orrery
