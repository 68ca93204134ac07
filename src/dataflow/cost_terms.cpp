#include "dataflow/cost_terms.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "dataflow/collective_ratio.h"

namespace orrery {
namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

bool splits_rows(TensorAxis a) {
  return a == TensorAxis::Outer || a == TensorAxis::M;
}

// Each distinct value of ceil(a / x) for x = 1..a, with the smallest x giving it: (x, value).
std::vector<std::pair<int64_t, int64_t>> ceiling_steps(int64_t a) {
  std::vector<std::pair<int64_t, int64_t>> steps;
  for (int64_t x = 1; x <= a;) {
    const int64_t v = ceil_div(a, x);
    steps.push_back({x, v});
    if (v == 1) break;
    x = ceil_div(a, v - 1);  // the first x with ceil(a / x) < v
  }
  return steps;
}

// The cycles per tile of one kernel on lanes x stages cores (lanes across shard_M in units of the
// systolic width, stages across shard_N in units of its height; SIMD kernels use one stage), as
// the Pareto steps of cores against cycles within the chip's cores.
std::vector<KernelTerms::CycleStep> cycle_steps(const KernelTerms& t, const DataflowKernel& k,
                                                const DataflowSystem& s) {
  const double work = k.num_input > 0 ? static_cast<double>(k.num_input) : 1.0;
  const bool systolic = k.unit == KernelUnit::Systolic;
  const auto lanes = ceiling_steps(ceil_div(t.shard_m, s.systolic_width));
  const auto stages = systolic ? ceiling_steps(ceil_div(t.shard_n, s.systolic_height))
                               : std::vector<std::pair<int64_t, int64_t>>{{1, t.shard_n}};
  const double depth = systolic ? static_cast<double>(t.shard_k) : 1.0;
  const auto cycles = [&](int64_t rows, int64_t columns) {
    return static_cast<double>(rows) * static_cast<double>(columns) * depth * work;
  };
  std::vector<KernelTerms::CycleStep> steps;
  // The fewest cycles at each core count, swept in order of cores; for a chip of up to 2^16
  // cores this is a table, cheaper than sorting every lane x stage pair.
  const int64_t most = std::min(s.cores, lanes.back().first * stages.back().first);
  if (most <= (int64_t{1} << 16)) {
    std::vector<double> fewest(static_cast<size_t>(most) + 1,
                               std::numeric_limits<double>::infinity());
    for (const auto& [l, rows] : lanes)
      for (const auto& [st, columns] : stages)
        if (l * st <= most) {
          double& slot = fewest[static_cast<size_t>(l * st)];
          slot = std::min(slot, cycles(rows, columns));
        }
    for (int64_t c = 1; c <= most; ++c) {
      const double v = fewest[static_cast<size_t>(c)];
      if (steps.empty() ? v < std::numeric_limits<double>::infinity() : v < steps.back().cycles)
        steps.push_back({c, v});
    }
    return steps;
  }
  std::vector<KernelTerms::CycleStep> all;
  for (const auto& [l, rows] : lanes)
    for (const auto& [st, columns] : stages)
      if (l * st <= s.cores) all.push_back({l * st, cycles(rows, columns)});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.cores != b.cores ? a.cores < b.cores : a.cycles < b.cycles;
  });
  for (const auto& step : all)
    if (steps.empty() || step.cycles < steps.back().cycles) steps.push_back(step);
  return steps;
}

}  // namespace

RoleLink role_link(const DataflowSystem& system, const Mapping& mapping, ParallelRole role) {
  for (size_t i = 0; i < mapping.roles.size() && i < system.dimensions.size(); ++i)
    if (mapping.roles[i] == role)
      return {system.dimensions[i].kind, system.dimensions[i].link_gbps};
  return {};
}

