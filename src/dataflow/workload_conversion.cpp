#include "dataflow/workload_conversion.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "dataflow/cost_terms.h"

namespace orrery {
namespace {

Time from_ns(double ns) {
  return Time::from_ps(std::llround(ns * 1000.0));
}

enum class Part : uint8_t { Forward, InputGrad, WeightGrad };

// One configuration's work for one micro-batch, split into the phases of an IR row.
struct ConfigWork {
  int64_t config = 0;
  std::string name;
  int64_t line = 0;
  double ns[3] = {0, 0, 0};                      // per Part
  std::map<CollectiveKind, double> tp_bytes[3];  // per Part
  bool has[3] = {false, false, false};
};

Phase phase_of(const ConfigWork& w, Part p, std::vector<std::string>& caveats) {
  const auto i = static_cast<size_t>(p);
  Phase phase;
  phase.compute = from_ns(w.ns[i]);
  if (!w.tp_bytes[i].empty()) {
    const auto largest =
        std::max_element(w.tp_bytes[i].begin(), w.tp_bytes[i].end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    double bytes = 0;
    for (const auto& [kind, b] : w.tp_bytes[i])
      bytes += b;
    if (w.tp_bytes[i].size() > 1)
      caveats.push_back(
          fmt::format("configuration {} has tensor-parallel collectives of several "
                      "kinds; merged into one {}",
                      w.config, to_string(largest->first)));
    phase.comm =
        Communication{largest->first, CommGroup::Tensor, static_cast<Bytes>(std::llround(bytes))};
  }
  return phase;
}

}  // namespace

ConvertedWorkload to_workload(const DataflowProblem& problem, const DataflowGraph& graph,
                              const ShardingPlan& plan, const Evaluation& ev) {
  if (!graph.has_backward())
    throw InputError(
        {problem.source, problem.graph_line},
        "dataflow_graph: expected backward kernels to convert; this forward-only (inference) "
        "graph cannot become a training workload: the event simulator runs forward and "
        "backward passes with stage-to-stage transfers both ways, while DFModel prices "
        "inference as II * phi * L_s * B / DP with no transfers (T_p2p = 0); use `orrery "
        "simulate` without --mode");
  const LlmShape& llm = *problem.run.llm;
  const Mapping& m = ev.mapping;
  const double word = static_cast<double>(problem.run.word_bytes);
  const double samples = static_cast<double>(m.micro_batch);
  ConvertedWorkload out;
  std::vector<std::string>& caveats = out.network.caveats;

  // Per configuration: its busy time split over the phases by FLOP, and its collectives.
  std::vector<ConfigWork> work;
  double gradient_bytes = 0;  // per chip, one layer
  for (const ConfigEvaluation& c : ev.configs) {
    ConfigWork w;
    w.config = c.index;
    const size_t first = c.kernels.front();
    w.name = problem.kernels[first].name +
             (c.kernels.size() > 1 ? fmt::format("+{}", c.kernels.size() - 1) : "");
    w.line = problem.kernels[first].line;
    const double busy = problem.run.overlap == OverlapStyle::None
                            ? c.timing.compute_ns + c.timing.memory_ns
                            : std::max(c.timing.compute_ns, c.timing.memory_ns);
    double total_flop = 0;
    for (const size_t k : c.kernels)
      total_flop += dataflow_flop(problem.kernels[k]);
    for (const size_t k : c.kernels) {
      const DataflowKernel& kernel = problem.kernels[k];
      const bool gradient = plan.collective[k] == DataflowCollective::AllReducePeriodic;
      const Part part = !kernel.backward ? Part::Forward
                        : gradient       ? Part::WeightGrad
                                         : Part::InputGrad;
      const auto i = static_cast<size_t>(part);
      const double share = total_flop > 0 ? dataflow_flop(kernel) / total_flop
                                          : 1.0 / static_cast<double>(c.kernels.size());
      w.ns[i] += busy * share * samples;
      w.has[i] = true;
      const KernelShard& s = ev.shards[k];
      const double out_bytes = static_cast<double>(s.m) * static_cast<double>(s.n) * word;
      if (gradient) gradient_bytes += out_bytes;
      const auto tp_collective = [&](DataflowCollective dc, double bytes) {
        if (m.tp <= 1) return;
        std::optional<CollectiveKind> kind;
        if (dc == DataflowCollective::AllReduce) kind = CollectiveKind::AllReduce;
        if (dc == DataflowCollective::AllGather) kind = CollectiveKind::AllGather;
        if (dc == DataflowCollective::AllToAll) kind = CollectiveKind::AllToAll;
        if (kind) w.tp_bytes[i][*kind] += bytes * static_cast<double>(ev.num_tile) * samples;
      };
      // The stage-1 collectives of the plan evaluated are the kernel's own collective and the
      // re-layouts of its outputs.
      tp_collective(plan.collective[k], out_bytes);
      for (const size_t e : graph.out_edges(k))
        tp_collective(plan.edge_collective[e], ev.edge_tile_bytes[e]);
    }
    work.push_back(std::move(w));
  }

  Workload& wl = out.workload;
  wl.name = problem.name;
  wl.source = problem.source;
  wl.format = "dfmodel";
  wl.policy = "HYBRID_TRANSFORMER";
  wl.parallelism.tp = m.tp;
  wl.parallelism.pp = m.pp;
  wl.parallelism.world_size = problem.system.chips;
  wl.parallelism.micro_batches = ev.pipeline.micro_batches;
  wl.stage_boundary_bytes = static_cast<Bytes>(std::llround(
      static_cast<double>(llm.hidden) * static_cast<double>(llm.seq_len) * word * samples));

  // Every micro-batch lists its own rows, each about kTasksPerLayerRun tasks on each of the pp
  // stages: past kMaxStageTasks the conversion alone would take gigabytes before the event
  // simulation refuses it.
  size_t rows_per_layer = 0;
  for (const ConfigWork& w : work)
    rows_per_layer += (w.has[0] ? 1 : 0) + (w.has[1] || w.has[2] ? 1 : 0);
  const double tasks = kTasksPerLayerRun * static_cast<double>(m.pp) *
                       static_cast<double>(ev.pipeline.micro_batches) *
                       (1.0 + static_cast<double>(ev.pipeline.layers_per_stage) *
                                  static_cast<double>(rows_per_layer));
  if (tasks > static_cast<double>(kMaxStageTasks))
    throw InputError(
        {problem.source, problem.graph_line},
        fmt::format("expected a mapping the event simulation can hold: about {:.0f} "
                    "million tasks (pp {} x {} micro-batches x {} layers a stage x {} "
                    "kernel rows x {:.0f}) exceed the {} million it takes; `orrery "
                    "simulate` without --mode takes any size",
                    tasks / 1e6, m.pp, ev.pipeline.micro_batches, ev.pipeline.layers_per_stage,
                    rows_per_layer, kTasksPerLayerRun, kMaxStageTasks / 1'000'000));

  Program& program = wl.program;
  if (gradient_bytes > 0) {
    Layer row;
    row.name = "dp_gradient_allreduce";
    row.weight_grad.comm = Communication{
        CollectiveKind::AllReduce, CommGroup::Data,
        static_cast<Bytes>(
            std::llround(gradient_bytes * static_cast<double>(ev.pipeline.layers_per_stage)))};
    program.layers.push_back(row);
  }
  program.before = {0, program.layers.size()};
  for (int64_t mb = 0; mb < ev.pipeline.micro_batches; ++mb) {
    const size_t begin = program.layers.size();
    Layer marker;
    marker.name = "embedding_layer";
    program.layers.push_back(marker);
    for (int64_t layer = 0; layer < ev.pipeline.layers_per_stage; ++layer) {
      const auto row = [&](const ConfigWork& w, bool backward) {
        Layer l;
        l.name = fmt::format("l{}.c{}.{}", layer, w.config, w.name);
        l.line = w.line;
        if (backward) {
          l.input_grad = phase_of(w, Part::InputGrad, caveats);
          l.weight_grad = phase_of(w, Part::WeightGrad, caveats);
        } else {
          l.forward = phase_of(w, Part::Forward, caveats);
        }
        program.layers.push_back(std::move(l));
      };
      for (const ConfigWork& w : work)
        if (w.has[0]) row(w, false);
      for (auto w = work.rbegin(); w != work.rend(); ++w)
        if (w->has[1] || w->has[2]) row(*w, true);
    }
    program.micro_batches.push_back({begin, program.layers.size()});
  }
  program.after = {program.layers.size(), program.layers.size()};
  std::sort(caveats.begin(), caveats.end());
  caveats.erase(std::unique(caveats.begin(), caveats.end()), caveats.end());

  // The equivalent two-tier network.
  EquivalentNetwork& net = out.network;
  const RoleLink tp = role_link(problem.system, m, ParallelRole::Tensor);
  const RoleLink dp = role_link(problem.system, m, ParallelRole::Data);
  const RoleLink pp = role_link(problem.system, m, ParallelRole::Pipeline);
  net.chips_per_server = m.tp;
  net.scale_out_gbps = m.dp > 1   ? dp.gbps
                       : m.pp > 1 ? pp.gbps
                                  : problem.system.dimensions[0].link_gbps;
  net.scale_up_gbps = m.tp > 1 ? tp.gbps : net.scale_out_gbps;
  if (m.dp > 1 && m.pp > 1 && dp.gbps != pp.gbps)
    caveats.push_back(
        fmt::format("stage-to-stage transfers are priced at the DP dimension's {:g} "
                    "GB/s, not the PP dimension's {:g} GB/s",
                    dp.gbps, pp.gbps));
  if ((m.dp > 1 && dp.kind == LinkKind::FullMesh) || (m.tp > 1 && tp.kind == LinkKind::FullMesh))
    caveats.push_back(
        "a full-mesh dimension's all-reduce (1/(n beta) per byte in DFModel) is "
        "priced as a ring ((n-1)/(n beta)) by Orrery's network model");
  return out;
}

}  // namespace orrery
