// Validation of the collective model against published nccl-tests measurements: every point of
// tests/data/nccl_tests_single_node.csv (Tables 1a-1, 1a-2, 1b-1 and 1b-2 of
// docs/references/calibration.md) is predicted with the presets and
// no knobs, and the mean absolute percentage error (MAPE) of each GPU, collective and size range
// is held to what docs/network.md ("Validation") reports. The protocol model's shared constants
// and the presets' link constants were fitted on the A100 points and the H100 all-reduce (the
// all-to-all's point-to-point constants on the A100 all-to-all); the H100 all-gather,
// reduce-scatter and all-to-all rows are checks, never fitted, as are the sendrecv sweeps
// (tests/data/nccl_tests_sendrecv.csv).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_run.h"

namespace orrery::e2e {
namespace {

struct Point {
  std::string table, gpu, op;
  int ranks = 0;
  double bytes = 0, published_us = 0;
};

std::vector<Point> measurements() {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/data/nccl_tests_single_node.csv");
  std::vector<Point> points;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("table,")) continue;
    std::istringstream row(line);
    Point p;
    std::string ranks, bytes, time;
    std::getline(row, p.table, ',');
    std::getline(row, p.gpu, ',');
    std::getline(row, p.op, ',');
    std::getline(row, ranks, ',');
    std::getline(row, bytes, ',');
    std::getline(row, time, ',');
    p.ranks = std::stoi(ranks);
    p.bytes = std::stod(bytes);
    p.published_us = std::stod(time);
    points.push_back(p);
  }
  return points;
}

std::string size_range(double bytes) {
  if (bytes < 1 << 20) return "<1MiB";
  return bytes <= 64 << 20 ? "1-64MiB" : ">64MiB";
}

// Predicted time (us) per (cluster, op, ranks, bytes), from one sweep per series.
std::map<std::tuple<std::string, std::string, int, double>, double> predictions(
    const std::vector<Point>& points) {
  std::map<std::tuple<std::string, std::string, int, double>, double> out;
  std::map<std::tuple<std::string, std::string, int>, bool> swept;
  for (const Point& p : points) {
    const std::string cluster = p.gpu == "A100" ? "dgx-a100" : "hgx-h100";
    if (swept[{cluster, p.op, p.ranks}]) continue;
    swept[{cluster, p.op, p.ranks}] = true;
    const CliRun r = orrery("collective --json -b 8 -e 16GiB -f 2 --op " + p.op + " --ranks " +
                            std::to_string(p.ranks) + " --cluster " + cluster);
    EXPECT_EQ(r.status, 0) << r.err;
    const nlohmann::json sweep = nlohmann::json::parse(r.out);
    for (const auto& row : sweep["results"])
      out[{p.gpu, p.op, p.ranks, row["size_bytes"].get<double>()}] =
          row["time_s"].get<double>() * 1e6;
  }
  return out;
}

struct Range {
  double abs_sum = 0, sum = 0;
  int n = 0, over = 0, under = 0;
  double mape() const { return 100 * abs_sum / n; }
  double bias() const { return 100 * sum / n; }
};

