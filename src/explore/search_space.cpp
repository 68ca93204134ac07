#include "explore/search_space.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/diagnostics.h"
#include "core/text.h"
#include "hardware/device_file.h"
#include "workload/parallelism.h"

namespace orrery::explore {
namespace {

const std::set<std::string> kPlanKeys = {"tp",
                                         "pp",
                                         "cp",
                                         "ep",
                                         "vpp",
                                         "mbs",
                                         "recompute",
                                         "sequence-parallel",
                                         "distributed-optimizer",
                                         "zero",
                                         "overlap-param-gather",
                                         "tp-comm-overlap"};
const std::set<std::string> kClusterKeys = {"cluster",         "gpus",      "device",
                                            "gpus-per-server", "nic-busbw", "nvlink-busbw"};

std::vector<int64_t> positive_integers(const Vary& v,
                                       int64_t maximum = std::numeric_limits<int64_t>::max()) {
  std::vector<int64_t> out;
  for (const std::string& text : v.values) {
    const auto n = parse_int64(text);
    if (!n || *n < 1)
      throw InputError("--vary " + v.key + ": expected positive integers, got '" + text + "'");
    if (*n > maximum)
      throw InputError("--vary " + v.key + ": expected integers up to " + std::to_string(maximum) +
                       ", got '" + text + "'");
    out.push_back(*n);
  }
  return out;
}

std::vector<bool> switches(const Vary& v) {
  std::vector<bool> out;
  for (const std::string& text : v.values) {
    if (text == "0" || text == "off" || text == "false")
      out.push_back(false);
    else if (text == "1" || text == "on" || text == "true")
      out.push_back(true);
    else
      throw InputError("--vary " + v.key + ": expected 0 or 1, got '" + text + "'");
  }
  return out;
}

std::vector<RecomputeMode> recompute_modes(const Vary& v) {
  std::vector<RecomputeMode> out;
  for (const std::string& text : v.values) {
    if (text == "none")
      out.push_back(RecomputeMode::None);
    else if (text == "selective")
      out.push_back(RecomputeMode::Selective);
    else if (text == "full")
      out.push_back(RecomputeMode::Full);
    else
      throw InputError("--vary recompute: expected none, selective or full, got '" + text + "'");
  }
  return out;
}

std::vector<std::optional<double>> bandwidths(const Vary& v) {
  std::vector<std::optional<double>> out;
  for (const std::string& text : v.values) {
    const auto x = parse_double(text);
    if (!x || *x <= 0)
      throw InputError("--vary " + v.key + ": expected positive bandwidths in GB/s, got '" + text +
                       "'");
    out.push_back(*x);
  }
  return out;
}

// The cluster with its GPUs per server and link bandwidths overridden (simulate's flags: the
// innermost dimension and the first fat-tree; a bandwidth in GB/s, the preset's efficiency kept).
Cluster overridden(Cluster c, std::optional<int64_t> gpus_per_server,
                   std::optional<double> nvlink_busbw, std::optional<double> nic_busbw) {
  std::vector<Dimension> dims = c.network.dimensions();
  if (nvlink_busbw) dims[0].link_bandwidth = Bandwidth::gb_per_second(*nvlink_busbw);
  if (nic_busbw) {
    const auto out = c.scale_out();
    if (!out)
      throw InputError("--vary nic-busbw: cluster '" + c.name + "' has no fat-tree dimension");
    dims[*out].link_bandwidth = Bandwidth::gb_per_second(*nic_busbw);
  }
  if (gpus_per_server) dims[0].size = *gpus_per_server;
  try {
    c.network = c.network.with_dimensions(std::move(dims));
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--vary: cluster '") + c.name + "': " + e.what());
  }
  return c;
}

std::string label(const std::string& cluster, std::optional<int64_t> gpus_per_server,
                  std::optional<double> nvlink, std::optional<double> nic) {
  std::string out = cluster;
  const auto number = [](double x) {
    std::string s = std::to_string(x);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  if (gpus_per_server) out += " gpus-per-server=" + std::to_string(*gpus_per_server);
  if (nvlink) out += " nvlink-busbw=" + number(*nvlink);
  if (nic) out += " nic-busbw=" + number(*nic);
  return out;
}

}  // namespace

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

Vary parse_vary(const std::string& text) {
  const size_t eq = text.find('=');
  Vary v;
  v.key = std::string(trim(text.substr(0, eq)));
  if (eq == std::string::npos) throw InputError("--vary " + text + ": expected KEY=V1,V2,...");
  if (!kPlanKeys.contains(v.key) && !kClusterKeys.contains(v.key))
    throw InputError("--vary " + v.key +
                     ": unknown key; expected one of tp pp cp ep vpp mbs recompute "
                     "sequence-parallel distributed-optimizer zero overlap-param-gather "
                     "tp-comm-overlap cluster gpus device gpus-per-server nic-busbw "
                     "nvlink-busbw");
  for (std::string_view value : split(std::string_view(text).substr(eq + 1), ','))
    if (!trim(value).empty()) v.values.emplace_back(trim(value));
  if (v.values.empty()) throw InputError("--vary " + v.key + ": expected at least one value");
  return v;
}

void apply_varies(const std::vector<Vary>& varies, PlanAxes& p, ClusterAxes& c) {
  for (const Vary& v : varies) {
    const std::string& k = v.key;
    if (k == "tp") p.tp = positive_integers(v);
    if (k == "pp") p.pp = positive_integers(v);
    if (k == "vpp") p.vpp = positive_integers(v);
    if (k == "cp") p.cp = positive_integers(v);
    if (k == "ep") p.ep = positive_integers(v);
    if (k == "mbs") p.mbs = positive_integers(v);
    if (k == "recompute") p.recompute = recompute_modes(v);
    if (k == "sequence-parallel") p.sequence_parallel = switches(v);
    if (k == "distributed-optimizer") p.distributed_optimizer = switches(v);
    if (k == "overlap-param-gather") p.overlap_param_gather = switches(v);
    if (k == "tp-comm-overlap") p.tp_comm_overlap = switches(v);
    if (k == "zero") {
      p.zero.emplace();
      for (const std::string& text : v.values) {
        const auto n = parse_int64(text);
        if (!n || *n < 0 || *n > 3)
          throw InputError("--vary zero: expected stages 0 to 3, got '" + text + "'");
        p.zero->push_back(*n);
      }
    }
    if (k == "cluster") c.clusters = v.values;
    if (k == "gpus") c.gpus = positive_integers(v, kMaxWorldSize);
    if (k == "device") c.devices = v.values;
    if (k == "gpus-per-server") {
      c.gpus_per_server.clear();
      for (int64_t n : positive_integers(v))
        c.gpus_per_server.emplace_back(n);
    }
    if (k == "nic-busbw") c.nic_busbw = bandwidths(v);
    if (k == "nvlink-busbw") c.nvlink_busbw = bandwidths(v);
  }
}

std::vector<ClusterChoice> cluster_choices(const ClusterAxes& a) {
  std::vector<ClusterChoice> out;
  for (const std::string& name : a.clusters) {
    const Cluster base = load_cluster(name);
    for (const auto& gps : a.gpus_per_server)
      for (const auto& nvlink : a.nvlink_busbw)
        for (const auto& nic : a.nic_busbw) {
          const Cluster cluster = overridden(base, gps, nvlink, nic);
          for (const std::string& device : a.devices) {
            const std::string gpu = device.empty() ? cluster.gpu : device;
            if (device.empty() && device_preset_text(gpu).empty())
              throw InputError("--cluster " + name + ": its gpu '" + gpu +
                               "' is no known device; give --device");
            const Device resolved = load_device(gpu);
            for (int64_t gpus : a.gpus)
              out.push_back({label(name, gps, nvlink, nic), cluster, device, resolved, gpus});
          }
        }
  }
  return out;
}

FilledAxes fill_axes(const ModelSpec& spec, int64_t seq, const PlanAxes& axes,
                     const std::vector<ClusterChoice>& clusters) {
  FilledAxes a;
  int64_t domain = 1;
  for (const ClusterChoice& c : clusters)
    domain = std::max(domain, c.cluster.gpus_per_server());
  if (axes.tp) {
    a.tp = *axes.tp;
  } else {
    for (int64_t d : divisors(spec.heads))
      if (d <= domain) a.tp.push_back(d);
  }
  a.pp = axes.pp.value_or(divisors(spec.layers));
  a.vpp = axes.vpp;
  a.cp = axes.cp.value_or(seq >= 8192 ? std::vector<int64_t>{1, 2, 4, 8} : std::vector<int64_t>{1});
  a.ep = axes.ep.value_or(spec.moe ? divisors(spec.moe->experts) : std::vector<int64_t>{1});
  a.mbs = axes.mbs.value_or(std::vector<int64_t>{1, 2, 4, 8});
  a.zero = axes.zero.value_or(std::vector<int64_t>{0, 1, 2, 3});
  a.recompute = axes.recompute.value_or(std::vector<RecomputeMode>{
      RecomputeMode::None, RecomputeMode::Selective, RecomputeMode::Full});
  a.sequence_parallel = axes.sequence_parallel.value_or(std::vector<bool>{false, true});
  a.distributed_optimizer = axes.distributed_optimizer;
  a.overlap_param_gather = axes.overlap_param_gather.value_or(std::vector<bool>{false});
  a.tp_comm_overlap = axes.tp_comm_overlap.value_or(std::vector<bool>{false});
  return a;
}

}  // namespace orrery::explore
