// ASTRA-sim's network YAML and system JSON, written here from ASTRA-sim 2.0's documented schema,
// read and mapped onto Orrery's cluster (docs/astra-sim.md).
#include <gtest/gtest.h>

#include <string>

#include "cluster/astra_sim_system.h"
#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "network/collective_model.h"

namespace orrery {
namespace {

constexpr const char* kTwoDimensions = R"(topology: [ Ring, Switch ]
npus_count: [ 4, 2 ]
bandwidth: [ 50.0, 25.0 ]
latency: [ 500.0, 1000.0 ]
)";

constexpr const char* kSystem = R"({
  "scheduling-policy": "LIFO",
  "endpoint-delay": 10,
  "active-chunks-per-dimension": 1,
  "preferred-dataset-splits": 4,
  "all-reduce-implementation": ["ring", "ring"],
  "all-gather-implementation": ["ring", "ring"],
  "reduce-scatter-implementation": ["ring", "ring"],
  "all-to-all-implementation": ["direct", "direct"],
  "local-mem-bw": 1600
})";

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// A two-dimensional network / a ring of 4 inside a switch of 2, 50 and 25 GiB/s per link
// (ASTRA-sim's GB/s are 2^30 bytes), 500 and 1000 ns, ideal links, because the lists are read
// per dimension, innermost first.
TEST(AstraSimNetwork, ListsBecomeDimensions) {
  const Cluster c = parse_cluster_yaml(kTwoDimensions, "net.yml");
  ASSERT_EQ(c.network.size(), 2u);
  EXPECT_EQ(c.network[0].kind, DimensionKind::Ring);
  EXPECT_EQ(c.network[1].kind, DimensionKind::Switch);
  EXPECT_EQ(c.network[0].size, 4);
  EXPECT_EQ(c.network[1].size, 2);
  EXPECT_DOUBLE_EQ(c.network[0].link_bandwidth.in_bytes_per_second(), 50.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(c.network[1].link_bandwidth.in_bytes_per_second(), 25.0 * 1073741824.0);
  EXPECT_EQ(c.network[0].latency, Time::from_ns(500));
  EXPECT_EQ(c.network[1].latency, Time::from_ns(1000));
  EXPECT_TRUE(c.network.ideal_links());
  EXPECT_EQ(c.network.capacity(), 8);
  EXPECT_TRUE(c.warnings.empty());
}

// FullyConnected / a mesh, because every pair of NPUs has its own link in both.
TEST(AstraSimNetwork, FullyConnectedIsAMesh) {
  const Cluster c = parse_cluster_yaml(
      "topology: [ FullyConnected ]\nnpus_count: [ 8 ]\nbandwidth: [ 100 ]\nlatency: [ 0 ]\n",
      "net.yml");
  EXPECT_EQ(c.network[0].kind, DimensionKind::Mesh);
}

// Bad input / one line naming the file, the line and what was expected.
TEST(AstraSimNetwork, ErrorsNameTheLine) {
  EXPECT_EQ(error_of([] {
              parse_cluster_yaml(
                  "topology: [ Ring, Torus ]\nnpus_count: [ 4, 2 ]\n"
                  "bandwidth: [ 1, 1 ]\nlatency: [ 1, 1 ]\n",
                  "net.yml");
            }),
            "net.yml:1: expected Ring, FullyConnected or Switch, found 'Torus'");
  EXPECT_EQ(error_of([] {
              parse_cluster_yaml(
                  "topology: [ Ring ]\nnpus_count: [ 4, 2 ]\n"
                  "bandwidth: [ 1 ]\nlatency: [ 1 ]\n",
                  "net.yml");
            }),
            "net.yml:2: expected 1 entries in 'npus_count' (one per entry of 'topology'), found 2");
  EXPECT_EQ(error_of([] {
              parse_cluster_yaml("topology: [ Ring ]\nnpus_count: [ 4 ]\nlatency: [ 1 ]\n",
                                 "net.yml");
            }),
            "net.yml:1: expected 'bandwidth' in the ASTRA-sim network");
}

// A key ASTRA-sim's schema has that Orrery does not use / a warning naming it, not an error.
TEST(AstraSimNetwork, UnknownKeysAreWarnedOfByName) {
  const Cluster c =
      parse_cluster_yaml(std::string(kTwoDimensions) + "links_count: [ 2, 1 ]\n", "net.yml");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("'links_count'"), std::string::npos) << c.warnings[0];
}

