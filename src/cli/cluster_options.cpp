#include "cli/cluster_options.h"

#include <fmt/format.h>

#include <fstream>
#include <iterator>

#include "cli/option_checks.h"
#include "cluster/astra_sim_system.h"
#include "core/diagnostics.h"
#include "core/quantity.h"
#include "core/text.h"

namespace orrery {
namespace {

Bandwidth bandwidth_flag(const std::string& flag, const std::string& value) {
  try {
    return parse_bandwidth(value);
  } catch (const std::invalid_argument& e) {
    throw InputError(flag + ": " + e.what());
  }
}

// "25 GB/s", "360 GiB/s": what the user wrote, with GB/s when no unit was given.
std::string shown_bandwidth(const std::string& value, Bandwidth parsed) {
  const std::string text(trim(value));
  if (parse_double(text)) return fmt::format("{:g} GB/s", parsed.in_gb_per_second());
  return text;
}

}  // namespace

bool ClusterArgs::overridden() const {
  return nvlink_busbw || nic_busbw || nvlink_efficiency || nic_efficiency || nics_per_server ||
         gpus_per_server || !placement.empty() || !system.empty();
}

void add_cluster_options(CLI::App& cmd, ClusterArgs& a, const std::string& cluster_help,
                         bool placement) {
  const std::string group = "Cluster";
  cmd.add_option("--cluster", a.cluster, cluster_help)
      ->check(not_empty("a preset name or a YAML file"))
      ->group(group);
  cmd.add_option(
         "--system", a.system,
         "ASTRA-sim system JSON to run the cluster's collectives as ASTRA-sim does (chunks, "
         "endpoint delay, one-way rings, its collective implementations); use with an "
         "ASTRA-sim network YAML as --cluster (docs/astra-sim.md)")
      ->check(CLI::ExistingFile)
      ->group(group);
  if (placement)
    cmd.add_option(
           "--placement", a.placement,
           "Rank placement, parallel axes innermost first (default: the cluster's, tp,ep,dp,pp)")
        ->check(not_empty("parallel axes such as tp,ep,dp,pp"))
        ->group(group);
  cmd.add_option("--nvlink-busbw", a.nvlink_busbw,
                 "Override the intra-server (innermost dimension) link bandwidth per GPU: GB/s "
                 "(10^9 B/s) when bare, or with a unit ('300 GB/s', '360 GiB/s'); the preset's "
                 "efficiency still applies (see --nvlink-efficiency). SimAI's -nv: GiB/s, "
                 "efficiency 1")
      ->group(group);
  cmd.add_option("--nic-busbw", a.nic_busbw,
                 "Override the bandwidth per NIC (scale-out dimension): GB/s when bare, or with a "
                 "unit; the preset's efficiency still applies (see --nic-efficiency). SimAI's "
                 "-nic: GiB/s, efficiency 1")
      ->group(group);
  cmd.add_option("--nvlink-efficiency", a.nvlink_efficiency,
                 "Override the achievable fraction of the intra-server bandwidth (default: the "
                 "cluster's)")
      ->check(number_in(0, 1, true))
      ->group(group);
  cmd.add_option("--nic-efficiency", a.nic_efficiency,
                 "Override the achievable fraction of the NIC bandwidth (default: the cluster's)")
      ->check(number_in(0, 1, true))
      ->group(group);
  cmd.add_option("--nics-per-server", a.nics_per_server, "Override NICs per server")
      ->check(integer_in(1, 1024))
      ->group(group);
  cmd.add_option("--gpus-per-server", a.gpus_per_server, "Override GPUs per server")
      ->check(integer_in(1, 1024))
      ->group(group);
}

EffectiveCluster effective_cluster(const ClusterArgs& a, const std::string& fallback) {
  EffectiveCluster out;
  out.source = a.cluster.empty() ? fallback : a.cluster;
  Cluster& c = out.cluster;
  c = load_cluster(out.source);
  std::vector<Dimension> dims = c.network.dimensions();
  const auto scale_out = [&](const std::string& flag) -> Dimension& {
    const auto d = c.scale_out();
    if (!d)
      throw InputError(flag + ": cluster '" + c.name + "' has no fat-tree (scale-out) dimension");
    return dims[*d];
  };
  std::vector<std::string>& said = out.overrides;
  if (a.nvlink_busbw) {
    const Bandwidth bw = bandwidth_flag("--nvlink-busbw", *a.nvlink_busbw);
    dims[0].link_bandwidth = bw;
    said.push_back("--nvlink-busbw " + shown_bandwidth(*a.nvlink_busbw, bw));
  }
  if (a.nvlink_efficiency) {
    dims[0].efficiency = *a.nvlink_efficiency;
    said.push_back(fmt::format("--nvlink-efficiency {:g}", *a.nvlink_efficiency));
  }
  if (a.nic_busbw) {
    const Bandwidth bw = bandwidth_flag("--nic-busbw", *a.nic_busbw);
    scale_out("--nic-busbw").link_bandwidth = bw;
    said.push_back("--nic-busbw " + shown_bandwidth(*a.nic_busbw, bw));
  }
  if (a.nic_efficiency) {
    scale_out("--nic-efficiency").efficiency = *a.nic_efficiency;
    said.push_back(fmt::format("--nic-efficiency {:g}", *a.nic_efficiency));
  }
  if (a.gpus_per_server) {
    dims[0].size = *a.gpus_per_server;
    said.push_back("--gpus-per-server " + std::to_string(*a.gpus_per_server));
  }
  if (a.nics_per_server) {
    scale_out("--nics-per-server").rails = *a.nics_per_server;
    said.push_back("--nics-per-server " + std::to_string(*a.nics_per_server));
  }
  try {
    c.network = c.network.with_dimensions(std::move(dims));
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("cluster overrides: ") + e.what());
  }
  if (!a.placement.empty()) {
    c.placement = parse_placement(a.placement, "--placement");
    said.push_back("--placement " + a.placement);
  }
  out.warnings = c.warnings;
  if (!a.system.empty()) {
    std::ifstream in(a.system, std::ios::binary);
    if (!in) throw InputError({a.system, 0}, "cannot read the ASTRA-sim system file");
    AstraSimSystem system =
        parse_astra_sim_system({std::istreambuf_iterator<char>(in), {}}, a.system);
    out.system_algorithm = apply_astra_sim_system(system, c, a.system);
    out.warnings.insert(out.warnings.end(), system.warnings.begin(), system.warnings.end());
  }
  if (!said.empty()) {
    std::string joined;
    for (const std::string& s : said)
      joined += (joined.empty() ? "" : ", ") + s;
    c.name += " with " + joined;
  }
  return out;
}

Algorithm run_algorithm(const std::string& algo_flag, EffectiveCluster& cluster) {
  const Algorithm given = *parse_algorithm(algo_flag);
  if (!cluster.system_algorithm) return given;
  if (given == Algorithm::Auto) return *cluster.system_algorithm;
  if (given != *cluster.system_algorithm)
    cluster.warnings.push_back("--algo " + std::string(to_string(given)) +
                               " replaces the system file's " +
                               std::string(to_string(*cluster.system_algorithm)));
  return given;
}

}  // namespace orrery