TEST(CollectiveValidation, NcclTestsSingleServerMape) {
  const std::vector<Point> points = measurements();
  ASSERT_EQ(points.size(), 256u);
  const auto predicted = predictions(points);
  std::map<std::tuple<std::string, std::string, std::string>, Range> ranges;
  for (const Point& p : points) {
    if (p.bytes < 4096) continue;  // launch-bound sizes below 4 KiB are not modelled apart
    const auto found = predicted.find({p.gpu, p.op, p.ranks, p.bytes});
    ASSERT_NE(found, predicted.end()) << p.table << " " << p.op << " " << p.ranks << " " << p.bytes;
    const double model = found->second;
    const double error = model / p.published_us - 1;
    Range& r = ranges[{p.gpu, p.op, size_range(p.bytes)}];
    r.abs_sum += std::fabs(error);
    r.sum += error;
    ++r.n;
    (error > 0 ? r.over : r.under) += 1;
  }
  // MAPE ceilings (%) per GPU, collective and range: what the model reaches (docs/network.md,
  // "Validation", re-run by this test) plus about one point of slack. Rows marked check were
  // not fitted; every other row is in-sample. The A100 rows have no single-server check: every
  // A100 point of the repository's one-server data was fitted. Their held-out check is across
  // servers (set S1 in NcclTestsAcrossServersMape, 2 x 8 A100). The all-to-all's two
  // point-to-point constants (p2p_protocol.h) were fitted on the A100 all-to-all alone. Known
  // one-sided biases: the H100 all-gather and reduce-scatter above 64 MiB are 5-8 % too fast on
  // all 9 points each; the A100 reduce-scatter is too slow on average in every range (+5 to
  // +23 %).
  const std::map<std::tuple<std::string, std::string, std::string>, double> ceiling = {
      {{"A100", "all_reduce", "<1MiB"}, 32},       {{"A100", "all_reduce", "1-64MiB"}, 18},
      {{"A100", "all_reduce", ">64MiB"}, 6.5},     {{"A100", "all_gather", "<1MiB"}, 20.5},
      {{"A100", "all_gather", "1-64MiB"}, 10},     {{"A100", "all_gather", ">64MiB"}, 4.5},
      {{"A100", "reduce_scatter", "<1MiB"}, 24},   {{"A100", "reduce_scatter", "1-64MiB"}, 9.5},
      {{"A100", "reduce_scatter", ">64MiB"}, 6},   {{"A100", "alltoall", "<1MiB"}, 10},
      {{"A100", "alltoall", "1-64MiB"}, 8},        {{"A100", "alltoall", ">64MiB"}, 3},
      {{"H100", "all_reduce", "<1MiB"}, 12},       {{"H100", "all_reduce", "1-64MiB"}, 7},
      {{"H100", "all_reduce", ">64MiB"}, 2.5},     {{"H100", "all_gather", "<1MiB"}, 16},  // check
      {{"H100", "all_gather", "1-64MiB"}, 8.5},                                            // check
      {{"H100", "all_gather", ">64MiB"}, 7},                                               // check
      {{"H100", "reduce_scatter", "<1MiB"}, 16},                                           // check
      {{"H100", "reduce_scatter", "1-64MiB"}, 10},                                         // check
      {{"H100", "reduce_scatter", ">64MiB"}, 8.5},                                         // check
      {{"H100", "alltoall", "<1MiB"}, 15.5},                                               // check
      {{"H100", "alltoall", "1-64MiB"}, 12.7},                                             // check
      {{"H100", "alltoall", ">64MiB"}, 9.2},                                               // check
  };
  for (const auto& [key, r] : ranges) {
    const auto& [gpu, op, range] = key;
    std::printf("| %s | %s | %s | %d | %.1f %% | %+.1f %% | %d / %d |\n", gpu.c_str(), op.c_str(),
                range.c_str(), r.n, r.mape(), r.bias(), r.over, r.under);
    ASSERT_TRUE(ceiling.contains(key)) << gpu << " " << op << " " << range;
    EXPECT_LE(r.mape(), ceiling.at(key)) << gpu << " " << op << " " << range;
  }
}

// Table 1b-3 (nccl issue #1455, 8x H100, 2-4 GiB, checks: not fitted): ring 365-370 GB/s bus
// bandwidth for 2 to 8 GPUs; NVLS 420, 440, 460, 480 GB/s on 5, 6, 7, 8 GPUs and no better than
// ring below. Known errors (docs/network.md, "Validation"): ring 330 / 373 / 386 GB/s on 2 / 4 / 8
// GPUs against 367.5 (-10 %, +1.5 %, +5 %), NVLS 390 / 421 / 444 / 463 GB/s (slower than published
// at every point, by 3.5 to 7 %). Each tolerance is the largest of its errors plus about one point.
constexpr double kRingTolerance = 0.11;  // relative; known bias -10 % (2 GPUs) to +5 % (8 GPUs)
constexpr double kNvlsTolerance = 0.08;  // relative; known bias -7 % (5 GPUs) to -3.5 % (8 GPUs)

TEST(CollectiveValidation, H100RingAndNvlsByGpuCount) {
  const auto busbw = [](int gpus, const char* algo) {
    const CliRun r = orrery(
        "collective --json --op allreduce --size 4GiB --cluster hgx-h100 "
        "--ranks " +
        std::to_string(gpus) + " --algo " + algo);
    const double gbps = nlohmann::json::parse(r.out)["results"][0]["busbw_GBps"].get<double>();
    std::printf("%d GPUs, %s: %.0f GB/s\n", gpus, algo, gbps);
    return gbps;
  };
  for (const int gpus : {2, 4, 8})
    EXPECT_NEAR(busbw(gpus, "ring"), 367.5, 367.5 * kRingTolerance) << gpus;
  const std::pair<int, double> nvls[] = {{5, 420}, {6, 440}, {7, 460}, {8, 480}};
  for (const auto& [gpus, published] : nvls)
    EXPECT_NEAR(busbw(gpus, "auto"), published, published * kNvlsTolerance) << gpus;
}

