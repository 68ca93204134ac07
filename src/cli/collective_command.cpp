#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <sstream>

#include "cli/cluster_options.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "cli/run_provenance.h"
#include "cluster/cluster.h"
#include "core/diagnostics.h"
#include "core/quantity.h"
#include "network/collective_algorithms.h"
#include "network/collective_model.h"
#include "network/link_graph.h"
#include "network/rank_placement.h"
#include "workload/parallelism.h"

namespace orrery {
namespace {

struct CollectiveArgs {
  std::string op = "allreduce";
  std::string size;
  std::string min_size, max_size;
  int64_t factor = 2;
  int64_t ranks = 8;
  ClusterArgs cluster;
  std::string algorithm = "auto";
  std::string mode = "analytical";
  bool json = false;
};

CollectiveKind parse_op(const std::string& op) {
  if (op == "allreduce" || op == "all_reduce") return CollectiveKind::AllReduce;
  if (op == "allgather" || op == "all_gather") return CollectiveKind::AllGather;
  if (op == "reducescatter" || op == "reduce_scatter") return CollectiveKind::ReduceScatter;
  if (op == "alltoall" || op == "all_to_all") return CollectiveKind::AllToAll;
  if (op == "broadcast") return CollectiveKind::Broadcast;
  if (op == "reduce") return CollectiveKind::Reduce;
  if (op == "sendrecv") return CollectiveKind::SendRecv;
  throw InputError(
      "--op: expected allreduce, allgather, reducescatter, alltoall, broadcast, "
      "reduce or sendrecv, found '" +
      op + "'");
}

// The largest message size accepted (1 PiB): far beyond any real collective, and small enough
// that its time stays in range.
constexpr Bytes kMaxSize = Bytes{1} << 50;

Bytes size_flag(const std::string& flag, const std::string& text) {
  Bytes size = 0;
  try {
    size = parse_size(text);
  } catch (const std::invalid_argument& e) {
    throw InputError(flag + ": " + e.what());
  }
  if (size > kMaxSize)
    throw InputError(flag + ": expected a size of at most 1 PiB, found '" + text + "'");
  return size;
}

std::vector<Bytes> sizes_of(const CollectiveArgs& a) {
  if (!a.size.empty() && (!a.min_size.empty() || !a.max_size.empty()))
    throw InputError(
        "expected either --size or a sweep (-b/--min-size and -e/--max-size), not both");
  if (!a.size.empty()) return {size_flag("--size", a.size)};
  if (a.min_size.empty() || a.max_size.empty())
    throw InputError("expected --size, or --min-size and --max-size for a sweep");
  const Bytes lo = size_flag("--min-size", a.min_size), hi = size_flag("--max-size", a.max_size);
  if (lo == 0 || lo > hi || a.factor < 2)
    throw InputError("expected 0 < --min-size <= --max-size and --factor >= 2");
  std::vector<Bytes> sizes;
  for (Bytes s = lo; s <= hi; s *= static_cast<Bytes>(a.factor)) {
    sizes.push_back(s);
    if (s > hi / static_cast<Bytes>(a.factor)) break;
  }
  return sizes;
}

int run_collective(const CollectiveArgs& a) {
  const CollectiveKind kind = parse_op(a.op);
  protect_input_file(a.cluster.cluster);
  EffectiveCluster effective = effective_cluster(a.cluster, kDefaultCluster);
  const Cluster& cluster = effective.cluster;
  const Algorithm algorithm = run_algorithm(a.algorithm, effective);
  for (const std::string& warning : effective.warnings)
    std::cerr << "orrery: warning: " << warning << "\n";
  const std::vector<Bytes> sizes = sizes_of(a);
  std::optional<RankPlacement> placement;
  try {
    placement.emplace(std::vector<ParallelAxis>{{"ranks", a.ranks}}, cluster.network);
  } catch (const std::invalid_argument& e) {
    throw InputError("--ranks " + std::to_string(a.ranks) + ": " + e.what() + " (cluster '" +
                     cluster.name + "')");
  }
  const std::vector<size_t> all = {0};
  const LinkGraph links(cluster.network, a.ranks);
  const CollectiveModel model(links, {placement->group_members(all, 0)});
  const GroupShape& shape = model.shape();
  const bool flow = a.mode == "flow";

  // Printed once every size has run, so that an error leaves nothing half printed.
  std::ostringstream text;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (!a.json) {
    text << fmt::format("# {} on {} ranks of {} (the first {} GPUs)\n", to_string(kind), a.ranks,
                        cluster.name, a.ranks);
    text << fmt::format("# {:>14} {:>12} {:>12} {:>12}  {:<17} {:<8} {}\n", "size (B)", "time (us)",
                        "algbw (GB/s)", "busbw (GB/s)", "algorithm", "protocol", "channels");
  }
  bool warned = false, warned_stand_in = false;
  for (const Bytes size : sizes) {
    CollectiveCost cost;
    const CollectiveCost analytical = model.cost(kind, size, algorithm);
    if (flow) {
      const CollectiveFlowRun run = run_collective_flows(model, kind, size, algorithm);
      const auto priced = model.price(run.algorithm, kind, size);
      cost = {run.time, run.algorithm, run.protocol, priced ? priced->channels : 1};
    } else {
      cost = analytical;
    }
    if (algorithm != Algorithm::Auto && cost.algorithm != algorithm && !warned) {
      const std::string why = model.time(algorithm, kind, size)
                                  ? std::string(to_string(algorithm)) + " has no flow decomposition"
                                  : unavailable_reason(cluster.network, algorithm, kind, shape);
      std::cerr << "orrery: warning: --algo " << to_string(algorithm) << ": " << why << "; ran "
                << to_string(cost.algorithm) << " instead\n";
      warned = true;
    } else if (algorithm == Algorithm::Auto && cost.algorithm != analytical.algorithm &&
               !warned_stand_in) {
      std::cerr << "orrery: warning: auto picks " << to_string(analytical.algorithm) << " at "
                << size << " B, which has no flow decomposition; flow mode runs "
                << to_string(cost.algorithm)
                << " in its place (the fastest that has one; other sizes may differ alike)\n";
      warned_stand_in = true;
    }
    const double seconds = cost.time.seconds();
    const double algbw = seconds > 0 ? static_cast<double>(size) / seconds / 1e9 : 0.0;
    const double busbw = algbw * bus_factor(kind, a.ranks);
    if (a.json) {
      rows.push_back({{"size_bytes", size},
                      {"time_s", seconds},
                      {"algbw_GBps", algbw},
                      {"busbw_GBps", busbw},
                      {"algorithm", std::string(to_string(cost.algorithm))},
                      {"protocol", std::string(to_string(cost.protocol))},
                      {"channels", cost.channels}});
    } else {
      text << fmt::format("  {:>14} {:>12.2f} {:>12.2f} {:>12.2f}  {:<17} {:<8} {}\n", size,
                          cost.time.microseconds(), algbw, busbw, to_string(cost.algorithm),
                          to_string(cost.protocol), cost.channels);
    }
  }
  if (a.json) {
    nlohmann::ordered_json out = {{"provenance", provenance_json(run_provenance(&effective, {}))},
                                  {"collective", std::string(to_string(kind))},
                                  {"ranks", a.ranks},
                                  {"cluster", cluster.name},
                                  {"results", rows}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << text.str();
  }
  return 0;
}

}  // namespace

std::function<int()> add_collective_command(CLI::App& app) {
  auto args = std::make_shared<CollectiveArgs>();
  auto* cmd = app.add_subcommand(
      "collective", "Time one collective on a cluster, printed the way nccl-tests prints it");
  cmd->footer(
      "Examples:\n"
      "  orrery collective --op allreduce --size 1GiB --ranks 64 --cluster hgx-h100\n"
      "  orrery collective --op allgather -b 8 -e 16GiB -f 2 --ranks 8 --cluster dgx-a100\n"
      "  orrery collective --size 1GiB --ranks 16 --nic-busbw 25 --nics-per-server 4\n\n"
      "algbw = size / time; busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather,\n"
      "reduce-scatter and all-to-all, x 1 for broadcast, reduce and sendrecv (the nccl-tests\n"
      "definitions; sizes as nccl-tests counts them). GB/s = 1e9 B/s.");
  cmd->add_option("--op", args->op,
                  "allreduce, allgather, reducescatter, alltoall, broadcast, reduce or sendrecv "
                  "(nccl-tests spellings such as all_reduce work too)")
      ->capture_default_str();
  cmd->add_option("--size", args->size, "Message size, e.g. 1GiB, 64MiB, 4096");
  cmd->add_option("-b,--min-size", args->min_size, "Sweep: smallest size");
  cmd->add_option("-e,--max-size", args->max_size, "Sweep: largest size");
  cmd->add_option("-f,--factor", args->factor, "Sweep: multiplication factor between sizes")
      ->capture_default_str();
  cmd->add_option("--ranks", args->ranks, "Ranks, placed on the first GPUs of the cluster")
      ->check(integer_in(1, kMaxWorldSize))
      ->capture_default_str();
  add_cluster_options(*cmd, args->cluster,
                      "Cluster preset or YAML file (default: " + std::string(kDefaultCluster) + ")",
                      false);
  std::vector<std::string> algorithms = {"auto"};
  for (const Algorithm a : all_algorithms())
    algorithms.emplace_back(to_string(a));
  cmd->add_option("--algo", args->algorithm, "Algorithm: " + CLI::detail::join(algorithms, ", "))
      ->check(CLI::IsMember(algorithms))
      ->capture_default_str();
  cmd->add_option(
         "--mode", args->mode,
         "analytical: the algorithm's closed form; flow: every rank explicit, its steps as "
         "flows sharing links max-min fairly")
      ->check(CLI::IsMember({"analytical", "flow"}))
      ->capture_default_str();
  cmd->add_flag("--json", args->json,
                "Print JSON: time_s, algbw_GBps, busbw_GBps, algorithm, protocol, channels "
                "per size");
  return [args]() { return run_collective(*args); };
}

}  // namespace orrery
