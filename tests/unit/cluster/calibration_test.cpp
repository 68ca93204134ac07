// The cluster writer (every preset reads back as it was) and calibrate() on measurements made
// by the model itself with known parameters.
#include "cluster/calibration.h"

#include <gtest/gtest.h>

#include <numeric>

#include "cluster/cluster_presets.h"
#include "cluster/cluster_writer.h"
#include "core/diagnostics.h"
#include "network/collective_model.h"
#include "network/link_graph.h"

namespace orrery {
namespace {

void expect_same_network(const Topology& a, const Topology& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t d = 0; d < a.size(); ++d) {
    const Dimension &x = a[d], &y = b[d];
    EXPECT_EQ(x.name, y.name) << what;
    EXPECT_EQ(x.kind, y.kind) << what;
    EXPECT_EQ(x.size, y.size) << what;
    EXPECT_EQ(x.link_bandwidth, y.link_bandwidth) << what << " " << x.name;
    EXPECT_EQ(x.latency, y.latency) << what << " " << x.name;
    EXPECT_EQ(x.base_latency, y.base_latency) << what << " " << x.name;
    EXPECT_EQ(x.efficiency, y.efficiency) << what << " " << x.name;
    EXPECT_EQ(x.channels, y.channels) << what;
    EXPECT_EQ(x.nvls, y.nvls) << what;
    EXPECT_EQ(x.nvls_efficiency, y.nvls_efficiency) << what;
    EXPECT_EQ(x.nvls_channels, y.nvls_channels) << what;
    EXPECT_EQ(x.rails, y.rails) << what;
    EXPECT_EQ(x.servers_per_leaf, y.servers_per_leaf) << what;
    EXPECT_EQ(x.oversubscription, y.oversubscription) << what;
    EXPECT_EQ(x.rendezvous_latency, y.rendezvous_latency) << what << " " << x.name;
    EXPECT_TRUE(x == y) << what << " " << x.name << ": a field not compared above differs";
  }
  EXPECT_EQ(a.gpu_memory().has_value(), b.gpu_memory().has_value()) << what;
  EXPECT_EQ(a.ideal_links(), b.ideal_links()) << what;
}

TEST(ClusterWriter, EveryPresetReadsBackAsItWas) {
  for (const std::string& name : cluster_preset_names()) {
    const Cluster c = load_cluster(name);
    const std::string yaml = cluster_yaml(c, {"a comment", "", "another"});
    EXPECT_EQ(yaml.rfind("# a comment\n# \n# another\n", 0), 0u) << yaml;
    const Cluster back = parse_cluster_yaml(yaml, name + ".yaml");
    EXPECT_EQ(back.name, c.name);
    EXPECT_EQ(back.description, c.description);
    EXPECT_EQ(back.gpu, c.gpu);
    EXPECT_EQ(back.aliases, c.aliases);
    EXPECT_EQ(back.price_per_gpu_hour, c.price_per_gpu_hour);
    EXPECT_EQ(back.price_source, c.price_source);
    EXPECT_EQ(back.placement, c.placement);
    expect_same_network(back.network, c.network, name);
  }
}

TEST(ClusterWriter, ExactUnits) {
  EXPECT_EQ(format_bandwidth_exact(Bandwidth::gb_per_second(450)), "450 GB/s");
  EXPECT_EQ(format_bandwidth_exact(Bandwidth::gib_per_second(48.5)), "48.5 GiB/s");
  EXPECT_EQ(format_bandwidth_exact(Bandwidth::gbit_per_second(400), true), "400 Gb/s");
  EXPECT_EQ(format_duration_exact(Time::from_ps(3'420'000)), "3.42 us");
  EXPECT_EQ(format_duration_exact(Time::from_ps(3'673'422)), "3.673422 us");
  EXPECT_EQ(format_duration_exact(Time::from_us(14)), "14 us");
  EXPECT_EQ(format_duration_exact(Time::zero()), "0 us");
  EXPECT_EQ(format_duration_exact(Time::from_ps(1)), "0.000001 us");
}

// Measurements of `kind` on the first `ranks` GPUs of `network`, 4 KiB to 4 GiB, as the model
// prices them.
MeasuredSeries measure(const Topology& network, CollectiveKind kind, int64_t ranks) {
  MeasuredSeries s{"synthetic", {"synthetic", 1}, kind, ranks, {}};
  const LinkGraph links(network, ranks);
  std::vector<int64_t> members(static_cast<size_t>(ranks));
  std::iota(members.begin(), members.end(), 0);
  const CollectiveModel model(links, {members});
  for (Bytes b = 4 * kKiB; b <= 4 * kGiB; b *= 4)
    s.points.push_back({b, model.cost(kind, b).time});
  return s;
}

Cluster with_nvswitch(double efficiency, double scale) {
  Cluster c = load_cluster("dgx-a100");
  std::vector<Dimension> dims = c.network.dimensions();
  dims[0].efficiency = efficiency;
  dims[0].latency = dims[0].latency.scaled(scale);
  dims[0].base_latency = dims[0].base_latency.scaled(scale);
  Topology t(dims);
  t.set_gpu_memory(c.network.gpu_memory());
  c.network = t;
  return c;
}

TEST(Calibration, RecoversTheParametersTheMeasurementsWereMadeWith) {
  const Cluster truth = with_nvswitch(0.65, 0.8);
  const Calibration c = calibrate(load_cluster("dgx-a100"),
                                  {measure(truth.network, CollectiveKind::AllGather, 8),
                                   measure(truth.network, CollectiveKind::ReduceScatter, 4)});
  const DimensionFit& f = c.dimensions.at(0);
  EXPECT_TRUE(f.fitted);
  EXPECT_EQ(f.series, 2);
  EXPECT_EQ(f.points, 22);
  EXPECT_NEAR(f.efficiency_after, 0.65, 1e-4);
  EXPECT_NEAR(f.latency_scale, 0.8, 1e-4);
  EXPECT_EQ(f.latency_after, truth.network[0].latency);
  EXPECT_LT(c.overall.after.mape_pct, 1e-3);
  EXPECT_GT(c.overall.before.mape_pct, 5);
  EXPECT_FALSE(c.dimensions.at(1).fitted);
  EXPECT_EQ(c.cluster.network[0].efficiency, 0.65);
  // Ranges, then "all": 4 sizes below 1 MiB, 4 up to 64 MiB, 3 above.
  ASSERT_EQ(c.series.at(0).ranges.size(), 4u);
  EXPECT_EQ(c.series[0].ranges[0].range, "< 1 MiB");
  EXPECT_EQ(c.series[0].ranges[0].before.points, 4);
  EXPECT_EQ(c.series[0].ranges[3].range, "all");
  EXPECT_EQ(c.series[0].ranges[3].after.points, 11);
}

TEST(Calibration, MeasurementsTheClusterAlreadyMatchesChangeNothing) {
  const Cluster c = load_cluster("hgx-h100");
  const Calibration fit = calibrate(c, {measure(c.network, CollectiveKind::AllReduce, 8)});
  EXPECT_EQ(fit.cluster.network[0].efficiency, c.network[0].efficiency);
  EXPECT_EQ(fit.cluster.network[0].latency, c.network[0].latency);
  EXPECT_EQ(fit.overall.after.mape_pct, 0);
}

TEST(Calibration, SeriesThatCannotBePricedAreErrorsAtTheirLine) {
  const Cluster c = load_cluster("hgx-h100");
  MeasuredSeries s = measure(c.network, CollectiveKind::AllReduce, 8);
  s.where = {"a.log", 6};
  s.ranks = 1;
  EXPECT_THROW(calibrate(c, {s}), InputError);
  try {
    calibrate(c, {s});
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "a.log:6: expected a collective of at least 2 GPUs, found 1 (one GPU moves no data)");
  }
  s.ranks = 8;
  s.points.clear();
  EXPECT_THROW(calibrate(c, {s}), InputError);
}

}  // namespace
}  // namespace orrery
