#include "dataflow/evaluation.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace orrery {

double workload_flop(const DataflowProblem& problem) {
  const LlmShape& llm = *problem.run.llm;
  double per_sample = 0;
  for (const DataflowKernel& k : problem.kernels)
    per_sample += dataflow_flop(k);
  return static_cast<double>(llm.layers) * static_cast<double>(llm.global_batch) * per_sample;
}

Evaluation evaluate(const DataflowProblem& problem, const DataflowGraph& graph,
                    const ShardingPlan& plan, const Mapping& mapping, const ModelOptions& options) {
  const CostTerms terms(problem, graph, plan, mapping, options);
  Evaluation ev;
  ev.mapping = mapping;
  ev.num_tile = terms.num_tile();
  ev.peak_gflops = terms.peak_gflops();
  for (size_t k = 0; k < problem.kernels.size(); ++k) {
    const KernelTerms& t = terms.kernel(k);
    ev.shards.push_back({t.shard_m, t.shard_k, t.shard_n});
  }
  for (size_t e = 0; e < graph.edges().size(); ++e)
    ev.edge_tile_bytes.push_back(terms.edge(e).tile_bytes);

  std::map<int64_t, std::vector<size_t>> members;
  for (const size_t k : graph.order())
    members[mapping.config[k]].push_back(k);
  double exposed_compute = 0, exposed_tp = 0, exposed_dp = 0;
  for (const auto& [index, kernels] : members) {
    const int64_t c = index;
    ConfigEvaluation ce{c, kernels,
                        terms.config(kernels, [&](size_t k) { return mapping.config[k] == c; })};
    const ConfigTiming& t = ce.timing;
    ev.all_config_ii_ns += t.ii_ns;
    const double busy = problem.run.overlap == OverlapStyle::None
                            ? t.compute_ns + t.memory_ns
                            : std::max(t.compute_ns, t.memory_ns);
    const double exposed = std::max(0.0, t.ii_ns - busy);
    const double network = t.network_ns();
    exposed_compute += t.ii_ns - exposed;
    exposed_tp += network > 0 ? exposed * t.tp_network_ns / network : 0.0;
    exposed_dp += network > 0 ? exposed * t.dp_network_ns / network : 0.0;
    if (!t.fits) {
      std::string names;
      for (const size_t k : kernels)
        names += (names.empty() ? "" : "+") + problem.kernels[k].name;
      ev.misfits.push_back(fmt::format(
          "configuration {} ({}) needs {:.0f} bytes of SRAM and {} cores; the chip has {:.0f} "
          "and {}",
          c, names, t.sram_bytes, kernels.size(), problem.system.sram_bytes, problem.system.cores));
    }
    ev.configs.push_back(std::move(ce));
  }

  ev.pipeline = pipeline_timing(problem, graph, mapping);
  ev.final_ns = ev.pipeline.iteration_ns(ev.all_config_ii_ns);
  const double scale =
      static_cast<double>(ev.pipeline.layers_per_stage) * ev.pipeline.samples_per_replica;
  ev.compute_ns = exposed_compute * scale;
  ev.tp_comm_ns = exposed_tp * scale;
  ev.dp_comm_ns = exposed_dp * scale;
  ev.bubble_ns = ev.all_config_ii_ns * (ev.pipeline.pipeline_factor - 1) * scale;

  ev.flop = workload_flop(problem);
  ev.utilization =
      ev.flop / (ev.final_ns * static_cast<double>(problem.system.chips) * ev.peak_gflops);
  ev.cost = system_cost(problem.system, problem.cost, mapping.shape);

  ev.dram_footprint_bytes =
      dram_footprint_bytes(problem, graph, terms, mapping.config, ev.pipeline.layers_per_stage);
  if (ev.dram_footprint_bytes > problem.system.dram_bytes)
    ev.misfits.push_back(fmt::format("the DRAM footprint ({:.4g} bytes) exceeds dram_cap ({:.4g})",
                                     ev.dram_footprint_bytes, problem.system.dram_bytes));
  return ev;
}

}  // namespace orrery