CostTerms::CostTerms(const DataflowProblem& problem, const DataflowGraph& graph,
                     const ShardingPlan& plan, const Mapping& mapping, const ModelOptions& options)
    : problem_(problem), graph_(graph), options_(options) {
  const LlmShape& llm = *problem.run.llm;
  const DataflowSystem& sys = problem.system;
  const double word = static_cast<double>(problem.run.word_bytes);
  const double f = options.allreduce_factor;
  num_tile_ = mapping.num_tile(llm.seq_len);
  const double tiles = static_cast<double>(num_tile_);
  const double n_mb = static_cast<double>(mapping.micro_batches(llm.global_batch));
  peak_gflops_ = 2.0 * static_cast<double>(sys.systolic_width) *
                 static_cast<double>(sys.systolic_height) * static_cast<double>(sys.cores) *
                 sys.freq_ghz;
  cycle_mode_ = problem.run.compute_util <= 0;
  const double rate = problem.run.compute_util * peak_gflops_;

  const RoleLink tp = role_link(sys, mapping, ParallelRole::Tensor);
  const RoleLink dp = role_link(sys, mapping, ParallelRole::Data);
  const double rho_ar = collective_ratio(RatioKind::AllReduce, tp.kind, mapping.tp, tp.gbps);
  const double rho_ag = collective_ratio(RatioKind::AllGather, tp.kind, mapping.tp, tp.gbps);
  const double rho_a2a = collective_ratio(RatioKind::AllToAll, tp.kind, mapping.tp, tp.gbps);
  const double rho_arp = collective_ratio(RatioKind::AllReduce, dp.kind, mapping.dp, dp.gbps);

  kernels_.resize(problem.kernels.size());
  for (size_t i = 0; i < problem.kernels.size(); ++i) {
    const DataflowKernel& k = problem.kernels[i];
    KernelTerms& t = kernels_[i];
    const TensorAxis shard = plan.axis[i];
    const int64_t m_total = k.outer * k.m;
    t.shard_m = splits_rows(shard)      ? ceil_div(m_total, mapping.tp)
                : splits_rows(k.tiling) ? ceil_div(m_total, num_tile_)
                                        : m_total;
    t.shard_k = shard == TensorAxis::K      ? ceil_div(k.k, mapping.tp)
                : k.tiling == TensorAxis::K ? ceil_div(k.k, num_tile_)
                                            : k.k;
    t.shard_n = shard == TensorAxis::N      ? ceil_div(k.n, mapping.tp)
                : k.tiling == TensorAxis::N ? ceil_div(k.n, num_tile_)
                                            : k.n;
    const double sm = static_cast<double>(t.shard_m), sk = static_cast<double>(t.shard_k),
                 sn = static_cast<double>(t.shard_n);
    const double flop_tile = dataflow_flop(k, sm, sk, sn);
    if (!cycle_mode_) t.compute_ns = tiles * flop_tile / rate;
    const double out_tile_bytes = sm * sn * word;
    switch (plan.collective[i]) {
      case DataflowCollective::AllReduce:
        t.tp_network_ns = f * rho_ar * out_tile_bytes * tiles;
        break;
      case DataflowCollective::AllGather:
        t.tp_network_ns = rho_ag * out_tile_bytes * tiles;
        break;
      case DataflowCollective::AllToAll:
        t.tp_network_ns = rho_a2a * out_tile_bytes * tiles;
        break;
      case DataflowCollective::AllReducePeriodic:
        t.dp_network_ns = f * rho_arp * out_tile_bytes / n_mb;
        break;
      default:
        break;
    }
    t.memory_extra_bytes = k.memory_bytes;
    if (k.variant == KernelVariant::GemmInputWeight) t.weight_bytes = sm * sk * word;
    if (cycle_mode_) {
      t.cycle_steps = cycle_steps(t, k, sys);
      for (const auto& step : t.cycle_steps)
        cycle_values_.push_back(step.cycles);
    }
  }
  std::sort(cycle_values_.begin(), cycle_values_.end());
  cycle_values_.erase(std::unique(cycle_values_.begin(), cycle_values_.end()), cycle_values_.end());

  edges_.resize(graph.edges().size());
  for (size_t e = 0; e < graph.edges().size(); ++e) {
    const GraphEdge& ge = graph.edges()[e];
    const KernelTerms& producer = kernels_[ge.from];
    EdgeTerms& t = edges_[e];
    t.tile_bytes =
        static_cast<double>(producer.shard_m) * static_cast<double>(producer.shard_n) * word;
    t.buffer_depth = ge.buffer_depth;
    switch (plan.edge_collective[e]) {
      case DataflowCollective::AllGather:
        t.tp_network_ns = rho_ag * t.tile_bytes * tiles;
        break;
      case DataflowCollective::AllToAll:
        t.tp_network_ns = rho_a2a * t.tile_bytes * tiles;
        break;
      case DataflowCollective::AllReduce:
        t.tp_network_ns = f * rho_ar * t.tile_bytes * tiles;
        break;
      default:
        break;
    }
  }
}

