#include "training/flow_simulator.h"

#include <gtest/gtest.h>

#include "synthetic_workloads.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

using testing::comm;
using testing::layer;
using testing::ms;
using testing::test_cluster;
using testing::uniform_workload;

Result run_flow(const Workload& w, const Cluster& c = test_cluster(), SimulationOptions o = {}) {
  Diagnostics d;
  return FlowSimulator().simulate(w, c, o, d);
}

Result run_event(const Workload& w, const Cluster& c = test_cluster(), SimulationOptions o = {}) {
  Diagnostics d;
  return EventSimulator().simulate(w, c, o, d);
}

void expect_partitioned(const Result& r) {
  for (const StageTiming& s : r.stages)
    EXPECT_EQ(s.breakdown.total(), s.finish) << "stage " << s.stage;
  EXPECT_EQ(r.breakdown.total(), r.iteration_time);
}

TEST(FlowSimulator, UncontendedPipelineEqualsTheEventMode) {
  // 4 stages on 4 servers (tp 8), 8 micro-batches, 8 MB transfers on their own NIC pairs:
  // nothing shares a link, so every rank sees the event mode's timeline.
  Workload w = uniform_workload(4, 8, 2, layer("l", ms(1), ms(1), ms(0.5)), 1, 8, 32);
  w.stage_boundary_bytes = 8'000'000;
  const Result flow = run_flow(w), event = run_event(w);
  EXPECT_EQ(flow.iteration_time, event.iteration_time);
  EXPECT_EQ(flow.breakdown.bubble, event.breakdown.bubble);
  EXPECT_EQ(flow.breakdown.p2p, event.breakdown.p2p);
  expect_partitioned(flow);
  EXPECT_GT(flow.flows, 0);
}

TEST(FlowSimulator, TensorParallelRingsEqualTheirAnalyticalCost) {
  // One stage, tp 8 in a server: every collective a ring of 8 on the switch, alone.
  Layer l = layer("l", ms(1), ms(1), ms(1));
  l.forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, 64'000'000);
  l.input_grad.comm = comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, 64'000'000);
  const Workload w = uniform_workload(1, 2, 3, l, 1, 8, 8);
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(w, test_cluster(), ring), event = run_event(w, test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, event.iteration_time);
  EXPECT_EQ(flow.breakdown.exposed_comm.at(CommGroup::Tensor),
            event.breakdown.exposed_comm.at(CommGroup::Tensor));
  expect_partitioned(flow);
}

// Servers of 8 GPUs, 8 rails of 25 GB/s, pods of 2 servers with 2:1 oversubscribed uplinks.
Cluster pods_of_two() {
  Cluster c = test_cluster();
  std::vector<Dimension> dims = c.network.dimensions();
  dims[1].servers_per_leaf = 2;
  dims[1].oversubscription = 2;
  c.network = Topology(dims);
  return c;
}

// tp 8, dp 3: three servers, one large data-parallel all-reduce per iteration.
Workload reduction_job(const std::string& name) {
  Layer l = layer("l", ms(1), ms(1), ms(1));
  l.weight_grad.comm = comm(CollectiveKind::AllReduce, CommGroup::Data, 300'000'000);
  Workload w = uniform_workload(1, 1, 1, l, 1, 8, 24);
  w.name = name;
  return w;
}

TEST(FlowSimulator, TwoJobsOnOneNetworkContend) {
  // Job A on servers 0-2 and job B on servers 3-5: A's ring crosses from pod 1 (server 2) back to
  // pod 0, B's from pod 1 (server 3) to pod 2; both use pod 1's oversubscribed uplinks, so each
  // job is slower beside the other than alone.
  const Cluster c = pods_of_two();
  const Workload a = reduction_job("a"), b = reduction_job("b");
  const Result a_alone = run_flow(a, c), b_alone = run_flow(b, c);
  Diagnostics d;
  const Workload* both[] = {&a, &b};
  const std::vector<Result> together = FlowSimulator().simulate_jobs(both, c, {}, d);
  ASSERT_EQ(together.size(), 2u);
  EXPECT_GT(together[0].iteration_time, a_alone.iteration_time);
  EXPECT_GT(together[1].iteration_time, b_alone.iteration_time);
  EXPECT_GT(together[0].breakdown.exposed_comm.at(CommGroup::Data),
            a_alone.breakdown.exposed_comm.at(CommGroup::Data));
  for (const Result& r : together)
    expect_partitioned(r);
  ASSERT_FALSE(together[0].hottest_links.empty());
  EXPECT_DOUBLE_EQ(together[0].hottest_links.front().peak_utilization, 1.0);
}

TEST(FlowSimulator, JobsMustFitTheNetwork) {
  Cluster c = test_cluster();
  std::vector<Dimension> dims = c.network.dimensions();
  dims[1].size = 2;  // 16 GPUs in all
  c.network = Topology(dims);
  const Workload a = reduction_job("a");  // 24 GPUs
  EXPECT_THROW(run_flow(a, c), InputError);
}

}  // namespace
}  // namespace orrery
