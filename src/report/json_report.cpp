#include "report/json_report.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <ostream>

namespace orrery {
namespace {

using Json = nlohmann::ordered_json;

// A count of bytes (or any whole quantity held in a double) as a JSON integer: no float noise.
Json whole(double v) {
  return std::isfinite(v) && std::fabs(v) < 9e18 ? Json(static_cast<int64_t>(std::llround(v)))
                                                 : Json(v);
}

Json exposed(const Breakdown& b) {
  Json j = Json::object();
  for (const CommGroup g :
       {CommGroup::Tensor, CommGroup::Expert, CommGroup::Data, CommGroup::ExpertData})
    j[std::string(to_string(g))] = 0.0;
  for (const auto& [group, time] : b.exposed_comm)
    j[std::string(to_string(group))] = time.seconds();
  return j;
}

Json breakdown(const Breakdown& b) {
  return Json{{"compute", b.compute.seconds()},
              {"exposed_comm", exposed(b)},
              {"bubble", b.bubble.seconds()},
              {"p2p", b.p2p.seconds()}};
}

// Dataflow-system figures (DFModel problems): utilization, cost_usd, power_w, flop and the
// per-configuration table, at top level under DFModel's own names.
void add_dataflow(Json& j, const DataflowFigures& f) {
  j["utilization"] = f.utilization;
  j["cost_usd"] = f.cost_usd;
  j["power_w"] = f.power_w;
  j["flop"] = f.flop;
  j["tokens_per_second"] = f.tokens_per_second;
  j["system"] = f.system;
  j["mapping"] = f.mapping;
  j["search"] = {{"statement", f.search}, {"proven_optimal", f.proven_optimal}};
  if (!f.ranked_by.empty()) j["search"]["ranked_by"] = f.ranked_by;
  Json configs = Json::array();
  for (const DataflowConfigRow& c : f.configs)
    configs.push_back({{"config", c.config},
                       {"kernels", c.kernels},
                       {"compute_ns", c.compute_ns},
                       {"memory_ns", c.memory_ns},
                       {"network_ns", c.network_ns},
                       {"ii_ns", c.ii_ns}});
  j["configs"] = std::move(configs);
  Json alternatives = Json::array();
  for (const DataflowMappingRow& a : f.alternatives) {
    alternatives.push_back({{"shape", a.shape},
                            {"parallelism", a.roles},
                            {"tp", a.tp},
                            {"pp", a.pp},
                            {"dp", a.dp},
                            {"micro_batch", a.micro_batch},
                            {"tile_size", a.tile_size},
                            {"execution", a.execution},
                            {"iteration_time_s", a.iteration_time.seconds()}});
    if (a.event_time) alternatives.back()["event_time_s"] = a.event_time->seconds();
  }
  j["alternatives"] = std::move(alternatives);
}

void add_memory(Json& j, const MemoryEstimate& m) {
  Json stages = Json::array();
  for (const StageMemory& s : m.stages)
    stages.push_back({{"stage", s.stage},
                      {"layers", s.layers},
                      {"weights_bytes", whole(s.weights_bytes)},
                      {"gradients_bytes", whole(s.gradients_bytes)},
                      {"optimizer_bytes", whole(s.optimizer_bytes)},
                      {"activations_bytes", whole(s.activations_bytes)},
                      {"logits_bytes", whole(s.logits_bytes)},
                      {"peak_bytes", whole(s.peak_bytes())}});
  j["memory"] = {{"capacity_bytes", whole(m.capacity_bytes)},
                 {"fits", m.fits()},
                 {"stages", std::move(stages)}};
}

void add_training(Json& j, const TrainingFigures& f) {
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(); };
  Json t = {{"tokens_per_iteration", f.tokens_per_iteration},
            {"tokens_per_s", f.tokens_per_s},
            {"model_tflops_per_gpu", f.model_tflops_per_gpu},
            {"mfu", f.mfu},
            {"hardware_tflops_per_gpu", f.hardware_tflops_per_gpu},
            {"hfu", f.hfu},
            {"peak_tflops_per_gpu", f.peak_tflops_per_gpu},
            {"peak_dtype", f.dtype},
            {"slowest_gpu_pace", f.slowest_gpu_pace},
            {"validated_error", f.error_band}};
  if (f.train_tokens) {
    const double tokens = *f.train_tokens;
    const auto per_token = [&](const std::optional<double>& v) {
      return v ? Json(*v / tokens) : Json();
    };
    t["train_tokens"] = tokens;
    t["time_to_train_s"] = optional(f.time_to_train_s);
    t["time_to_train_note"] = "ideal: no failures, restarts or checkpoints";
    t["gpu_hours"] = optional(f.gpu_hours);
    t["cost_usd"] = optional(f.cost_usd);
    t["energy_j"] = optional(f.energy_j);
    t["gpu_hours_per_token"] = per_token(f.gpu_hours);
    t["cost_usd_per_token"] = per_token(f.cost_usd);
    t["energy_j_per_token"] = per_token(f.energy_j);
  }
  j["training"] = std::move(t);
}

Json to_json(const Result& r) {
  const Parallelism& p = r.parallelism;
  Json j;
  j["mode"] = r.mode;
  j["schedule"] = r.schedule;
  j["workload"] = r.workload;
  j["cluster"] = r.cluster;
  if (!r.device.empty()) j["device"] = r.device;
  j["parallelism"] = {{"world_size", p.world_size},
                      {"tp", p.tp},
                      {"pp", p.pp},
                      {"dp", p.dp()},
                      {"ep", p.ep},
                      {"vpp", p.vpp},
                      {"micro_batches", p.micro_batches}};
  if (p.cp > 1) j["parallelism"]["cp"] = p.cp;
  if (r.model) {
    j["model"] = {{"parameters", r.model->parameters},
                  {"layers", r.model->layers},
                  {"forward_flop", r.model->forward_flop ? Json(*r.model->forward_flop) : Json()}};
  }
  j["iteration_time_s"] = r.iteration_time.seconds();
  j["breakdown_s"] = breakdown(r.breakdown);
  j["critical_stage"] = r.critical_stage;
  Json stages = Json::array();
  for (const StageTiming& s : r.stages) {
    stages.push_back(
        {{"stage", s.stage},
         {"finish_s", s.finish.seconds()},
         {"busy_fraction",
          r.iteration_time > Time::zero() ? s.breakdown.compute / r.iteration_time : 0.0},
         {"breakdown_s", breakdown(s.breakdown)}});
  }
  j["stages"] = std::move(stages);
  if (r.dataflow) add_dataflow(j, *r.dataflow);
  if (r.memory) add_memory(j, *r.memory);
  if (r.training) add_training(j, *r.training);
  if (r.peer) {
    Json peer = Json::object();
    // A peer's figures are whole where the peer prints them whole (SimAI's microseconds).
    for (const auto& [name, value] : r.peer->values)
      peer[name] = std::isfinite(value) && value == std::round(value) ? whole(value) : Json(value);
    j[r.peer->peer] = std::move(peer);
  }
  j["simulated_tasks"] = r.simulated_tasks;
  if (r.mode == "flow") {
    j["flows"] = r.flows;
    Json links = Json::array();
    for (const LinkUsage& l : r.hottest_links)
      links.push_back({{"link", l.name},
                       {"bytes", whole(l.bytes)},
                       {"busy_s", l.busy.seconds()},
                       {"peak_utilization", l.peak_utilization}});
    j["hottest_links"] = std::move(links);
  }
  Json warnings = Json::array();
  for (const Warning& w : r.warnings)
    warnings.push_back(w.to_string());
  j["warnings"] = std::move(warnings);
  return j;
}

// Names are user data and may hold any bytes: invalid UTF-8 is written as U+FFFD, never an error.
std::string dumped(const Json& j) {
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void write_json(std::ostream& out, const Result& r, const Provenance* provenance) {
  write_json(out, std::vector<Result>{r}, provenance);
}

void write_json(std::ostream& out, const std::vector<Result>& results,
                const Provenance* provenance) {
  // The provenance comes first, so that tools (and the pinned references) can drop it whole.
  Json j = Json::object();
  if (provenance) j["provenance"] = provenance_json(*provenance);
  if (results.size() == 1) {
    j.update(to_json(results.front()));
  } else {
    // Flow mode places job k on the servers after job k-1's; the other modes run each job alone.
    Json jobs = Json::array();
    for (size_t k = 0; k < results.size(); ++k) {
      const Result& r = results[k];
      Json job = to_json(r);
      job["job"] = {{"index", k + 1},
                    {"of", results.size()},
                    {"first_gpu", r.first_gpu},
                    {"last_gpu", r.first_gpu + r.parallelism.world_size - 1}};
      jobs.push_back(std::move(job));
    }
    j["jobs"] = std::move(jobs);
  }
  out << dumped(j) << "\n";
}

}  // namespace orrery
