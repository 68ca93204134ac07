// Calculon's system JSON read as a cluster with its own device: each key's mapping, warnings
// naming what Orrery does not model, errors naming the file and the key.
#include "cluster/calculon_system.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/diagnostics.h"

namespace orrery {
namespace {

using nlohmann::json;

const json kNetworkExtras = {
    {"ops", {{"p2p", 1.0}, {"reduce_scatter", 1.0}, {"all_gather", 1.0}, {"all_reduce", 2.0}}},
    {"collective_minus1_scalar", true},
    {"must_be_filled", true},
    {"processor_usage", 0.15}};

// An A100-like system in Calculon's schema: a per-type matrix table, a plain vector table.
json system() {
  json fast = {{"bandwidth", 300}, {"efficiency", 0.7}, {"size", 8}, {"latency", 2e-6}};
  json slow = {{"bandwidth", 25}, {"efficiency", 0.9}, {"size", 4096}, {"latency", 1e-5}};
  fast.update(kNetworkExtras);
  slow.update(kNetworkExtras);
  return {{"matrix",
           {{"tflops", 312},
            {"gflops_efficiency",
             {{"float16", {{128, 0.9}, {1, 0.5}, {0, 0.1}}}, {"float8", {{0, 0.1}, {64, 0.7}}}}}}},
          {"vector", {{"tflops", 78}, {"gflops_efficiency", {{16, 0.8}, {0, 0.1}}}}},
          {"mem1", {{"GiB", 80}, {"GBps", 2039}, {"MB_efficiency", {{100, 0.85}, {0, 0.3}}}}},
          {"mem2", {{"GiB", 512}, {"GBps", 32}, {"MB_efficiency", {{0, 0.5}}}}},
          {"processing_mode", "no_overlap"},
          {"networks", {fast, slow}}};
}

Cluster read(const json& j) {
  return parse_calculon_system(j.dump(2), "sys.json");
}

std::string error_of(const json& j) {
  try {
    read(j);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CalculonSystem, ProcessorAndMemoryBecomeTheDevice) {
  const Cluster c = read(system());
  ASSERT_TRUE(c.device.has_value());
  const Device& d = *c.device;
  // One peak per engine, for every data type: 312 and 78 TFLOP/s.
  EXPECT_DOUBLE_EQ(d.matrix.at(DType::BF16).in_tflop_per_second(), 312);
  EXPECT_DOUBLE_EQ(d.matrix.at(DType::FP8).in_tflop_per_second(), 312);
  EXPECT_DOUBLE_EQ(d.vector.at(DType::FP32).in_tflop_per_second(), 78);
  // The efficiency of each table's largest operations (the row with the largest size, wherever
  // it stands in the list).
  EXPECT_DOUBLE_EQ(d.matrix_efficiency_for(DType::FP16), 0.9);
  EXPECT_DOUBLE_EQ(d.matrix_efficiency_for(DType::FP8), 0.7);
  // bf16, which the tables leave out: the smaller of the two listed (0.7).
  EXPECT_DOUBLE_EQ(d.matrix_efficiency_for(DType::BF16), 0.7);
  EXPECT_DOUBLE_EQ(d.vector_efficiency, 0.8);
  EXPECT_EQ(d.memory_capacity, 80ull << 30);  // GiB
  EXPECT_DOUBLE_EQ(d.memory_bandwidth.in_bytes_per_second(), 2039e9);
  EXPECT_DOUBLE_EQ(d.memory_efficiency, 0.85);
}

TEST(CalculonSystem, NetworksBecomeSwitchAndFatTree) {
  const Cluster c = read(system());
  ASSERT_EQ(c.network.size(), 2u);
  const Dimension& inner = c.network[0];
  EXPECT_EQ(inner.kind, DimensionKind::Switch);
  EXPECT_EQ(inner.size, 8);
  EXPECT_DOUBLE_EQ(inner.link_bandwidth.in_bytes_per_second(), 300e9);
  EXPECT_DOUBLE_EQ(inner.efficiency, 0.7);
  EXPECT_EQ(inner.base_latency, Time::from_seconds(2e-6));  // once per collective
  EXPECT_EQ(inner.latency, Time());
  const Dimension& outer = c.network[1];
  EXPECT_EQ(outer.kind, DimensionKind::FatTree);
  EXPECT_EQ(outer.size, 0);   // open: as many servers as a job needs
  EXPECT_EQ(outer.rails, 8);  // a NIC of `bandwidth` per GPU
  EXPECT_DOUBLE_EQ(outer.link_bandwidth.in_bytes_per_second(), 25e9);
  EXPECT_TRUE(c.network.ideal_links());
}

TEST(CalculonSystem, UnmodelledKeysAreWarnedByName) {
  // 4 keys on each of 2 networks, mem2, and processing_mode no_overlap / 10 warnings, because
  // none may be dropped silently.
  const Cluster c = read(system());
  EXPECT_EQ(c.warnings.size(), 10u);
  const auto naming = [&](const std::string& text) {
    int n = 0;
    for (const std::string& w : c.warnings)
      n += w.find(text) != std::string::npos;
    return n;
  };
  EXPECT_EQ(naming("'ops'"), 2);
  EXPECT_EQ(naming("'processor_usage'"), 2);
  EXPECT_EQ(naming("'mem2'"), 1);
  EXPECT_EQ(naming("'processing_mode'"), 1);
  json roofline = system();
  roofline["processing_mode"] = "roofline";  // what Orrery does: nothing to say
  EXPECT_EQ(read(roofline).warnings.size(), 9u);
}

TEST(CalculonSystem, BadSystemsNameFileAndKey) {
  json j = system();
  j.erase("matrix");
  EXPECT_EQ(error_of(j), "sys.json:1: expected the key 'matrix' in Calculon's system JSON");
  j = system();
  j["networks"][1]["size"] = 12;
  EXPECT_NE(error_of(j).find("'size': expected network 1's size to be a multiple of 8"),
            std::string::npos);
  j = system();
  j["networks"][0]["efficiency"] = 1.5;
  EXPECT_NE(error_of(j).find("'efficiency': expected a number in (0, 1], found 1.5"),
            std::string::npos);
  j = system();
  j["mem1"]["MB_efficiency"] = {{100, 2}};
  EXPECT_NE(error_of(j).find("'MB_efficiency': expected rows [size, efficiency]"),
            std::string::npos);
  j = system();
  j["networks"].push_back(j["networks"][1]);
  EXPECT_NE(error_of(j).find("'networks': expected a list of one or two networks"),
            std::string::npos);
  EXPECT_EQ(error_of(j).rfind("sys.json:", 0), 0u);
}

}  // namespace
}  // namespace orrery
