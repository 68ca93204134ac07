#include "cli/dataflow_options.h"

#include "cli/option_checks.h"

#include "dataflow/problem_scope.h"
#include "formats/dfmodel_reader.h"

namespace orrery {

void add_dataflow_options(CLI::App& cmd, DataflowArgs& args) {
  const std::string group = "DFModel files";
  cmd.add_option("--execution", args.execution,
                 "DFModel: execution style to evaluate: kbk (KERNEL_BY_KERNEL), dataflow "
                 "(DATAFLOW, kernels fused by search) or both (default: the file's)")
      ->check(CLI::IsMember({"kbk", "dataflow", "both"}))
      ->group(group);
  cmd.add_option("--allreduce-factor", args.allreduce_factor,
                 "DFModel: all-reduce cost factor, 2 (reduce-scatter + all-gather; the seed's "
                 "DFModel version, and separate_rs_ag_for_ar) or 1 (later fork code)")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--staging-buffers", args.staging_buffers,
                 "DFModel: SRAM buffers per DRAM-staged edge, 1 (seed era) or 2 (double "
                 "buffering, later versions)")
      ->check(CLI::IsMember({1, 2}))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--top", args.top, "DFModel search: alternatives to report, the best included")
      ->check(integer_in(1, 1000))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--threads", args.threads,
                 "DFModel search: threads (default: the file's gurobi.thread; 0: all CPUs)")
      ->check(integer_in(0, 1024))
      ->group(group);
  cmd.add_option("--time-limit", args.time_limit_s,
                 "DFModel search: seconds (default: the file's gurobi.time; 0 or over a year: "
                 "none)")
      ->check(number_at_least(0))
      ->group(group);
}

SolvedDataflow solve_dataflow_file(const std::string& path, const std::string& content,
                                   const DataflowArgs& args, Diagnostics& diagnostics,
                                   const std::function<void(double)>& progress) {
  DataflowProblem problem = read_dfmodel(path, content, diagnostics);
  check_modelled(problem, diagnostics);
  DataflowGraph graph = DataflowGraph::build(problem, diagnostics);
  SearchOptions options;
  options.model.allreduce_factor = args.allreduce_factor;
  options.model.staging_buffers = args.staging_buffers;
  if (problem.run.separate_rs_ag_for_ar && args.allreduce_factor != 2)
    diagnostics.warn({path, problem.run.line},
                     "separate_rs_ag_for_ar: true charges all-reduces twice, but "
                     "--allreduce-factor 1 was asked; using 1");
  if (args.execution == "kbk") options.styles = {ExecutionStyle::KernelByKernel};
  if (args.execution == "dataflow") options.styles = {ExecutionStyle::Dataflow};
  if (args.execution == "both")
    options.styles = {ExecutionStyle::KernelByKernel, ExecutionStyle::Dataflow};
  options.top_k = args.top;
  options.threads = args.threads;
  options.time_limit_s = args.time_limit_s;
  options.progress = progress;
  SearchOutcome outcome = solve_dataflow(problem, graph, options, diagnostics);
  return {std::move(problem), std::move(graph), std::move(outcome), options.model};
}

}  // namespace orrery
