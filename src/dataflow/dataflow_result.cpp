#include "dataflow/dataflow_result.h"

#include <cmath>

#include <fmt/format.h>

namespace orrery {
namespace {

Time from_ns(double ns) {
  return Time::from_ps(std::llround(ns * 1000.0));
}

std::string_view role_name(ParallelRole r) {
  switch (r) {
    case ParallelRole::Tensor:
      return "TP";
    case ParallelRole::Pipeline:
      return "PP";
    case ParallelRole::Data:
      return "DP";
    case ParallelRole::Unassigned:
      break;
  }
  return "-";
}

std::string_view style_name(ExecutionStyle s) {
  return s == ExecutionStyle::Dataflow ? "DATAFLOW" : "KERNEL_BY_KERNEL";
}

DataflowMappingRow mapping_row(const RankedMapping& r) {
  DataflowMappingRow row;
  for (size_t i = 0; i < r.mapping.shape.size(); ++i) {
    row.shape += (i ? " x " : "") + std::to_string(r.mapping.shape[i]);
    row.roles += (i ? " x " : "") + std::string(role_name(r.mapping.roles[i]));
  }
  row.tp = r.mapping.tp;
  row.pp = r.mapping.pp;
  row.dp = r.mapping.dp;
  row.micro_batch = r.mapping.micro_batch;
  row.tile_size = r.mapping.tile_size;
  row.execution = style_name(r.mapping.style);
  row.iteration_time = from_ns(r.final_ns);
  row.event_time = r.event_time;
  return row;
}

// "x: PP 128, y: DP 32".
std::string describe_layout(const Mapping& m) {
  std::string s;
  for (size_t i = 0; i < m.shape.size(); ++i)
    s += fmt::format("{}{}: {} {}", i ? ", " : "", "xyz"[i], role_name(m.roles[i]), m.shape[i]);
  return s;
}

}  // namespace

Result dataflow_result(const DataflowProblem& problem, const SearchOutcome& outcome) {
  const Evaluation& ev = outcome.best;
  const Mapping& m = ev.mapping;
  const LlmShape& llm = *problem.run.llm;
  Result r;
  r.mode = "dataflow (DFModel)";
  r.workload = problem.name;
  std::string shape;
  for (size_t i = 0; i < m.shape.size(); ++i)
    shape += (i ? " x " : "") + std::to_string(m.shape[i]);
  r.cluster = fmt::format("{} {} ({} chips)", problem.system.topology, shape, problem.system.chips);
  r.parallelism.tp = m.tp;
  r.parallelism.pp = m.pp;
  r.parallelism.world_size = problem.system.chips;
  r.parallelism.micro_batches = ev.pipeline.micro_batches;

  r.iteration_time = from_ns(ev.final_ns);
  Breakdown& b = r.breakdown;
  b.p2p = from_ns(ev.pipeline.p2p_ns);
  b.bubble = from_ns(ev.bubble_ns);
  b.exposed_comm[CommGroup::Tensor] = from_ns(ev.tp_comm_ns);
  b.exposed_comm[CommGroup::Data] = from_ns(ev.dp_comm_ns);
  b.compute = r.iteration_time - b.p2p - b.bubble - b.exposed_comm[CommGroup::Tensor] -
              b.exposed_comm[CommGroup::Data];

  PeerFigures peer{"dfmodel", {}};
  const auto add = [&](const char* key, double value) { peer.values.emplace_back(key, value); };
  add("final_s", ev.final_ns / 1e9);
  add("final_ns", ev.final_ns);
  add("all_config_II_ns", ev.all_config_ii_ns);
  add("pipeline_factor", ev.pipeline.pipeline_factor);
  add("p2p_ns", ev.pipeline.p2p_ns);
  add("util", ev.utilization);
  add("total_cost", ev.cost.cost.total());
  add("total_power", ev.cost.power.total());
  add("FLOP", ev.flop);
  add("GFLOPS", ev.peak_gflops);
  add("TP", static_cast<double>(m.tp));
  add("PP", static_cast<double>(m.pp));
  add("DP", static_cast<double>(m.dp));
  add("micro_batch_size", static_cast<double>(m.micro_batch));
  add("num_micro_batch_per_pipeline", static_cast<double>(ev.pipeline.micro_batches));
  add("layer_per_stage", static_cast<double>(ev.pipeline.layers_per_stage));
  add("tile_size", static_cast<double>(m.tile_size));
  add("num_tile", static_cast<double>(ev.num_tile));
  r.peer = std::move(peer);

  DataflowFigures f;
  f.utilization = ev.utilization;
  f.cost_usd = ev.cost.cost.total();
  f.power_w = ev.cost.power.total();
  f.flop = ev.flop;
  f.tokens_per_second = static_cast<double>(llm.global_batch) * static_cast<double>(llm.seq_len) /
                        (ev.final_ns / 1e9);
  f.system =
      fmt::format("{}, {:.1f} GFLOPS peak per chip, DRAM {:g} GB/s, SRAM {:.0f} bytes", r.cluster,
                  ev.peak_gflops, problem.system.dram_gbps, problem.system.sram_bytes);
  f.mapping = fmt::format(
      "{}; micro-batch {} ({} per pipeline); tile {} ({} tiles, {}); {} layer(s) per stage; {}",
      describe_layout(m), m.micro_batch, ev.pipeline.micro_batches, m.tile_size, ev.num_tile,
      outcome.tile_source, ev.pipeline.layers_per_stage, style_name(m.style));
  if (outcome.sharding.chosen)
    f.mapping += fmt::format("; tensor-parallel sharding chosen ({:.0f} bytes communicated{})",
                             outcome.sharding.communicated_bytes,
                             outcome.sharding.proven_optimal ? ", proven fewest" : "");
  f.search = outcome.statement();
  f.proven_optimal = outcome.proven_optimal();
  if (outcome.rechecked > 0) f.ranked_by = outcome.event_ranked ? "event" : "analytical";
  for (const ConfigEvaluation& c : ev.configs) {
    DataflowConfigRow row;
    row.config = c.index;
    for (const size_t k : c.kernels)
      row.kernels += (row.kernels.empty() ? "" : "+") + problem.kernels[k].name;
    row.compute_ns = c.timing.compute_ns;
    row.memory_ns = c.timing.memory_ns;
    row.network_ns = c.timing.network_ns();
    row.ii_ns = c.timing.ii_ns;
    f.configs.push_back(std::move(row));
  }
  for (const RankedMapping& ranked : outcome.ranked)
    f.alternatives.push_back(mapping_row(ranked));
  r.dataflow = std::move(f);
  return r;
}

}  // namespace orrery
