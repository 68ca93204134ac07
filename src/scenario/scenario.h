// One prediction as data, and the one function that makes it: a Scenario says where the workload
// comes from (workload files, or a model description and a parallel plan), on which cluster it
// runs and how it is simulated; predict() reads or generates the workloads, prices their compute,
// runs the chosen simulator and returns the Results. The CLI parses flags into a Scenario and
// writes what predict() returns; design-space search calls predict() in-process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "compat/simai_analytical.h"
#include "formats/reader_options.h"
#include "formats/workload_reader.h"
#include "hardware/device.h"
#include "models/model_spec.h"
#include "models/parallel_plan.h"
#include "models/training_workload.h"
#include "training/simulation_mode.h"
#include "training/simulation_options.h"
#include "workload/result.h"
#include "workload/workload.h"

namespace orrery {

// A model description trained with a parallel plan (plan.dp is derived from the GPU count).
struct ModelScenario {
  ModelSpec spec;
  ParallelPlan plan;
  int64_t global_batch = 0;            // sequences per iteration (--gbs)
  std::optional<int64_t> gpus;         // world size; default tp x pp x cp (dp 1)
  std::optional<double> train_tokens;  // for time, cost and energy to train
};

// SimAI's analytical overlap ratios (--compat simai).
struct SimaiRatios {
  std::optional<double> dp, tp, ep, pp;
};

struct Scenario {
  // What reading the inputs before the run could not map (a peer's cluster or system file).
  std::vector<std::string> input_warnings;
  // Where the workloads come from: files (several share the cluster), or a model.
  std::vector<std::string> workload_files;
  std::optional<WorkloadFormat> format;
  ReaderOptions reader;
  std::optional<int64_t> reader_ep;  // --ep for torchviz (warned about for other formats)
  // Backward / forward time assumed for a file that gives forward times only (NeuSight without
  // is_train; training/backward_estimate.h): --backward-ratio, default 2.
  std::optional<double> backward_ratio;
  std::optional<ModelScenario> model;

  Cluster cluster;
  std::string device;  // overrides the cluster's gpu for compute pricing (preset or file)
  // That device (or the cluster's gpu) already loaded, for model scenarios: spares the lookup
  // when many predictions share it (design-space search).
  std::optional<Device> loaded_device;
  std::optional<int64_t> dp;    // world = dp x tp x pp for file workloads
  std::optional<int64_t> gpus;  // world size override for file workloads

  // Empty: event (analytical with --compat simai).
  std::optional<SimulationMode> mode;
  std::string compat;  // "simai" or empty
  SimaiRatios simai;
  std::string simai_busbw;  // SimAI's -busbw file (--compat simai)
  SimulationOptions options;
};

struct Prediction {
  std::vector<Workload> workloads;
  std::vector<Result> results;                // one per workload
  std::optional<simai::Report> simai_report;  // --compat simai
};

// Throws InputError for anything the scenario asks that cannot be done.
Prediction predict(const Scenario& scenario);

// The scenario's one workload (a file or the model) as every rank's task graph, priced on its
// cluster as the event mode runs it (training/graph_export.h), and the workload's name. Warnings
// go to `diagnostics`.
struct ExportedGraph {
  std::string name;
  GraphProgram graph;
};
ExportedGraph export_graph(const Scenario& scenario, Diagnostics& diagnostics);

// A model scenario's resolved plan, its generated iteration with the compute priced on the
// cluster's GPU (or the device override), and that device. Throws InputError naming the flag for a
// plan that cannot run.
struct PricedModel {
  ParallelPlan plan;
  TrainingWorkload training;
  Device device;
};
PricedModel priced_model(const ModelScenario& model, const Cluster& cluster,
                         const std::string& device_override);
// The same on a device already loaded.
PricedModel priced_model(const ModelScenario& model, const Device& device);

// The world size of a model scenario's plan, with dp = gpus / (tp pp cp) and the micro-batches
// per iteration gbs / (mbs dp); throws InputError naming the flag that does not divide.
ParallelPlan resolve_plan(const ModelScenario& model);

}  // namespace orrery
