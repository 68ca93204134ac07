// Random valid inputs for the property tests: workloads built in code (as the training tests
// build theirs) and the clusters they run on, drawn from a seeded generator so every run sees the
// same cases. Draws use the generator's raw output (no std distributions, whose results differ
// between standard libraries), so a failing case is the same case everywhere; its label says
// how to rebuild it.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "training/simulation_options.h"
#include "training/synthetic_workloads.h"
#include "workload/workload.h"

namespace orrery::testing {

class Draw {
 public:
  explicit Draw(uint64_t seed) : engine_(seed) {}

  // An integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(engine_() % static_cast<uint64_t>(hi - lo + 1));
  }
  // A number in [lo, hi), evenly in log scale: times and sizes over several decades.
  double log_between(double lo, double hi) {
    const double u = static_cast<double>(engine_() >> 11) * 0x1.0p-53;
    return lo * std::pow(hi / lo, u);
  }
  bool chance(double p) { return static_cast<double>(engine_() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& pick(const std::vector<T>& options) {
    return options[static_cast<size_t>(between(0, static_cast<int64_t>(options.size()) - 1))];
  }

 private:
  std::mt19937_64 engine_;
};

// One case: a workload, the cluster it runs on and the options it runs with.
struct RandomCase {
  std::string label;
  Workload workload;
  Cluster cluster;
  SimulationOptions options;
};

inline Communication random_comm(Draw& draw, CommGroup group,
                                 const std::vector<CollectiveKind>& kinds) {
  return {draw.pick(kinds), group, static_cast<Bytes>(draw.log_between(1e3, 2e8))};
}

// A layer with compute of 1 us to 2 ms per phase and, sometimes, a collective of 1 kB to 200 MB
// per phase in the groups a Megatron layer uses.
inline Layer random_layer(Draw& draw, const std::string& name, bool experts) {
  Layer l = layer(name, us(draw.log_between(1, 2000)), us(draw.log_between(1, 2000)),
                  us(draw.log_between(1, 2000)));
  using K = CollectiveKind;
  if (draw.chance(0.5)) l.forward.comm = random_comm(draw, CommGroup::Tensor, {K::AllReduce});
  if (experts && draw.chance(0.3))
    l.forward.comm = random_comm(draw, CommGroup::Expert, {K::AllToAll});
  if (draw.chance(0.4))
    l.input_grad.comm =
        random_comm(draw, CommGroup::Tensor, {K::AllReduce, K::AllGather, K::ReduceScatter});
  if (draw.chance(0.3)) l.weight_grad.comm = random_comm(draw, CommGroup::Data, {K::AllReduce});
  if (experts && draw.chance(0.2))
    l.weight_grad.comm = random_comm(draw, CommGroup::ExpertData, {K::AllReduce});
  return l;
}

// The clusters cases run on: presets of every network kind (NVSwitch with and without NVLS,
// rail-optimized fat-trees, a 3-D torus) and the ideal-link test cluster whose times the
// training tests derive by hand.
inline std::vector<std::string> property_clusters() {
  return {"test",          "dgx-a100", "hgx-h100",    "hgx-h100-roce400",
          "simai-default", "mi300x",   "gb200-nvl72", "tpu-v4"};
}

inline Cluster cluster_named(const std::string& name) {
  return name == "test" ? test_cluster() : load_cluster(name);
}

// A random job of at most 128 GPUs: tp 1 to 8, pp 1 to 4, dp 1 to 4 (ep 2 when dp is even, at
// times), vpp 1 or 2, 1 to 8 micro-batches of 1 to 4 layers each (at least vpp), iteration-level
// rows before and after the passes (an AICB-style gradient reduce-scatter, an optimizer with a
// parameter all-gather), transfers between stages or none; one of the schedules that can run
// it, fixed; overlap on or off.
inline RandomCase random_case(uint64_t seed) {
  Draw draw(seed);
  RandomCase c;
  const int64_t tp = draw.pick<int64_t>({1, 2, 4, 8});
  const int64_t pp = draw.between(1, 4);
  const int64_t dp = draw.between(1, 4);
  const int64_t ep = dp % 2 == 0 && draw.chance(0.3) ? 2 : 1;
  const int64_t vpp = draw.chance(0.3) ? 2 : 1;
  const int64_t micro_batches = draw.between(1, 8);
  const int64_t layers = draw.between(vpp, 4);

  Workload& w = c.workload;
  w.name = "random-" + std::to_string(seed);
  w.source = w.name + ".txt";
  w.parallelism = {tp, pp, ep, vpp, micro_batches, tp * pp * dp};
  w.stage_boundary_bytes =
      draw.chance(0.7) ? static_cast<Bytes>(draw.log_between(1e3, 6e7)) : Bytes{0};
  Program& p = w.program;
  if (draw.chance(0.3)) {  // a gradient reduction listed before the passes, as AICB writes it
    Layer reduce = layer("grad_param_comm", Time::zero(), Time::zero(), Time::zero());
    reduce.weight_grad.comm = random_comm(draw, CommGroup::Data, {CollectiveKind::ReduceScatter});
    p.layers.push_back(reduce);
  }
  p.before = {0, p.layers.size()};
  // Every pass has the same layers (a model); their costs are drawn once.
  std::vector<Layer> body;
  for (int64_t k = 0; k < layers; ++k)
    body.push_back(random_layer(draw, "layer" + std::to_string(k), ep > 1));
  for (int64_t mb = 0; mb < micro_batches; ++mb) {
    const size_t begin = p.layers.size();
    p.layers.insert(p.layers.end(), body.begin(), body.end());
    p.micro_batches.push_back({begin, p.layers.size()});
  }
  const size_t after = p.layers.size();
  if (draw.chance(0.7)) {
    Layer optimizer = layer("optimizer", us(draw.log_between(1, 5000)), Time::zero(), Time::zero());
    if (draw.chance(0.5))
      optimizer.weight_grad.comm = random_comm(draw, CommGroup::Data, {CollectiveKind::AllGather});
    p.layers.push_back(optimizer);
  }
  p.after = {after, p.layers.size()};

  const std::string cluster = draw.pick(property_clusters());
  c.cluster = cluster_named(cluster);
  std::vector<ScheduleKind> schedules = {ScheduleKind::GPipe, ScheduleKind::OneFOneB};
  if (vpp > 1 && pp > 1) schedules.push_back(ScheduleKind::Interleaved);
  c.options.schedule = draw.pick(schedules);
  c.options.overlap = draw.chance(0.7);
  c.options.algorithm = draw.chance(0.7) ? Algorithm::Auto : Algorithm::Ring;

  c.label = "seed " + std::to_string(seed) + ": tp " + std::to_string(tp) + " pp " +
            std::to_string(pp) + " dp " + std::to_string(dp) + " ep " + std::to_string(ep) +
            " vpp " + std::to_string(vpp) + " m " + std::to_string(micro_batches) + " layers " +
            std::to_string(layers) + " on " + cluster + ", " +
            std::string(to_string(c.options.schedule)) +
            (c.options.overlap ? ", overlap" : ", no overlap") + ", algo " +
            std::string(to_string(c.options.algorithm));
  return c;
}

// The same cluster with every dimension's link bandwidth (or only dimension `only`'s) times
// `factor`, everything else kept.
inline Cluster with_bandwidth(const Cluster& c, double factor, std::optional<size_t> only = {}) {
  Cluster faster = c;
  std::vector<Dimension> dims = c.network.dimensions();
  for (size_t d = 0; d < dims.size(); ++d)
    if (!only || *only == d) dims[d].link_bandwidth = dims[d].link_bandwidth * factor;
  faster.network = Topology(dims);
  faster.network.set_gpu_memory(c.network.gpu_memory());
  faster.network.set_ideal_links(c.network.ideal_links());
  return faster;
}

// The same workload on a device `factor` times faster: every compute span divided by it.
inline Workload with_faster_compute(const Workload& w, double factor) {
  Workload faster = w;
  for (Layer& l : faster.program.layers)
    for (Phase* phase : {&l.forward, &l.input_grad, &l.weight_grad})
      phase->compute = phase->compute.scaled(1 / factor);
  return faster;
}

}  // namespace orrery::testing