// Across servers: every point of tests/data/nccl_tests_multi_node.csv (published multi-node
// nccl-tests sweeps: A100 with 8 x HDR, H100 with 8 x NDR on 2, 4 and 8 servers, default and tuned
// NCCL; A100 with 4 EFA NICs for 8 GPUs, H100 with 32) is predicted with the preset (or the
// repository's cluster file) and the algorithm the file names. One set (S2c: 8 servers, default)
// fixed kNetworkRampPerServer, the points below 1 MiB of another (S2a: 2 servers) the hgx-h100
// rendezvous_latency, and those of the two EFA sets (S5, S6) their cluster files' (role fit); every
// other point is a check. A point whose published time exceeds the next larger size's in its sweep
// is a transient of that run (8 MiB on 8 servers took 1.27 ms where 16 MiB took 0.38 ms) and is
// left out. Ceilings: docs/network.md ("Across servers") plus about one point of slack; the points
// of role reported (GCP's TCPXO set) are printed only. Known one-sided: S5 above 64 MiB, 8 % slow,
// and S6 above 64 MiB, 7.5 % fast, on every point.
struct NetworkPoint {
  std::string source, role, cluster, algo, op;
  int ranks = 0;
  double bytes = 0, busbw = 0;
};

std::vector<NetworkPoint> multi_node_measurements() {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/data/nccl_tests_multi_node.csv");
  std::vector<NetworkPoint> points;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("source,")) continue;
    std::vector<std::string> f;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');)
      f.push_back(cell);
    EXPECT_EQ(f.size(), 13u) << line;
    if (f.size() != 13) continue;
    points.push_back({f[0], f[1], f[2], f[3], f[9], std::stoi(f[4]) * std::stoi(f[5]),
                      std::stod(f[10]), std::stod(f[12])});
  }
  return points;
}