double CostTerms::cycle_mode_compute_ns(const std::vector<size_t>& members, double at_least,
                                        bool& fits, double& cycles) const {
  // The smallest cycle count T such that giving each kernel the fewest cores that reach T fits
  // in the chip's cores (a min-max allocation: each kernel's cycles fall as its cores grow).
  const int64_t cores = problem_.system.cores;
  const auto cores_needed = [&](double target) {
    int64_t total = 0;
    for (const size_t k : members) {
      const auto& steps = kernels_[k].cycle_steps;
      const auto it = std::partition_point(steps.begin(), steps.end(),
                                           [&](const auto& s) { return s.cycles > target; });
      if (it == steps.end()) return cores + 1;
      total += it->cores;
    }
    return total;
  };
  // No kernel goes below its fewest cycles (all cores), so the answer is at least their max,
  // and at least `at_least` (the answer for some of the members).
  double floor = at_least;
  for (const size_t k : members)
    if (!kernels_[k].cycle_steps.empty())
      floor = std::max(floor, kernels_[k].cycle_steps.back().cycles);
  const auto from = std::lower_bound(cycle_values_.begin(), cycle_values_.end(), floor);
  // The answer is usually at or just above the floor: gallop, then bisect the last stride.
  const auto too_few = [&](double t) { return cores_needed(t) > cores; };
  auto low = from;
  size_t stride = 1;
  while (low != cycle_values_.end() && too_few(*low)) {
    const auto left = static_cast<size_t>(cycle_values_.end() - low);
    const auto next = low + static_cast<std::ptrdiff_t>(std::min(stride, left));
    if (next == cycle_values_.end() || !too_few(*next)) {
      low = std::partition_point(low + 1, next, too_few);
      break;
    }
    low = next;
    stride *= 2;
  }
  if (low == cycle_values_.end()) {
    fits = false;
    return 0;
  }
  cycles = *low;
  return static_cast<double>(num_tile_) * *low / problem_.system.freq_ghz;
}

ConfigTiming CostTerms::finish(const Sums& s, const std::vector<size_t>& members) const {
  ConfigTiming c;
  const double tiles = static_cast<double>(num_tile_);
  c.compute_ns = cycle_mode_
                     ? cycle_mode_compute_ns(members, s.cycles_at_least, c.fits, c.cycles_per_tile)
                     : s.compute_ns;
  c.cores_fit = c.fits && s.kernels <= problem_.system.cores;
  c.memory_ns = (tiles * s.staged_tile_bytes + s.memory_extra_bytes) / problem_.system.dram_gbps;
  c.tp_network_ns = s.tp_network_ns;
  c.dp_network_ns = s.dp_network_ns;
  const double network = c.network_ns();
  switch (problem_.run.overlap) {
    case OverlapStyle::None:
      c.ii_ns = c.compute_ns + c.memory_ns + network;
      break;
    case OverlapStyle::Perfect:
      c.ii_ns = std::max({c.compute_ns, c.memory_ns, network});
      break;
    case OverlapStyle::ComputeMemory:
      c.ii_ns = std::max(c.compute_ns, c.memory_ns) + network;
      break;
  }
  c.sram_bytes = options_.staging_buffers * s.staged_tile_bytes + s.fused_sram_bytes +
                 static_cast<double>(s.weighted);
  if (c.sram_bytes > problem_.system.sram_bytes) c.fits = false;
  if (s.kernels > problem_.system.cores) c.fits = false;
  return c;
}

double dram_footprint_bytes(const DataflowProblem& problem, const DataflowGraph& graph,
                            const CostTerms& terms, const std::vector<int64_t>& config,
                            int64_t layers_per_stage) {
  double weights = 0, staged = 0;
  for (size_t k = 0; k < problem.kernels.size(); ++k)
    if (!problem.kernels[k].backward) weights += terms.kernel(k).weight_bytes;
  for (size_t e = 0; e < graph.edges().size(); ++e)
    if (config[graph.edges()[e].from] != config[graph.edges()[e].to])
      staged += 2 * terms.edge(e).tile_bytes;  // written in one configuration, read in another
  return weights * static_cast<double>(layers_per_stage) + 2 * weights +
         4 * static_cast<double>(terms.num_tile()) * staged;
}

PipelineTiming pipeline_timing(const DataflowProblem& problem, const DataflowGraph& graph,
                               const Mapping& mapping) {
  const LlmShape& llm = *problem.run.llm;
  PipelineTiming p;
  p.layers_per_stage = mapping.layers_per_stage(llm.layers);
  p.micro_batches = mapping.micro_batches(llm.global_batch);
  p.samples_per_replica = static_cast<double>(llm.global_batch) / static_cast<double>(mapping.dp);
  const double c = p.layers_per_stage >= 2 ? static_cast<double>(p.layers_per_stage - 1) : 1.0;
  p.pipeline_factor =
      1.0 + static_cast<double>(mapping.pp - 1) / (static_cast<double>(p.micro_batches) * c);
  if (mapping.pp > 1 && graph.has_backward()) {
    const RoleLink pp = role_link(problem.system, mapping, ParallelRole::Pipeline);
    const double rho = collective_ratio(RatioKind::PointToPoint, pp.kind, mapping.pp, pp.gbps);
    const double boundary = 2.0 * static_cast<double>(llm.hidden) *
                            static_cast<double>(llm.seq_len) *
                            static_cast<double>(problem.run.word_bytes);
    p.p2p_ns = rho * boundary * static_cast<double>(llm.layers);
  }
  return p;
}

}  // namespace orrery