// 4 chunks, 1 active: every hop's latency is paid 4 times, with the 10 ns endpoint delay each
// time: (500 + 10) x 4 = 2,040 ns on the ring and (1000 + 10) x 4 = 4,040 ns on the switch. The
// ring implementation on the ring dimension sends one way: 25 GiB/s per direction; the switch
// keeps its 25. Ring on two dimensions is Orrery's hierarchical ring, because ASTRA-sim runs a
// multi-dimensional collective dimension by dimension.
TEST(AstraSimSystem, ChunksAndOneWayRingsMapOntoTheCluster) {
  Cluster c = parse_cluster_yaml(kTwoDimensions, "net.yml");
  AstraSimSystem s = parse_astra_sim_system(kSystem, "sys.json");
  EXPECT_EQ(s.dataset_splits, 4);
  EXPECT_EQ(s.active_chunks, 1);
  EXPECT_EQ(s.endpoint_delay, Time::from_ns(10));
  const auto algorithm = apply_astra_sim_system(s, c, "sys.json");
  EXPECT_FALSE(algorithm);  // all-to-all names direct, the others ring: Orrery picks its own
  EXPECT_EQ(c.network[0].latency, Time::from_ns(2040));
  EXPECT_EQ(c.network[1].latency, Time::from_ns(4040));
  EXPECT_DOUBLE_EQ(c.network[1].link_bandwidth.in_bytes_per_second(), 25.0 * 1073741824.0);
}

TEST(AstraSimSystem, OneImplementationEverywhereIsTheAlgorithm) {
  std::string text = kSystem;
  text.replace(text.find("[\"direct\", \"direct\"]"), 20, "[\"ring\", \"ring\"]");
  Cluster c = parse_cluster_yaml(kTwoDimensions, "net.yml");
  AstraSimSystem s = parse_astra_sim_system(text, "sys.json");
  EXPECT_EQ(apply_astra_sim_system(s, c, "sys.json"), Algorithm::Hierarchical);
  EXPECT_DOUBLE_EQ(c.network[0].link_bandwidth.in_bytes_per_second(), 25.0 * 1073741824.0);
}

// Keys with no counterpart / warned of by name, never dropped silently; local-mem-bw is used, so
// not warned of.
TEST(AstraSimSystem, IgnoredKeysAreWarnedOfByName) {
  const AstraSimSystem s = parse_astra_sim_system(kSystem, "sys.json");
  std::string all;
  for (const std::string& w : s.warnings)
    all += w + "\n";
  EXPECT_EQ(all.find("'local-mem-bw'"), std::string::npos) << all;
  EXPECT_NE(all.find("'scheduling-policy'"), std::string::npos) << all;
}

// local-mem-bw 1600 (GB/s, 10^9 B/s) becomes the memory reductions run through: a ring
// reduce-scatter of 1 MiB on the ring of 4 pays 3 x 3/4 x 2^20 B / 1.6e12 B/s = 1,474,560 ps
// more than without it (network/local_reduction.h), an all-gather nothing more, because only
// reducing collectives combine received data.
TEST(AstraSimSystem, LocalMemoryBandwidthChargesReductions) {
  const AstraSimSystem s = parse_astra_sim_system(kSystem, "sys.json");
  ASSERT_TRUE(s.local_memory);
  EXPECT_DOUBLE_EQ(s.local_memory->in_bytes_per_second(), 1.6e12);
  Cluster with = parse_cluster_yaml(kTwoDimensions, "net.yml");
  AstraSimSystem copy = s;
  apply_astra_sim_system(copy, with, "sys.json");
  ASSERT_TRUE(with.network.reduction_memory());
  Cluster without = with;
  without.network.set_reduction_memory(std::nullopt);
  const auto time = [](const Cluster& c, CollectiveKind kind) {
    const LinkGraph links(c.network, 8);
    const CollectiveModel model(links, {{0, 1, 2, 3}});
    return model.time(Algorithm::Ring, kind, Bytes{1} << 20).value();
  };
  EXPECT_EQ(
      time(with, CollectiveKind::ReduceScatter) - time(without, CollectiveKind::ReduceScatter),
      Time::from_ps(1'474'560));
  EXPECT_EQ(time(with, CollectiveKind::AllGather), time(without, CollectiveKind::AllGather));
  EXPECT_NE(error_of([] { parse_astra_sim_system("{\n\"local-mem-bw\": 0}", "s.json"); }),
            "(no error)");
}

TEST(AstraSimSystem, ErrorsNameTheLine) {
  EXPECT_EQ(error_of([] {
              parse_astra_sim_system("{\n  \"preferred-dataset-splits\": 0\n}", "sys.json");
            }),
            "sys.json:2: 'preferred-dataset-splits': expected an integer from 1 to 4096, found 0");
  EXPECT_NE(error_of([] {
              parse_astra_sim_system("{\n  \"endpoint-delay\": ,\n}", "sys.json");
            }).find("sys.json:2: expected ASTRA-sim's system JSON"),
            std::string::npos);
  Cluster c = parse_cluster_yaml(kTwoDimensions, "net.yml");
  AstraSimSystem s =
      parse_astra_sim_system("{\"all-reduce-implementation\": [\"ring\"]}", "s.json");
  EXPECT_EQ(error_of([&] { apply_astra_sim_system(s, c, "s.json"); }),
            "s.json: expected one implementation per network dimension (2), found 1");
}

}  // namespace
}  // namespace orrery