double bus_factor(const std::string& op, int ranks) {
  const double n = ranks;
  return op == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

TEST(CollectiveValidation, NcclTestsAcrossServersMape) {
  const std::vector<NetworkPoint> points = multi_node_measurements();
  ASSERT_EQ(points.size(), 187u);
  std::map<std::tuple<std::string, std::string, std::string>, Range> ranges;
  std::set<std::tuple<std::string, std::string, std::string>> reported;
  for (size_t i = 0; i < points.size(); ++i) {
    const NetworkPoint& p = points[i];
    const auto time = [](const NetworkPoint& q) {
      return q.bytes * bus_factor(q.op, q.ranks) / q.busbw;
    };
    const bool glitch = i + 1 < points.size() && points[i + 1].source == p.source &&
                        points[i + 1].op == p.op && points[i + 1].bytes > p.bytes &&
                        time(p) > time(points[i + 1]);
    if (glitch) continue;
    // A preset's name, or a cluster file of the repository's.
    const std::string cluster =
        p.cluster.ends_with(".yaml") ? std::string(ORRERY_SOURCE_DIR) + "/" + p.cluster : p.cluster;
    const CliRun r = orrery("collective --json --op " + p.op + " --ranks " +
                            std::to_string(p.ranks) + " --cluster " + cluster + " --algo " +
                            p.algo + " --size " + std::to_string(static_cast<int64_t>(p.bytes)));
    ASSERT_EQ(r.status, 0) << r.err;
    const double model = nlohmann::json::parse(r.out)["results"][0]["busbw_GBps"].get<double>();
    const double error = p.busbw / model - 1;  // = model time / published time - 1
    const auto key = std::make_tuple(p.source, p.op, size_range(p.bytes));
    if (p.role == "reported") reported.insert(key);
    Range& range = ranges[key];
    range.abs_sum += std::fabs(error);
    range.sum += error;
    ++range.n;
    (error > 0 ? range.over : range.under) += 1;
  }
  const std::map<std::tuple<std::string, std::string, std::string>, double> ceiling = {
      {{"S1-ndmv4", "all_gather", ">64MiB"}, 4.5},
      {{"S1-ndmv4", "all_reduce", ">64MiB"}, 6.5},
      {{"S1-ndmv4", "alltoall", ">64MiB"}, 11.5},
      {{"S2a-2n-default", "all_reduce", "<1MiB"}, 4.5},  // fit (rendezvous_latency)
      {{"S2a-2n-default", "all_reduce", "1-64MiB"}, 12},
      {{"S2a-2n-default", "all_reduce", ">64MiB"}, 6.5},
      {{"S2b-4n-default-vm", "all_reduce", "<1MiB"}, 9},
      {{"S2b-4n-default-vm", "all_reduce", "1-64MiB"}, 12},
      {{"S2b-4n-default-vm", "all_reduce", ">64MiB"}, 5},
      {{"S2c-8n-default", "all_reduce", "1-64MiB"}, 16.5},  // fit
      {{"S2c-8n-default", "all_reduce", ">64MiB"}, 5.5},    // fit
      {{"S2d-2n-default", "all_reduce", "1-64MiB"}, 8},
      {{"S2d-2n-default", "all_reduce", ">64MiB"}, 7},
      {{"S2e-4n-default", "all_reduce", "1-64MiB"}, 21.5},
      {{"S2e-4n-default", "all_reduce", ">64MiB"}, 9},
      {{"S2f-8n-ctas24-qps2", "all_reduce", "1-64MiB"}, 25.5},
      {{"S2f-8n-ctas24-qps2", "all_reduce", ">64MiB"}, 14.5},
      {{"S2g-2n-ring-ctas24-qps2", "all_reduce", "1-64MiB"}, 16},
      {{"S2g-2n-ring-ctas24-qps2", "all_reduce", ">64MiB"}, 14.5},
      {{"S5-aws-p4de", "all_reduce", "<1MiB"}, 11},  // fit (its rendezvous_latency)
      {{"S5-aws-p4de", "all_reduce", "1-64MiB"}, 13},
      {{"S5-aws-p4de", "all_reduce", ">64MiB"}, 9},
      {{"S6-aws-p5", "all_reduce", "<1MiB"}, 13.5},  // fit (its rendezvous_latency)
      {{"S6-aws-p5", "all_reduce", "1-64MiB"}, 15},
      {{"S6-aws-p5", "all_reduce", ">64MiB"}, 8.5},
  };
  for (const auto& [key, r] : ranges) {
    const auto& [source, op, range] = key;
    std::printf("| %s | %s | %s | %d | %.1f %% | %+.1f %% | %d / %d |\n", source.c_str(),
                op.c_str(), range.c_str(), r.n, r.mape(), r.bias(), r.over, r.under);
    if (reported.contains(key)) continue;  // printed only
    ASSERT_TRUE(ceiling.contains(key)) << source << " " << op << " " << range;
    EXPECT_LE(r.mape(), ceiling.at(key)) << source << " " << op << " " << range;
  }
}

// tests/data/nccl_tests_sendrecv.csv: sendrecv on NCCL's point-to-point path, check data only.
TEST(CollectiveValidation, NcclTestsSendRecvMape) {
  std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/tests/data/nccl_tests_sendrecv.csv");
  std::map<std::tuple<std::string, std::string>, Range> ranges;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("source,")) continue;
    std::istringstream row(line);
    std::string source, gpu, cluster, ranks, bytes, time;
    for (std::string* field : {&source, &gpu, &cluster, &ranks, &bytes, &time})
      std::getline(row, *field, ',');
    const CliRun r = orrery("collective --json --op sendrecv --ranks " + ranks + " --cluster " +
                            cluster + " --size " + bytes);
    ASSERT_EQ(r.status, 0) << r.err;
    const double model = nlohmann::json::parse(r.out)["results"][0]["time_s"].get<double>() * 1e6;
    const double error = model / std::stod(time) - 1;
    Range& range = ranges[{source, size_range(std::stod(bytes))}];
    range.abs_sum += std::fabs(error);
    range.sum += error;
    ++range.n;
    (error > 0 ? range.over : range.under) += 1;
  }
  const std::map<std::tuple<std::string, std::string>, double> ceiling = {
      {{"A1-8xA100", ">64MiB"}, 20.5},
  };
  ASSERT_EQ(ranges.size(), ceiling.size());
  for (const auto& [key, r] : ranges) {
    const auto& [source, range] = key;
    std::printf("| %s | sendrecv | %s | %d | %.1f %% | %+.1f %% | %d / %d |\n", source.c_str(),
                range.c_str(), r.n, r.mape(), r.bias(), r.over, r.under);
    ASSERT_TRUE(ceiling.contains(key)) << source << " " << range;
    EXPECT_LE(r.mape(), ceiling.at(key)) << source << " " << range;
  }
}

}  // namespace
}  // namespace orrery::e2e
