#include "scenario/scenario.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/diagnostics.h"
#include "core/time.h"
#include "hardware/device_file.h"
#include "hardware/op_cost.h"
#include "hardware/slowest_gpu.h"
#include "models/memory_model.h"
#include "models/training_workload.h"
#include "network/collective_flows.h"
#include "scenario/training_metrics.h"
#include "training/analytical_simulator.h"
#include "training/backward_estimate.h"
#include "training/compute_pricing.h"
#include "training/event_simulator.h"
#include "training/flow_simulator.h"
#include "training/graph_export.h"
#include "training/graph_flow_simulator.h"

namespace orrery {
namespace {

// Options that the workload's format does not use are reported, not silently dropped.
// `format`: the workload's, or "model" for --model; `graph`: a Chakra trace.
void warn_unused_options(const Scenario& s, const std::string& workload_format, bool graph,
                         Diagnostics& diagnostics) {
  const auto unused = [&](bool given, const std::string& flag, const std::string& format) {
    if (given && workload_format != format)
      diagnostics.warn({}, flag + " applies to " + format + " workloads only; ignored");
  };
  unused(s.reader.layers.has_value(), "--layers", "neusight");
  unused(s.backward_ratio.has_value(), "--backward-ratio", "neusight");
  unused(s.reader.comm_dtype.has_value(), "--comm-dtype", "neusight");
  unused(!s.reader.graph_config.empty(), "--graph-config", "torchviz");
  unused(s.reader_ep.has_value(), "--ep", "torchviz");
  unused(!s.reader.comm_groups.empty(), "--comm-groups", "chakra");
  if (graph && (s.dp || s.gpus))
    diagnostics.warn({}, std::string(s.dp ? "--dp" : "--gpus") +
                             ": a Chakra trace's files set its ranks; ignored");
  if (!s.simai_busbw.empty() && s.compat != "simai")
    diagnostics.warn({}, "--busbw (SimAI's -busbw) applies only to SimAI-compatible runs; ignored");
}

// --dp sets the data-parallel degree; a workload that does not say how many GPUs run it (and no
// --gpus) runs data-parallel over one server of the cluster.
void set_world_size(const Scenario& s, Workload& w, Diagnostics& diagnostics) {
  Parallelism& p = w.parallelism;
  if (s.dp) {
    p.world_size = *s.dp * p.tp * p.pp;
  } else if (!w.world_size_from_file && !s.gpus) {
    const int64_t gpus = s.cluster.gpus_per_server();
    diagnostics.warn({}, "'" + w.name +
                             "' does not say how many GPUs run it; data-parallel over one "
                             "server of '" +
                             s.cluster.name + "' (" + std::to_string(gpus) + " GPUs; use --dp)");
    p.world_size = std::max(gpus, p.ep) * p.tp * p.pp;
  }
  // --ep carves expert-parallel groups out of the data-parallel ranks: a flag error, not the
  // file's.
  const int64_t world = s.gpus.value_or(p.world_size);
  if (s.reader_ep && w.format == "torchviz" && p.tp * p.pp > 0 && world % (p.tp * p.pp) == 0 &&
      (world / (p.tp * p.pp)) % *s.reader_ep != 0)
    throw InputError("--ep " + std::to_string(*s.reader_ep) +
                     ": expected a divisor of the data-parallel degree, " +
                     std::to_string(world / (p.tp * p.pp)) +
                     (s.dp     ? " (--dp)"
                      : s.gpus ? " (--gpus)"
                               : " (one server of the cluster; set --dp)"));
}

// SimAI's -nv, -nic, -g_p_s, -n_p_s from a switch + fat-tree cluster.
simai::Options simai_options(const Cluster& cluster) {
  const auto out = cluster.scale_out();
  if (!out || cluster.network[0].kind != DimensionKind::Switch)
    throw InputError("--compat simai needs a cluster of switch servers on a fat-tree; '" +
                     cluster.name + "' is not one");
  simai::Options o;
  o.nvlink_busbw = cluster.network[0].effective().in_gib_per_second();
  o.nic_busbw = cluster.network[*out].effective().in_gib_per_second();
  o.gpus_per_server = cluster.network[0].size;
  o.nics_per_server = cluster.network[*out].rails;
  return o;
}

// A model scenario's resolved plan and generated iteration, compute not yet priced.
PricedModel generated_model(const ModelScenario& m) {
  PricedModel out;
  out.plan = resolve_plan(m);
  try {
    out.training = generate_training_workload(m.spec, out.plan);
  } catch (const std::invalid_argument& e) {
    throw InputError(e.what());
  }
  return out;
}

// Prices the generated iteration on `device`; throws InputError when it lacks the plan's dtype.
void price_on(PricedModel& model, const Device& device) {
  const DType dtype = model.plan.dtype;
  if (dtype != DType::BF16 && !device.matrix.contains(dtype))
    throw InputError("--dtype " + std::string(to_string(dtype)) + ": device '" + device.name +
                     "' has no " + std::string(to_string(dtype)) + " matrix rate");
  model.device = device;
  if (!model.plan.terms.sustained_clock) model.device.sustained_matrix = 1;  // burst clocks
  if (!model.plan.terms.exposed_epilogue) model.device.exposed_epilogue_by_type.clear();
  model.device.pace = model.plan.terms.slowest_gpu
                          ? slowest_gpu_pace(device.rate_spread, model.plan.world_size())
                          : 1.0;
  price_compute(model.training.workload, model.device);
}

struct Job {
  Workload workload;
  std::optional<Device> device;  // that priced its compute, if any
  Diagnostics diagnostics;
  std::optional<MemoryEstimate> memory;
  std::optional<TrainingWorkload> training;  // model scenarios: FLOP counts
};

// An error the workloads' simulation meets (a time out of range, core/time.h, or a flow-mode
// limit, network/collective_flows.h), naming the file, or the files run together.
[[noreturn]] void throw_naming(const std::vector<Job>& jobs, const std::string& message) {
  if (jobs.size() == 1) throw InputError({jobs.front().workload.source, 0}, message);
  std::string files;
  for (const Job& job : jobs)
    files += (files.empty() ? "" : ", ") + job.workload.source;
  throw InputError("the workloads " + files + " run together: " + message);
}

Job model_job(const Scenario& s) {
  const ModelScenario& m = *s.model;
  Job job;
  PricedModel priced =
      s.loaded_device ? priced_model(m, *s.loaded_device) : priced_model(m, s.cluster, s.device);
  TrainingWorkload& generated = priced.training;
  const Device& device = priced.device;
  job.memory = estimate_memory(m.spec, priced.plan, static_cast<double>(device.memory_capacity));
  for (const StageMemory& stage : job.memory->stages)
    if (stage.peak_bytes() > job.memory->capacity_bytes) {
      job.diagnostics.warn(
          {}, "stage " + std::to_string(stage.stage) + " needs " +
                  std::to_string(static_cast<int64_t>(stage.peak_bytes() / (1 << 30))) +
                  " GiB of " +
                  std::to_string(static_cast<int64_t>(job.memory->capacity_bytes / (1 << 30))) +
                  " GiB: the plan does not fit (simulated anyway; see memory in --json)");
      break;
    }
  if (priced.plan.tp_comm_overlap && priced.plan.tp > s.cluster.gpus_per_server())
    job.diagnostics.warn({}, "--tp-comm-overlap with --tp " + std::to_string(priced.plan.tp) +
                                 " over servers of " + std::to_string(s.cluster.gpus_per_server()) +
                                 " GPUs: Transformer Engine's userbuffers are built for one "
                                 "NVLink domain; the overlap is priced as if it ran across "
                                 "servers the same way");
  if (m.spec.moe)
    job.diagnostics.warn(
        {}, "MoE routing assumed balanced, no token dropped" +
                std::string(m.spec.moe->capacity_factor ? " (capacity factor not modelled)" : ""));
  job.workload = std::move(generated.workload);
  job.device = device;
  job.training = std::move(generated);
  job.training->workload = Workload{};  // the job keeps the one copy
  return job;
}

// --backward-ratio, checked before any file is read: it is wrong whatever the file holds.
double backward_ratio(const Scenario& s) {
  const double ratio = s.backward_ratio.value_or(kDefaultBackwardRatio);
  if (!(ratio > 0 && ratio <= kMaxBackwardRatio)) {
    std::ostringstream text;
    text << "--backward-ratio " << ratio
         << ": expected a finite ratio of backward to forward time, above 0 and at most "
         << kMaxBackwardRatio;
    throw InputError(text.str());
  }
  return ratio;
}

// A workload file read, its missing backward times estimated, sized and priced.
Job file_job(const Scenario& s, const std::string& path) {
  Job job;
  ReaderOptions reader = s.reader;
  reader.ep = s.reader_ep.value_or(1);
  reader.simai_compat = s.compat == "simai";
  const double ratio = backward_ratio(s);
  job.workload = read_workload_file(path, s.format, reader, job.diagnostics);
  estimate_backward(job.workload, ratio, job.diagnostics);
  warn_unused_options(s, job.workload.format, job.workload.graph.has_value(), job.diagnostics);
  set_world_size(s, job.workload, job.diagnostics);
  if (has_compute_demands(job.workload)) {
    job.device = compute_device(s.cluster, s.device, job.diagnostics);
    price_compute(job.workload, *job.device);
  } else if (!s.device.empty()) {
    job.diagnostics.warn({}, "--device: '" + job.workload.name +
                                 "' gives its compute times; no device model applies");
  }
  return job;
}

}  // namespace

ExportedGraph export_graph(const Scenario& s, Diagnostics& diagnostics) {
  if (s.model && !s.workload_files.empty())
    throw InputError("--model replaces the workload file; give one or the other");
  if (!s.model && s.workload_files.size() != 1)
    throw InputError("expected one workload file or --model to convert");
  Job job = s.model ? model_job(s) : file_job(s, s.workload_files.front());
  if (job.workload.graph)
    throw InputError({job.workload.source, 0}, "the workload is a Chakra trace already");
  SimulationOptions options = s.options;
  if (!s.model) options.world_size = s.gpus;
  ExportedGraph out;
  out.name = job.workload.name;
  out.graph = export_task_graphs(job.workload, s.cluster, options, job.diagnostics);
  for (const Warning& w : job.diagnostics.warnings())
    diagnostics.warn(w.where, w.message);
  return out;
}

PricedModel priced_model(const ModelScenario& m, const Cluster& cluster,
                         const std::string& device_override) {
  PricedModel out = generated_model(m);
  if (device_override.empty() && cluster.device) {
    price_on(out, *cluster.device);
    return out;
  }
  if (device_override.empty() && device_preset_text(cluster.gpu).empty())
    throw InputError("--cluster " + cluster.name + ": its gpu '" + cluster.gpu +
                     "' is no known device, so compute cannot be priced; give --device");
  price_on(out, load_device(device_override.empty() ? cluster.gpu : device_override));
  return out;
}

PricedModel priced_model(const ModelScenario& m, const Device& device) {
  PricedModel out = generated_model(m);
  price_on(out, device);
  return out;
}

ParallelPlan resolve_plan(const ModelScenario& m) {
  ParallelPlan plan = m.plan;
  if (plan.seq <= 0) plan.seq = m.spec.seq;
  const int64_t model_parallel = plan.tp * plan.pp * plan.cp;
  const int64_t gpus = m.gpus.value_or(model_parallel);
  if (gpus % model_parallel != 0)
    throw InputError("--gpus " + std::to_string(gpus) +
                     ": expected a multiple of tp x pp x cp = " + std::to_string(model_parallel));
  plan.dp = gpus / model_parallel;
  if (m.global_batch <= 0) throw InputError("--gbs: expected a positive global batch");
  if (m.global_batch % (plan.micro_batch * plan.dp) != 0)
    throw InputError(
        "--gbs " + std::to_string(m.global_batch) +
        ": expected a multiple of mbs x dp = " + std::to_string(plan.micro_batch * plan.dp));
  plan.micro_batches = m.global_batch / (plan.micro_batch * plan.dp);
  return plan;
}

Prediction predict(const Scenario& s) {
  Diagnostics diagnostics;
  for (const std::string& warning : s.input_warnings)
    diagnostics.warn({}, warning);
  Prediction out;
  std::vector<Job> jobs;
  if (s.model) {
    if (!s.workload_files.empty())
      throw InputError("--model replaces the workload file; give one or the other");
    if (!s.compat.empty()) throw InputError("--compat applies to workload files, not --model");
    if (s.dp) throw InputError("--dp: with --model, the GPU count (--gpus) sets dp");
    jobs.push_back(model_job(s));
    warn_unused_options(s, "model", false, jobs.back().diagnostics);
  } else {
    if (s.workload_files.empty()) throw InputError("expected a workload file or --model");
    if (s.dp && s.gpus) throw InputError("--dp and --gpus both set the world size; give one");
    for (const std::string& path : s.workload_files)
      try {
        jobs.push_back(file_job(s, path));
      } catch (const TimeOverflow& e) {
        throw InputError({path, 0}, e.what());
      }
  }
  const bool several = jobs.size() > 1;
  const bool simai = s.compat == "simai";
  const SimulationMode mode =
      s.mode.value_or(simai ? SimulationMode::Analytical : SimulationMode::Event);
  if (!simai && (s.simai.dp || s.simai.tp || s.simai.ep || s.simai.pp))
    diagnostics.warn({},
                     "--dp/--tp/--ep/--pp-overlap are SimAI's ratios; they apply only with "
                     "--compat simai (the event mode models overlap itself; see --no-overlap)");
  if (several && simai) throw InputError("several workloads: --compat takes one workload");
  for (const Job& job : jobs)
    if (job.workload.graph && (mode == SimulationMode::Analytical || simai || several))
      throw InputError({job.workload.source, 0},
                       "a Chakra trace runs alone, in event or flow mode (not with --mode " +
                           std::string(to_string(mode)) + (simai ? " --compat simai" : "") +
                           (several ? " and other workloads" : "") + ")");

  try {
    if (simai) {
      const Workload& workload = jobs.front().workload;
      if (workload.format != "simai")
        throw InputError("--compat simai reproduces SimAI on SimAI workloads; this one is " +
                         workload.format);
      if (mode != SimulationMode::Analytical)
        throw InputError(
            "--compat simai reproduces SimAI's analytical mode; use --mode analytical");
      if (workload.policy == "DATA")
        throw InputError(
            {workload.source, 1},
            "--compat simai supports the HYBRID_TRANSFORMER policies; SimAI's analytical "
            "report for DATA is not reproduced");
      simai::Options o = simai_options(s.cluster);
      o.gpus = s.gpus.value_or(workload.parallelism.world_size);
      o.dp_overlap = s.simai.dp.value_or(0);
      o.tp_overlap = s.simai.tp.value_or(0);
      o.ep_overlap = s.simai.ep.value_or(0);
      o.pp_overlap = s.simai.pp.value_or(1);
      if (!s.simai_busbw.empty()) {
        std::ifstream in(s.simai_busbw, std::ios::binary);
        if (!in) throw InputError({s.simai_busbw, 0}, "cannot read the busbw file");
        const std::string content{std::istreambuf_iterator<char>(in), {}};
        o.busbw = simai::read_busbw_file(s.simai_busbw, content, jobs.front().diagnostics);
        jobs.front().diagnostics.warn(
            {s.simai_busbw, 0},
            "the busbw file's figures replace the bus bandwidths computed from -nv and -nic (and "
            "SimAI's efficiency tables) for the collectives it lists; this path follows SimAI's "
            "documented format and has not been checked against a SimAI run");
      }
      out.simai_report = simai::run_analytical(workload, o, jobs.front().diagnostics);
      out.results.push_back(simai::to_result(workload, o, *out.simai_report));
      out.results.back().cluster = s.cluster.name;
    } else {
      SimulationOptions options = s.options;
      if (!s.model) options.world_size = s.gpus;
      if (mode == SimulationMode::Flow && jobs.front().workload.graph) {
        out.results.push_back(simulate_task_graph_flows(jobs.front().workload, s.cluster, options,
                                                        jobs.front().diagnostics));
      } else if (mode == SimulationMode::Flow) {
        std::vector<const Workload*> workloads;
        std::vector<Diagnostics*> sinks;
        for (Job& job : jobs) {
          workloads.push_back(&job.workload);
          sinks.push_back(&job.diagnostics);
        }
        out.results = FlowSimulator().simulate_jobs(workloads, s.cluster, options, sinks);
      } else {
        if (several)
          diagnostics.warn({}, "several workloads in " + std::string(to_string(mode)) +
                                   " mode run independently; only --mode flow makes them share the "
                                   "network");
        std::unique_ptr<Simulator> simulator;
        if (mode == SimulationMode::Event)
          simulator = std::make_unique<EventSimulator>();
        else
          simulator = std::make_unique<AnalyticalSimulator>();
        for (Job& job : jobs)
          out.results.push_back(
              simulator->simulate(job.workload, s.cluster, options, job.diagnostics));
      }
    }
  } catch (const TimeOverflow& e) {
    throw_naming(jobs, e.what());
  } catch (const FlowBudgetError& e) {
    throw_naming(jobs, e.what());
  }
  for (size_t k = 0; k < out.results.size() && k < jobs.size(); ++k) {
    Result& r = out.results[k];
    Job& job = jobs[k];
    r.device = job.device ? job.device->name : "";
    if (!job.device && !job.workload.program.layers.empty()) {
      // The file's times are used as they are, whatever GPU the cluster has.
      const bool known = !device_preset_text(s.cluster.gpu).empty();
      r.compute_source =
          "from the workload file" + (known ? ", not rescaled to " + s.cluster.gpu : std::string());
    }
    r.model = job.workload.model;
    r.memory = job.memory;
    if (job.training)
      r.training = training_figures(*job.training, *s.model, *job.device, s.cluster, r, mode);
    r.warnings = diagnostics.warnings();
    const auto& own = job.diagnostics.warnings();  // one result per workload
    r.warnings.insert(r.warnings.end(), own.begin(), own.end());
  }
  for (Job& job : jobs)
    out.workloads.push_back(std::move(job.workload));
  return out;
}

}  // namespace orrery
