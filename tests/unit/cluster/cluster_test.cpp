#include "cluster/cluster.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cluster/cluster_presets.h"
#include "core/diagnostics.h"

namespace orrery {
namespace {

constexpr const char* kMinimal = R"(name: tiny
network:
  - kind: switch
    size: 4
    bandwidth: 100 GB/s
  - kind: fat-tree
    size: 0
    rails: 2
    bandwidth: 200 Gb/s
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
  ASSERT_EQ(c.network.size(), 2u);
  EXPECT_EQ(c.network[0].name, "switch");
  EXPECT_EQ(c.gpus_per_server(), 4);
  EXPECT_EQ(c.network[0].latency, Time::zero());
  EXPECT_EQ(c.network[0].efficiency, 1.0);
  EXPECT_EQ(c.network[1].servers_per_leaf, 0);
  EXPECT_EQ(c.network[1].oversubscription, 1.0);
  EXPECT_EQ(c.network[1].rendezvous_latency, Time::zero());
  EXPECT_EQ(c.scale_out(), 1u);
  EXPECT_EQ(c.placement, (std::vector<std::string>{"tp", "ep", "dp", "pp"}));
  // Per-GPU scale-out bandwidth: 2 NICs x 25 GB/s shared by 4 GPUs.
  EXPECT_DOUBLE_EQ(c.network.step_bandwidth(1).in_gb_per_second(), 12.5);
}

TEST(Cluster, TorusExpandsIntoOneRingPerAxis) {
  const Cluster c = parse_cluster_yaml(
      "name: t\nnetwork:\n  - name: ici\n    kind: torus\n    shape: [4, 2, 8]\n    bandwidth: 50 "
      "GB/s\n",
      "t.yaml");
  ASSERT_EQ(c.network.size(), 3u);
  EXPECT_EQ(c.network[1].name, "ici.y");
  EXPECT_EQ(c.network[1].kind, DimensionKind::Ring);
  EXPECT_EQ(c.network[2].size, 8);
  EXPECT_EQ(c.network.capacity(), 64);
}

TEST(Cluster, PresetsMatchTheirDatasheets) {
  EXPECT_EQ(cluster_preset_names(),
            (std::vector<std::string>{"dgx-a100", "gb200-nvl72", "hgx-b200", "hgx-h100",
                                      "hgx-h100-eth200", "hgx-h100-roce400", "hgx-h200", "mi300x",
                                      "simai-default", "tpu-v4"}));
  const Cluster simai = load_cluster("simai-default");
  EXPECT_DOUBLE_EQ(simai.network[0].effective().in_gib_per_second(), 360);
  EXPECT_DOUBLE_EQ(simai.network[1].effective().in_gib_per_second(), 48.5);
  EXPECT_EQ(simai.network[1].rails, 8);
  EXPECT_EQ(simai.network[1].rendezvous_latency, Time::zero());  // SimAI's numbers stay its own
  for (const char* nccl_on_ib : {"dgx-a100", "hgx-h100", "hgx-h100-roce400", "hgx-h200"})
    EXPECT_EQ(load_cluster(nccl_on_ib).network[1].rendezvous_latency, Time::from_us(7))
        << nccl_on_ib;
  const Cluster a100 = load_cluster("dgx-a100");
  EXPECT_DOUBLE_EQ(a100.network[0].link_bandwidth.in_gb_per_second(), 300);
  EXPECT_DOUBLE_EQ(a100.network[1].link_bandwidth.in_gb_per_second(), 25);  // 200 Gb/s HDR
  const Cluster h100 = load_cluster("hgx-h100");
  EXPECT_DOUBLE_EQ(h100.network[0].link_bandwidth.in_gb_per_second(), 450);
  EXPECT_TRUE(h100.network[0].nvls);
  EXPECT_DOUBLE_EQ(h100.network[1].link_bandwidth.in_gb_per_second(), 50);  // 400 Gb/s NDR
  // The device preset lends the simulators its SMs and its contention overhead (fitted on H200
  // GEMMs beside held SMs, the H100 inheriting it; none measured for the A100).
  EXPECT_EQ(h100.gpu_compute_units, 132);
  EXPECT_DOUBLE_EQ(h100.gpu_contention_overhead, 0.155);
  EXPECT_EQ(a100.gpu_compute_units, 108);
  EXPECT_DOUBLE_EQ(a100.gpu_contention_overhead, 0);
  const Cluster tpu = load_cluster("tpu-v4");
  EXPECT_EQ(tpu.network.capacity(), 4096);                                 // 16 x 16 x 16
  EXPECT_DOUBLE_EQ(tpu.network[0].link_bandwidth.in_gb_per_second(), 50);  // 400 Gb/s ICI
}

// The H200, Blackwell, MI300X, RoCE and Ethernet presets, against the figures their headers cite.
constexpr Time kNcclNvlinkStep = Time::from_ns(3420);  // NCCL Simple per step (3.4), H100 fit
constexpr Time kNcclBase = Time::from_ns(8460);        // NCCL Simple per call (8.4), H100 fit
constexpr Time kNcclNetStep = Time::from_us(14);       // NCCL network Simple per step
constexpr double kHopperNvls = 0.696;
constexpr double kBlackwellNvls = 0.696 * 0.74 / 0.85;  // NCCL nvlsEfficiency Blackwell/Hopper

void expect_nccl_latencies(const Cluster& c) {
  SCOPED_TRACE(c.name);
  const Dimension& inner = c.network[0];
  EXPECT_EQ(inner.latency, kNcclNvlinkStep);
  EXPECT_EQ(inner.base_latency, kNcclBase);
  EXPECT_DOUBLE_EQ(inner.efficiency, 0.90);
  ASSERT_TRUE(c.scale_out().has_value());
  const Dimension& tree = c.network[*c.scale_out()];
  EXPECT_EQ(tree.latency, kNcclNetStep);
  EXPECT_EQ(tree.base_latency, kNcclBase);
  EXPECT_DOUBLE_EQ(tree.efficiency, 0.94);  // 47 of 50 GB/s per NDR NIC, nccl-tests #290
}

TEST(Cluster, NewPresetsMatchTheirSources) {
  // HGX H200: DGX H200 = 8 GPUs on NVLink 4 (900 GB/s both ways), 8x 400 Gb/s ConnectX-7.
  const Cluster h200 = load_cluster("hgx-h200");
  EXPECT_EQ(h200.gpu, "H200-SXM-141GB");
  EXPECT_EQ(h200.network[0].kind, DimensionKind::Switch);
  EXPECT_EQ(h200.gpus_per_server(), 8);
  EXPECT_DOUBLE_EQ(h200.network[0].link_bandwidth.in_gb_per_second(), 450);
  EXPECT_TRUE(h200.network[0].nvls);
  EXPECT_NEAR(h200.network[0].nvls_efficiency, kHopperNvls, 1e-9);
  EXPECT_EQ(h200.network[1].rails, 8);
  EXPECT_DOUBLE_EQ(h200.network[1].link_bandwidth.in_gb_per_second(), 50);  // 400 Gb/s NDR
  expect_nccl_latencies(h200);

  // HGX B200: DGX B200 = 8 GPUs, NVLink 5 at 1.8 TB/s both ways, 8x 400 Gb/s ConnectX-7.
  const Cluster b200 = load_cluster("hgx-b200");
  EXPECT_EQ(b200.gpu, "B200-SXM-180GB");
  EXPECT_EQ(b200.gpus_per_server(), 8);
  EXPECT_DOUBLE_EQ(b200.network[0].link_bandwidth.in_gb_per_second(), 900);
  EXPECT_TRUE(b200.network[0].nvls);
  EXPECT_NEAR(b200.network[0].nvls_efficiency, kBlackwellNvls, 5e-4);
  EXPECT_EQ(b200.network[1].rails, 8);
  EXPECT_DOUBLE_EQ(b200.network[1].link_bandwidth.in_gb_per_second(), 50);
  expect_nccl_latencies(b200);

  // GB200 NVL72: 72 GPUs on one NVLink 5 switch domain at 900 GB/s per direction; one 400 Gb/s
  // ConnectX-7 per GPU (4 per 4-GPU compute tray) into NDR InfiniBand.
  const Cluster nvl72 = load_cluster("gb200-nvl72");
  EXPECT_EQ(nvl72.gpu, "GB200-186GB");
  EXPECT_EQ(nvl72.network[0].kind, DimensionKind::Switch);
  EXPECT_EQ(nvl72.network[0].size, 72);
  EXPECT_DOUBLE_EQ(nvl72.network[0].link_bandwidth.in_gb_per_second(), 900);
  EXPECT_TRUE(nvl72.network[0].nvls);
  EXPECT_NEAR(nvl72.network[0].nvls_efficiency, kBlackwellNvls, 5e-4);
  EXPECT_EQ(nvl72.network[1].kind, DimensionKind::FatTree);
  EXPECT_EQ(nvl72.network[1].rails, 72);
  EXPECT_DOUBLE_EQ(nvl72.network[1].link_bandwidth.in_gb_per_second(), 50);
  EXPECT_DOUBLE_EQ(nvl72.network.step_bandwidth(1).in_gb_per_second(), 50 * 0.94);  // per GPU
  expect_nccl_latencies(nvl72);

  // MI300X: 8 GPUs fully connected by 7 Infinity Fabric links of 128 GB/s (64 each way), no NVLS;
  // 8x 400 Gb/s NDR (Azure ND MI300X v5).
  const Cluster mi300x = load_cluster("mi300x");
  EXPECT_EQ(mi300x.gpu, "MI300X-192GB");
  EXPECT_EQ(mi300x.network[0].kind, DimensionKind::Mesh);
  EXPECT_EQ(mi300x.network[0].size, 8);
  EXPECT_DOUBLE_EQ(mi300x.network[0].link_bandwidth.in_gb_per_second(), 64);
  EXPECT_FALSE(mi300x.network[0].nvls);
  EXPECT_EQ(mi300x.network[1].rails, 8);
  EXPECT_DOUBLE_EQ(mi300x.network[1].link_bandwidth.in_gb_per_second(), 50);
  expect_nccl_latencies(mi300x);

  // hgx-h100 with 8x 400 Gb/s RoCE, and with 8x 200 Gb/s Ethernet, instead of NDR InfiniBand.
  for (const auto& [name, gbps] :
       {std::pair<const char*, double>{"hgx-h100-roce400", 400}, {"hgx-h100-eth200", 200}}) {
    const Cluster c = load_cluster(name);
    EXPECT_EQ(c.gpu, "H100-SXM5-80GB") << name;
    EXPECT_DOUBLE_EQ(c.network[0].link_bandwidth.in_gb_per_second(), 450) << name;
    EXPECT_NEAR(c.network[0].nvls_efficiency, kHopperNvls, 1e-9) << name;
    EXPECT_EQ(c.network[1].rails, 8) << name;
    EXPECT_DOUBLE_EQ(c.network[1].link_bandwidth.in_gb_per_second(), gbps / 8) << name;
    expect_nccl_latencies(c);
  }
}

TEST(Cluster, DgxH100IsAnAliasOfHgxH100) {
  const Cluster dgx = load_cluster("dgx-h100");
  const Cluster hgx = load_cluster("hgx-h100");
  EXPECT_EQ(dgx.name, "hgx-h100");
  EXPECT_EQ(dgx.source, "preset");
  EXPECT_EQ(hgx.aliases, (std::vector<std::string>{"dgx-h100"}));
  EXPECT_EQ(cluster_preset_text("dgx-h100"), cluster_preset_text("hgx-h100"));
  // Not a preset file of its own, and no alias shadows a preset name or another alias.
  const auto names = cluster_preset_names();
  EXPECT_EQ(std::find(names.begin(), names.end(), "dgx-h100"), names.end());
  std::vector<std::string> seen = names;
  for (const std::string& name : names)
    for (const std::string& alias : load_cluster(name).aliases) {
      EXPECT_EQ(std::find(seen.begin(), seen.end(), alias), seen.end()) << alias;
      seen.push_back(alias);
    }
}

TEST(Cluster, PricesAreSetOnlyWithTheirSource) {
  // Spheron's on-demand list of 17 March 2026: H200 4.54, B200 6.03, GB200 9.08 per 2-GPU
  // superchip.
  EXPECT_DOUBLE_EQ(load_cluster("hgx-h200").price_per_gpu_hour.value_or(0), 4.54);
  EXPECT_DOUBLE_EQ(load_cluster("hgx-b200").price_per_gpu_hour.value_or(0), 6.03);
  EXPECT_DOUBLE_EQ(load_cluster("gb200-nvl72").price_per_gpu_hour.value_or(0), 9.08 / 2);
  for (const std::string& name : cluster_preset_names()) {
    const Cluster c = load_cluster(name);
    EXPECT_EQ(c.price_per_gpu_hour.has_value(), !c.price_source.empty()) << name;
    if (c.price_per_gpu_hour) {
      EXPECT_NE(c.price_source.find("2026"), std::string::npos) << name;
    }
  }
  EXPECT_FALSE(load_cluster("mi300x").price_per_gpu_hour.has_value());
}

TEST(Cluster, ErrorsNameTheLineAndTheExpectation) {
  EXPECT_EQ(error_of(std::string(kMinimal) + "colour: blue\n"),
            "c.yaml:10: unknown key 'colour' in the cluster; expected one of: aliases, "
            "description, gpu, name, network, placement, price_per_gpu_hour, price_source, "
            "protocols");
  // Size keys are bounded at their line: a leaf of more servers than a network may hold GPUs.
  std::string huge_leaf = kMinimal;
  huge_leaf += "    servers_per_leaf: 2000000000000\n";
  EXPECT_EQ(error_of(huge_leaf),
            "c.yaml:10: expected an integer from 0 to 1099511627776, found '2000000000000'");
  // A latency beyond Time's range is an error at its line; 1 PB/s, the documented maximum, is a
  // bandwidth; a token of 100,000 bytes is echoed cut, not whole.
  std::string far = kMinimal;
  far.replace(far.find("    bandwidth: 100 GB/s"), 23,
              "    bandwidth: 1 PB/s\n    latency: 1e20 us");
  EXPECT_EQ(error_of(far),
            "c.yaml:6: expected a duration of at most 106 days such as '1.5 us', found '1e20 us'");
  std::string long_token = kMinimal;
  long_token.replace(long_token.find("100 GB/s"), 8, std::string(100'000, 'x'));
  EXPECT_EQ(error_of(long_token),
            "c.yaml:5: expected a positive bandwidth such as '300 GB/s', found '" +
                std::string(60, 'x') + "... (100000 bytes)'");
  std::string bad_bandwidth = kMinimal;
  bad_bandwidth.replace(bad_bandwidth.find("100 GB/s"), 8, "fast");
  EXPECT_EQ(error_of(bad_bandwidth),
            "c.yaml:5: expected a positive bandwidth such as '300 GB/s', found 'fast'");
  std::string bad_kind = kMinimal;
  bad_kind.replace(bad_kind.find("kind: switch"), 12, "kind: hypercube");
  EXPECT_EQ(error_of(bad_kind),
            "c.yaml:3: unknown kind 'hypercube'; expected switch, fat-tree, ring, torus or mesh");
  std::string nvls_on_tree = kMinimal;
  nvls_on_tree += "    nvls: true\n";
  EXPECT_EQ(error_of(nvls_on_tree), "c.yaml:10: 'nvls' applies only to switch dimensions");
  std::string rendezvous_on_switch = kMinimal;
  rendezvous_on_switch.insert(rendezvous_on_switch.find("  - kind: fat-tree"),
                              "    rendezvous_latency: 7 us\n");
  EXPECT_EQ(error_of(rendezvous_on_switch),
            "c.yaml:6: 'rendezvous_latency' applies only to fat-tree dimensions");
  EXPECT_EQ(error_of("name: x\nnetwork:\n  - kind: switch\n    size: 0\n    bandwidth: 1 GB/s\n"
                     "  - kind: switch\n    size: 2\n    bandwidth: 1 GB/s\n"),
            "c.yaml:3: expected a consistent network: dimension 'switch': only the outermost "
            "dimension may leave its size open (0)");
  EXPECT_EQ(error_of(std::string(kMinimal) + "placement: [tp, tp, dp, pp]\n"),
            "c.yaml:10: expected placement to name tp, ep, dp and pp once each, innermost first");
}

TEST(Cluster, AliasesAndPriceAreOptional) {
  const Cluster plain = parse_cluster_yaml(kMinimal, "c.yaml");
  EXPECT_TRUE(plain.aliases.empty());
  EXPECT_FALSE(plain.price_per_gpu_hour.has_value());
  EXPECT_TRUE(plain.price_source.empty());
  const Cluster c = parse_cluster_yaml(std::string(kMinimal) +
                                           "aliases: [tiny-2, tiny-3]\n"
                                           "price_per_gpu_hour: 2.49\n"
                                           "price_source: a cloud's on-demand list, 1 May 2026\n",
                                       "c.yaml");
  EXPECT_EQ(c.aliases, (std::vector<std::string>{"tiny-2", "tiny-3"}));
  ASSERT_TRUE(c.price_per_gpu_hour.has_value());
  EXPECT_DOUBLE_EQ(*c.price_per_gpu_hour, 2.49);
  EXPECT_EQ(c.price_source, "a cloud's on-demand list, 1 May 2026");
}

TEST(Cluster, PriceThatIsNotAPositiveNumberIsOneLineNamingFileAndLine) {
  for (const char* bad : {"0", "-3", "free", "nan", "inf", "1e999", "[1, 2]"}) {
    const std::string message =
        error_of(std::string(kMinimal) + "price_per_gpu_hour: " + bad + "\n");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    if (std::string(bad) == "[1, 2]") {
      EXPECT_EQ(message, "c.yaml:10: expected a single value") << bad;
    } else {
      EXPECT_EQ(message,
                "c.yaml:10: expected price_per_gpu_hour as a positive number of US dollars, "
                "found '" +
                    std::string(bad) + "'")
          << bad;
    }
  }
  EXPECT_EQ(error_of(std::string(kMinimal) + "aliases: tiny-2\n"),
            "c.yaml:10: expected aliases as a list such as [dgx-h100]");
  EXPECT_EQ(error_of(std::string(kMinimal) + "price_per_hour: 2\n"),
            "c.yaml:10: unknown key 'price_per_hour' in the cluster; expected one of: aliases, "
            "description, gpu, name, network, placement, price_per_gpu_hour, price_source, "
            "protocols");
}

TEST(Cluster, AbsurdBandwidthsLatenciesAndSizesAreRefusedWithTheirLine) {
  std::string huge = kMinimal;
  huge.replace(huge.find("100 GB/s"), 8, "1e300 TB/s");
  EXPECT_EQ(error_of(huge),
            "c.yaml:5: expected a bandwidth between 1 MB/s and 1 PB/s, found '1e300 TB/s'");
  std::string tiny = kMinimal;
  tiny.replace(tiny.find("200 Gb/s"), 8, "1e-300 B/s");
  EXPECT_EQ(error_of(tiny),
            "c.yaml:9: expected a bandwidth between 1 MB/s and 1 PB/s, found '1e-300 B/s'");
  std::string slow = kMinimal;
  slow.replace(slow.find("    bandwidth: 100 GB/s\n"), 0, "    latency: 5 s\n");
  EXPECT_EQ(error_of(slow), "c.yaml:5: expected a latency between 0 and 1 s, found '5 s'");
  std::string slow_base = kMinimal;
  slow_base.replace(slow_base.find("    bandwidth: 100 GB/s\n"), 0, "    base_latency: 2 s\n");
  EXPECT_EQ(error_of(slow_base), "c.yaml:5: expected a latency between 0 and 1 s, found '2 s'");
  EXPECT_EQ(error_of("name: x\nnetwork:\n  - kind: torus\n    shape: [4294967296, 4294967296, "
                     "4294967296]\n    bandwidth: 1 GB/s\n"),
            "c.yaml:3: expected a consistent network: dimension 'torus.y': the network would hold "
            "more than 2^40 GPUs");
  EXPECT_EQ(error_of("name: x\nnetwork:\n  - kind: switch\n    size: 8\n    bandwidth: 1 GB/s\n"
                     "  - kind: fat-tree\n    size: 4\n    bandwidth: 1 GB/s\n"
                     "  - kind: fat-tree\n    size: 0\n    bandwidth: 1 GB/s\n"),
            "c.yaml:3: expected a consistent network: dimension 'fat-tree': a network has at most "
            "one fat-tree dimension (its leaves, spines and pods of servers_per_leaf servers "
            "already make two tiers)");
}

TEST(Cluster, UnknownPresetListsTheKnownOnes) {
  try {
    load_cluster("dgx-z900");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--cluster 'dgx-z900': expected a preset (dgx-a100, gb200-nvl72, hgx-b200, "
                 "hgx-h100, hgx-h100-eth200, hgx-h100-roce400, hgx-h200, mi300x, "
                 "simai-default, tpu-v4), a YAML file or Calculon's system JSON; no such file");
  }
}

TEST(Cluster, PlacementFlag) {
  EXPECT_EQ(parse_placement("ep, tp,dp,pp", "--placement"),
            (std::vector<std::string>{"ep", "tp", "dp", "pp"}));
  EXPECT_THROW(parse_placement("tp,dp,pp", "--placement"), InputError);
}

TEST(Cluster, AKeyThatIsNoNameIsAnInputError) {
  // A cluster file holding "? :" (a key that is itself a mapping to yaml-cpp; found by
  // fuzz_cluster_yaml) / an error at its line, not yaml-cpp's conversion exception, because every
  // malformed input is exit status 2.
  EXPECT_EQ(error_of("? :\n"), "c.yaml:1: expected a key name, found a mapping");
  EXPECT_EQ(error_of(std::string(kMinimal) + "? [a]\n: 1\n"),
            "c.yaml:10: expected a key name, found a sequence");
}

}  // namespace
}  // namespace orrery
