#include "engine/task_graph.h"

#include <gtest/gtest.h>

#include <vector>

namespace orrery::engine {
namespace {

Time us(int64_t v) {
  return Time::from_us(v);
}

TEST(TaskGraph, StreamRunsItsTasksInOrder) {
  TaskGraph g;
  const StreamId s = g.add_stream();
  const TaskId a = g.add_task(s, us(3));
  const TaskId b = g.add_task(s, us(2));
  const Timeline t = simulate(g);
  EXPECT_EQ(t.start[a], us(0));
  EXPECT_EQ(t.start[b], us(3));
  EXPECT_EQ(t.makespan, us(5));
}

TEST(TaskGraph, DependencyAcrossStreamsDelaysTheStart) {
  // compute: A(4) then C(1); comm: B(10) depends on A; C depends on B.
  //   A [0,4)  B [4,14)  C [14,15)
  TaskGraph g;
  const StreamId compute = g.add_stream(), comm = g.add_stream();
  const TaskId a = g.add_task(compute, us(4));
  const TaskId b = g.add_task(comm, us(10));
  const TaskId c = g.add_task(compute, us(1));
  g.add_dependency(a, b);
  g.add_dependency(b, c);
  const Timeline t = simulate(g);
  EXPECT_EQ(t.start[b], us(4));
  EXPECT_EQ(t.start[c], us(14));
  EXPECT_EQ(t.makespan, us(15));
}

TEST(TaskGraph, IndependentStreamsOverlap) {
  // Async comm on its own stream overlaps later compute: makespan is max, not sum.
  TaskGraph g;
  const StreamId compute = g.add_stream(), comm = g.add_stream();
  const TaskId a = g.add_task(compute, us(2));
  const TaskId b = g.add_task(comm, us(5));
  g.add_task(compute, us(4));
  g.add_dependency(a, b);
  EXPECT_EQ(simulate(g).makespan, us(7));
}

TEST(TaskGraph, HeadOfStreamBlocksLaterReadyTasks) {
  // Stream order is respected even when a later task is ready first (in-order streams).
  TaskGraph g;
  const StreamId s1 = g.add_stream(), s2 = g.add_stream();
  const TaskId slow = g.add_task(s2, us(10));
  const TaskId waits = g.add_task(s1, us(1));
  const TaskId ready = g.add_task(s1, us(1));
  g.add_dependency(slow, waits);
  const Timeline t = simulate(g);
  EXPECT_EQ(t.start[waits], us(10));
  EXPECT_EQ(t.start[ready], us(11));
}

TEST(TaskGraph, CycleThroughStreamOrderIsReportedNotHung) {
  TaskGraph g;
  const StreamId s1 = g.add_stream(), s2 = g.add_stream();
  const TaskId a1 = g.add_task(s1, us(1));
  const TaskId a2 = g.add_task(s1, us(1));
  const TaskId b1 = g.add_task(s2, us(1));
  g.add_dependency(a2, b1);  // b1 waits for a2, which waits for a1 (stream order)
  g.add_dependency(b1, a1);  // a1 waits for b1: deadlock
  EXPECT_THROW(simulate(g), std::logic_error);
}

// GraphStreams: a task's successors as its dependencies name them, each stream's tasks in order,
// and after a run the first stream's task that never started. a1 waits for b1, which waits for
// a2 (after a1 on its stream): nothing on stream s1 can start, so a1 is stuck; s2's b1 is not
// ready either. In a graph with no such cycle, running every stream leaves nothing stuck.
TEST(GraphStreams, ReleasesSuccessorsAndNamesTheStuckTask) {
  TaskGraph g;
  const StreamId s1 = g.add_stream(), s2 = g.add_stream();
  const TaskId a1 = g.add_task(s1, us(1));
  const TaskId a2 = g.add_task(s1, us(1));
  const TaskId b1 = g.add_task(s2, us(1));
  g.add_dependency(a2, b1);
  g.add_dependency(b1, a1);
  GraphStreams stuck(g);
  EXPECT_EQ(std::vector<TaskId>(stuck.successors().of(a2).begin(), stuck.successors().of(a2).end()),
            std::vector<TaskId>{b1});
  EXPECT_EQ(stuck.streams().ready(s1), InOrderStreams::kNone);
  EXPECT_EQ(stuck.streams().ready(s2), InOrderStreams::kNone);
  EXPECT_EQ(stuck.stuck(), a1);

  TaskGraph ok;
  const StreamId s = ok.add_stream();
  const TaskId first = ok.add_task(s, us(1));
  const TaskId second = ok.add_task(s, us(1));
  GraphStreams run(ok);
  for (const TaskId expected : {first, second}) {
    ASSERT_EQ(run.streams().ready(s), expected);
    run.streams().start(s);
    run.streams().finish(s);
  }
  EXPECT_EQ(run.stuck(), InOrderStreams::kNone);
}

TEST(TaskGraph, ZeroDurationTasksAndDeterministicTies) {
  TaskGraph g;
  const StreamId s = g.add_stream();
  for (int i = 0; i < 100; ++i)
    g.add_task(s, Time::zero());
  EXPECT_EQ(simulate(g).makespan, Time::zero());
}

TEST(TaskGraph, CostDoesNotGrowWithSimulatedTime) {
  // A day-long task is one event, like a nanosecond one.
  TaskGraph g;
  g.add_task(g.add_stream(), Time::from_seconds(86400));
  EXPECT_EQ(simulate(g).makespan, Time::from_seconds(86400));
}

}  // namespace
}  // namespace orrery::engine
