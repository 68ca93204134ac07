#include "training/flow_simulator.h"

#include <gtest/gtest.h>

#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "synthetic_workloads.h"
#include "training/event_simulator.h"

namespace orrery {
namespace {

using testing::add_iteration_row;
using testing::comm;
using testing::layer;
using testing::ms;
using testing::parameter_gather_row;
using testing::test_cluster;
using testing::three_chunk_workload;
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

// The collectives Transformer Engine runs beside their GEMMs are folded into the phases' compute
// before any mode runs: flow mode gives the event mode's 575 us (EventSimulator.
// CollectivesBesideTheirGemmsCostThePipelineOfChunks).
TEST(FlowSimulator, CollectivesBesideTheirGemmsAsInTheEventMode) {
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(testing::gemm_overlap_workload(), test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, Time::from_us(575));
  expect_partitioned(flow);
}

// The embedding group's members run different programs (stage 0's and stage 1's): they meet at
// their first collective of the group, and the eight pairs' rings, each on its own NICs, take
// what the event mode charges (testing::end_stages_workload: both stages end at 5.32 ms).
TEST(FlowSimulator, CollectivesJoiningStagesMeetAcrossPrograms) {
  const Workload w = testing::end_stages_workload();
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(w, test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, ms(5.32));
  const Result event = run_event(w, test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, event.iteration_time);
  EXPECT_EQ(flow.stages[1].breakdown.bubble, event.stages[1].breakdown.bubble);
  expect_partitioned(flow);
}

// overlap_param_gather's buckets run as flows: one stage of 4 layers (1 ms each way), dp = 2
// across servers, a 400 MB parameter all-gather in 100 MB buckets of 2 ms (1/2 x 100 MB /
// 25 GB/s on each GPU's own NIC): the first exposed whole, each next 1 ms longer than the layer
// it overlaps, 2 x 4 x 3 + 2 + 3 x 1 = 29 ms, as in the event mode.
TEST(FlowSimulator, ParameterGatherBucketsRunAsFlows) {
  Workload w = uniform_workload(1, 2, 4, layer("l", ms(1), ms(1), ms(1)), 1, 8, 16);
  add_iteration_row(w, parameter_gather_row(400'000'000));
  w.param_gather_bucket_bytes = 100'000'000;
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(w, test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, ms(29));
  EXPECT_EQ(flow.breakdown.exposed_comm.at(CommGroup::Data), ms(5));
  expect_partitioned(flow);
}

// The aligned launch as flows: one stage of three model chunks (vpp 3), one 1 ms layer each way
// per chunk, dp = 2 across servers, a 300 MB parameter all-gather in one 2 ms bucket per chunk:
// buckets 0 and 1 at the start, bucket 2 as chunk 1's forward starts; the forwards wait 2, 1 and
// 1 ms: 9 + 4 = 13 ms, as in the event mode
// (EventSimulator.AlignedParameterGatherLaunchesEachChunkFromTheSchedule).
TEST(FlowSimulator, AlignedParameterGatherRunsAsFlows) {
  Workload w = three_chunk_workload();
  add_iteration_row(w, parameter_gather_row(300'000'000));
  w.param_gather_bucket_bytes = 100'000'000;
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(w, test_cluster(), ring);
  EXPECT_EQ(flow.iteration_time, ms(13));
  EXPECT_EQ(flow.breakdown.exposed_comm.at(CommGroup::Data), ms(4));
  expect_partitioned(flow);
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
  const std::vector<Result> together =
      FlowSimulator().simulate_jobs(both, c, {}, std::vector<Diagnostics*>{&d, &d});
  ASSERT_EQ(together.size(), 2u);
  EXPECT_GT(together[0].iteration_time, a_alone.iteration_time);
  EXPECT_GT(together[1].iteration_time, b_alone.iteration_time);
  EXPECT_GT(together[0].breakdown.exposed_comm.at(CommGroup::Data),
            a_alone.breakdown.exposed_comm.at(CommGroup::Data));
  for (const Result& r : together)
    expect_partitioned(r);
  // Link statistics are each job's own: job A (servers 0-2, pods 0 and 1) never lists a NIC of
  // servers 3-5 or a leaf of pod 2 (leaf index = rail x 3 pods + pod), job B (servers 3-5,
  // pods 1 and 2) none of servers 0-2 or of pod 0.
  const auto foreign = [](const std::string& name, int job) {
    for (int server = 0; server < 6; ++server)
      if ((server < 3) != (job == 0) &&
          name.find("server " + std::to_string(server) + " ") != std::string::npos)
        return true;
    const auto leaf = name.find("leaf ");
    if (leaf == std::string::npos) return false;
    const int pod = std::stoi(name.substr(leaf + 5)) % 3;
    return job == 0 ? pod == 2 : pod == 0;
  };
  for (int job = 0; job < 2; ++job) {
    ASSERT_FALSE(together[job].hottest_links.empty());
    for (const LinkUsage& l : together[job].hottest_links)
      EXPECT_FALSE(foreign(l.name, job)) << "job " << job << ": " << l.name;
    EXPECT_GT(together[job].flows, 0);
  }
  // Each job started as many flows as alone.
  EXPECT_EQ(together[0].flows, a_alone.flows);
  EXPECT_EQ(together[1].flows, b_alone.flows);
}

TEST(FlowSimulator, DataParallelRingsOfOneJobShareTheirNics) {
  // 4 rails on 8-GPU servers (GPUs 2r and 2r + 1 share rail r's 25 GB/s NIC); tp 4, dp 4 on two
  // servers: data-parallel group p holds GPUs p and p + 4 of each server, on rails p/2 and
  // p/2 + 2, and groups p and p ^ 1 reduce at the same time over the same two NICs. The event
  // mode charges each group its share, one NIC's worth (half of each of its two rails): 2 x 3/4 x
  // 300 MB / 25 GB/s = 18 ms; in flow mode the four groups contend and take as long.
  Cluster c = test_cluster();
  std::vector<Dimension> dims = c.network.dimensions();
  dims[1].rails = 4;
  c.network = Topology(dims);
  c.network.set_ideal_links(true);
  Layer l = layer("l", ms(1), ms(1), ms(1));
  l.weight_grad.comm = comm(CollectiveKind::AllReduce, CommGroup::Data, 300'000'000);
  const Workload w = uniform_workload(1, 1, 1, l, 1, 4, 16);
  SimulationOptions ring;
  ring.algorithm = Algorithm::Ring;
  const Result flow = run_flow(w, c, ring), event = run_event(w, c, ring);
  EXPECT_EQ(event.breakdown.exposed_comm.at(CommGroup::Data), ms(18));
  EXPECT_NEAR(static_cast<double>(flow.iteration_time.ps()),
              static_cast<double>(event.iteration_time.ps()), 1e4);
  // Alone (one group of the four), a group has both NICs to itself: twice as fast.
  // 2 x 3/4 x 300 MB / (2 x 25 GB/s) = 9 ms.
  const LinkGraph links(c.network, 16);
  const CollectiveModel alone(links, {{0, 4, 8, 12}});
  EXPECT_EQ(alone.cost(CollectiveKind::AllReduce, 300'000'000, Algorithm::Ring).time, ms(9));
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
