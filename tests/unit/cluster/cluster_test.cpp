#include "cluster/cluster.h"

#include <gtest/gtest.h>

#include "cluster/cluster_presets.h"
#include "core/diagnostics.h"

namespace orrery {
namespace {

constexpr const char* kMinimal = R"(name: tiny
gpus_per_server: 4
scale_up:
  bandwidth: 100 GB/s
scale_out:
  nics_per_server: 2
  nic_bandwidth: 200 Gb/s
)";

std::string error_of(const std::string& yaml) {
  try {
    parse_cluster_yaml(yaml, "c.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Cluster, MinimalFileGetsDocumentedDefaults) {
  const Cluster c = parse_cluster_yaml(kMinimal, "c.yaml");
  EXPECT_EQ(c.name, "tiny");
  EXPECT_EQ(c.gpus_per_server, 4);
  EXPECT_EQ(c.servers, 0);
  EXPECT_EQ(c.scale_up.latency, Time::zero());
  EXPECT_EQ(c.scale_up.efficiency, 1.0);
  EXPECT_EQ(c.placement, (std::vector<std::string>{"tp", "ep", "dp", "pp"}));
  // Per-GPU scale-out bandwidth: 2 NICs x 25 GB/s shared by 4 GPUs.
  EXPECT_DOUBLE_EQ(c.network().scale_out.bandwidth.in_gb_per_second(), 12.5);
}

TEST(Cluster, PresetsMatchTheirDatasheets) {
  const std::vector<std::string> names = cluster_preset_names();
  EXPECT_EQ(names, (std::vector<std::string>{"dgx-a100", "hgx-h100", "simai-default"}));
  const Cluster simai = load_cluster("simai-default");
  EXPECT_DOUBLE_EQ(simai.scale_up.effective().in_gib_per_second(), 360);
  EXPECT_DOUBLE_EQ(simai.nic.effective().in_gib_per_second(), 48.5);
  EXPECT_EQ(simai.gpus_per_server, 8);
  EXPECT_EQ(simai.nics_per_server, 8);
  const Cluster a100 = load_cluster("dgx-a100");
  EXPECT_DOUBLE_EQ(a100.scale_up.bandwidth.in_gb_per_second(), 300);
  EXPECT_DOUBLE_EQ(a100.nic.bandwidth.in_gb_per_second(), 25);  // 200 Gb/s HDR
  const Cluster h100 = load_cluster("hgx-h100");
  EXPECT_DOUBLE_EQ(h100.scale_up.bandwidth.in_gb_per_second(), 450);
  EXPECT_DOUBLE_EQ(h100.nic.bandwidth.in_gb_per_second(), 50);  // 400 Gb/s NDR
}

TEST(Cluster, ErrorsNameTheLineAndTheExpectation) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "colour: blue\n"),
            "c.yaml:8: unknown key 'colour' in the cluster; expected one of: description, gpu, "
            "gpus_per_server, name, placement, scale_out, scale_up, servers");
  std::string bad_bandwidth = kMinimal;
  bad_bandwidth.replace(bad_bandwidth.find("100 GB/s"), 8, "fast");
  EXPECT_EQ(error_of(bad_bandwidth),
            "c.yaml:4: expected a positive bandwidth such as '300 GB/s', found 'fast'");
  std::string no_gpus = kMinimal;
  no_gpus.replace(no_gpus.find("gpus_per_server: 4"), 18, "gpus_per_server: 0");
  EXPECT_EQ(error_of(no_gpus), "c.yaml:2: expected an integer of at least 1, found '0'");
  EXPECT_EQ(error_of(std::string(kMinimal) + "placement: [tp, tp, dp, pp]\n"),
            "c.yaml:8: expected placement to name tp, ep, dp and pp once each, innermost first");
}

TEST(Cluster, UnknownPresetListsTheKnownOnes) {
  try {
    load_cluster("dgx-z900");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--cluster 'dgx-z900': expected a preset (dgx-a100, hgx-h100, "
                 "simai-default) or a YAML file; no such file");
  }
}

TEST(Cluster, PlacementFlag) {
  EXPECT_EQ(parse_placement("ep, tp,dp,pp", "--placement"),
            (std::vector<std::string>{"ep", "tp", "dp", "pp"}));
  EXPECT_THROW(parse_placement("tp,dp,pp", "--placement"), InputError);
}

}  // namespace
}  // namespace orrery
