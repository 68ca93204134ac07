// `orrery explore`: flags into a SearchRequest, the search's answer as text or JSON
// (docs/explore.md).
#include <fmt/format.h>

#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/build_revision.h"
#include "cli/commands.h"
#include "cli/option_checks.h"
#include "cli/output_files.h"
#include "cli/plan_options.h"
#include "core/diagnostics.h"
#include "core/dtype.h"
#include "core/progress_bar.h"
#include "explore/search.h"
#include "models/model_file.h"
#include "workload/parallelism.h"

namespace orrery {
namespace {

struct ExploreArgs {
  std::string model, cluster = kModelCluster, device;
  int64_t gpus = 0, gbs = 0;
  std::optional<int64_t> seq;
  std::string dtype = "bf16", attention = "flash", p2p = "auto";
  std::vector<std::string> vary;
  std::string objective = "time", rank_by = "analytical";
  int64_t top = 10;
  std::optional<int64_t> recheck;
  std::string db;
  int64_t threads = std::max(1u, std::thread::hardware_concurrency());
  bool json = false, quiet = false;
  std::string command;  // as given, for the database's runs table
};

explore::SearchRequest search_request(const ExploreArgs& a) {
  explore::SearchRequest r;
  std::vector<std::string> model_warnings;  // a Calculon model's defaults
  r.spec = load_model(a.model, &model_warnings);
  for (const std::string& w : model_warnings)
    std::cerr << "orrery: warning: " << w << "\n";
  r.gbs = a.gbs;
  r.base.seq = a.seq.value_or(r.spec.seq);
  r.base.dtype = *parse_dtype(a.dtype);
  r.base.flash_attention = a.attention != "unfused";
  r.base.p2p = a.p2p == "blocking"     ? P2pMode::Blocking
               : a.p2p == "overlapped" ? P2pMode::Overlapped
                                       : P2pMode::Auto;
  std::vector<explore::Vary> varies;
  for (const std::string& text : a.vary)
    varies.push_back(explore::parse_vary(text));
  explore::ClusterAxes clusters;
  clusters.clusters = {a.cluster};
  clusters.gpus = {a.gpus};
  clusters.devices = {a.device};
  clusters.gpus_per_server = {std::nullopt};
  clusters.nic_busbw = clusters.nvlink_busbw = {std::nullopt};
  explore::apply_varies(varies, r.axes, clusters);
  r.clusters = explore::cluster_choices(clusters);
  r.objective = explore::parse_objective(a.objective);
  r.top = static_cast<size_t>(a.top);
  r.recheck = static_cast<size_t>(a.recheck.value_or(a.top));
  r.rank_by = *parse_simulation_mode(a.rank_by);
  r.threads = static_cast<int>(a.threads);
  return r;
}

// What a resumed search must share with the database's.
explore::RunInfo run_info(const ExploreArgs& a, const explore::SearchRequest& r) {
  explore::RunInfo info;
  info.command = a.command;
  info.version = kBuildRevision;
  // The build: another build's answers may differ (a model changed) although the inputs match.
  info.identity = "model=" + r.spec.name + "\ngbs=" + std::to_string(r.gbs) +
                  "\nseq=" + std::to_string(r.base.seq) + "\ndtype=" + a.dtype +
                  "\nattention=" + a.attention + "\np2p=" + a.p2p + "\nrank_by=" + a.rank_by +
                  "\nbuild=" + kBuildRevision;
  for (size_t i = 0; i < r.clusters.size(); ++i)
    info.clusters += (i ? "," : "") + r.clusters[i].label +
                     (r.clusters[i].device.empty() ? "" : " device=" + r.clusters[i].device) +
                     " gpus=" + std::to_string(r.clusters[i].gpus);
  return info;
}

std::string plan_text(const explore::PlanPoint& point) {
  const ParallelPlan& p = point.plan;
  return fmt::format("tp {} pp {} vpp {} cp {} ep {} dp {} mbs {} {} sp {} zero {}{}{}", p.tp, p.pp,
                     p.vpp, p.cp, p.ep, p.dp, p.micro_batch, explore::recompute_name(p.recompute),
                     p.sequence_parallel ? 1 : 0, p.zero,
                     p.overlap_param_gather ? " overlap-param-gather" : "",
                     p.tp_comm_overlap ? " tp-comm-overlap" : "");
}

std::string optional_figure(const std::optional<double>& x, const char* format) {
  return x ? fmt::format(fmt::runtime(format), *x) : "-";
}

nlohmann::json figures_json(const explore::PointFigures& f) {
  nlohmann::json j = {{"iteration_time_s", f.iteration_s},
                      {"tokens_per_s", f.tokens_per_s},
                      {"mfu", f.mfu},
                      {"memory_gib_per_gpu", f.memory_gib}};
  j["usd_per_million_tokens"] = f.usd_per_mtoken ? nlohmann::json(*f.usd_per_mtoken) : nullptr;
  j["joules_per_token"] = f.joules_per_token ? nlohmann::json(*f.joules_per_token) : nullptr;
  return j;
}

nlohmann::json point_json(const explore::RankedPoint& p, const explore::SearchRequest& r) {
  const ParallelPlan& plan = p.point.plan;
  const explore::ClusterChoice& c = r.clusters[p.point.cluster];
  nlohmann::json j = {{"cluster", c.label},
                      {"device", c.resolved.name},
                      {"gpus", c.gpus},
                      {"tp", plan.tp},
                      {"pp", plan.pp},
                      {"vpp", plan.vpp},
                      {"cp", plan.cp},
                      {"ep", plan.ep},
                      {"dp", plan.dp},
                      {"mbs", plan.micro_batch},
                      {"recompute", explore::recompute_name(plan.recompute)},
                      {"sequence_parallel", plan.sequence_parallel},
                      {"distributed_optimizer", plan.distributed_optimizer},
                      {"zero", plan.zero},
                      {"overlap_param_gather", plan.overlap_param_gather},
                      {"tp_comm_overlap", plan.tp_comm_overlap}};
  j[std::string(to_string(r.rank_by))] = figures_json(p.figures);
  if (p.event && r.rank_by != SimulationMode::Event) j["event"] = figures_json(*p.event);
  return j;
}

nlohmann::json result_json(const explore::SearchRequest& r, const explore::SearchResult& s) {
  nlohmann::json pruned = nlohmann::json::object();
  for (size_t i = 0; i < explore::kPruneRules.size(); ++i)
    pruned[explore::rule_name(explore::kPruneRules[i])] = s.counts.pruned[i];
  nlohmann::json j = {{"model", r.spec.name},
                      {"objective", explore::objective_name(r.objective)},
                      {"rank_by", to_string(r.rank_by)},
                      {"space", s.counts.space},
                      {"pruned", pruned},
                      {"evaluated", s.counts.evaluated},
                      {"failed", s.counts.failed},
                      {"reused", s.counts.reused},
                      {"rechecked", s.counts.rechecked},
                      {"seconds", s.seconds},
                      {"best", nlohmann::json::array()},
                      {"pareto_time_cost", nlohmann::json::array()}};
  for (const explore::RankedPoint& p : s.best)
    j["best"].push_back(point_json(p, r));
  for (const explore::RankedPoint& p : s.pareto)
    j["pareto_time_cost"].push_back(point_json(p, r));
  if (!s.first_error.empty()) j["first_failure"] = s.first_error;
  if (!s.per_rank.empty()) j["evaluated_per_rank"] = s.per_rank;
  return j;
}

void print_text(const explore::SearchRequest& r, const explore::SearchResult& s) {
  const explore::SearchCounts& c = s.counts;
  std::cout << fmt::format("{} with global batch {} (seq {}) on {} cluster choice(s)\n",
                           r.spec.name, r.gbs, r.base.seq, r.clusters.size());
  std::cout << fmt::format("Space: {} plans; pruned:", c.space);
  for (size_t i = 0; i < explore::kPruneRules.size(); ++i)
    std::cout << fmt::format("{} {} {}", i ? "," : "", explore::rule_name(explore::kPruneRules[i]),
                             c.pruned[i]);
  std::cout << fmt::format(
      "\nEvaluated {} in {} mode ({} failed, {} from the database) in {:.2f} s", c.evaluated,
      to_string(r.rank_by), c.failed, c.reused, s.seconds);
  if (s.seconds > 0 && c.evaluated > 0)
    std::cout << fmt::format(" ({:.0f} plans/s on {} thread{})",
                             static_cast<double>(c.evaluated) / s.seconds, r.threads,
                             r.threads == 1 ? "" : "s");
  std::cout << "\n";
  if (!s.first_error.empty()) std::cout << "First failure: " << s.first_error << "\n";
  std::cout << fmt::format("\nBest {} by {} ({} ranking{}):\n", s.best.size(),
                           explore::objective_name(r.objective), to_string(r.rank_by),
                           c.rechecked ? ", event-mode recheck orders the re-checked" : "");
  std::cout << fmt::format(
      "  {:>3}  {:<24} {:>5}  {:<56} {:>10} {:>10} {:>11} {:>6} {:>8} {:>9} {:>8}\n", "#",
      "cluster", "gpus", "plan", std::string(to_string(r.rank_by)) + " s", "event s", "tokens/s",
      "MFU", "GiB/GPU", "$/Mtoken", "J/token");
  const auto row = [&](size_t i, const explore::RankedPoint& p) {
    const explore::ClusterChoice& choice = r.clusters[p.point.cluster];
    const explore::PointFigures& f = p.event ? *p.event : p.figures;
    std::cout << fmt::format(
        "  {:>3}  {:<24} {:>5}  {:<56} {:>10.4f} {:>10} {:>11.0f} {:>5.1f}% {:>8.1f} {:>9} {:>8}\n",
        i, choice.label, choice.gpus, plan_text(p.point), p.figures.iteration_s,
        p.event ? fmt::format("{:.4f}", p.event->iteration_s) : "-", f.tokens_per_s, 100 * f.mfu,
        p.figures.memory_gib, optional_figure(f.usd_per_mtoken, "{:.3f}"),
        optional_figure(f.joules_per_token, "{:.3g}"));
  };
  for (size_t i = 0; i < s.best.size(); ++i)
    row(i + 1, s.best[i]);
  if (!s.pareto.empty()) {
    std::cout << fmt::format("\nPareto front, iteration time vs cost ({} mode):\n",
                             to_string(r.rank_by));
    for (size_t i = 0; i < s.pareto.size(); ++i)
      row(i + 1, s.pareto[i]);
  }
}

int run_explore(const ExploreArgs& a, explore::Distribution* distribution) {
  for (const std::string* input : {&a.model, &a.cluster, &a.device})
    protect_input_file(*input);
  explore::SearchRequest request = search_request(a);
  const bool root = !distribution || distribution->rank() == 0;
  // Only rank 0 draws the bar (each rank reports its own share), and never with --quiet.
  ProgressBar bar("evaluating plans", root && !a.quiet && ProgressBar::stderr_is_terminal());
  request.progress = [&bar](double fraction) { bar.update(fraction); };
  std::unique_ptr<explore::ResultStore> store;
  std::exception_ptr refused;  // rank 0's database error, raised once every rank knows of it
  try {
    if (!a.db.empty() && root)
      store = std::make_unique<explore::ResultStore>(a.db, run_info(a, request));
  } catch (const InputError&) {
    refused = std::current_exception();
  }
  if (distribution && !distribution->share_go(!refused) && !root) return 2;
  if (refused) std::rethrow_exception(refused);
  const explore::SearchResult result = explore::run_search(request, store.get(), distribution);
  if (!root) return 0;
  if (a.json)
    std::cout << result_json(request, result).dump(2) << "\n";
  else
    print_text(request, result);
  return 0;
}

}  // namespace

std::function<int()> add_explore_command(CLI::App& app, explore::Distribution* distribution) {
  auto* cmd = app.add_subcommand(
      "explore",
      "Search parallel plans (and clusters) of a model for the fastest or cheapest; "
      "docs/explore.md");
  auto a = std::make_shared<ExploreArgs>();
  cmd->add_option(
         "--model", a->model,
         "Model preset, YAML file (docs/models.md) or Calculon model JSON (docs/calculon.md)")
      ->check(not_empty("a preset name or a model file"))
      ->required();
  cmd->add_option("--gpus", a->gpus, "GPUs (world size)")
      ->check(integer_in(1, kMaxWorldSize))
      ->required();
  cmd->add_option("--gbs", a->gbs, "Global batch (sequences per iteration)")
      ->check(integer_in(1, int64_t{1} << 40))
      ->required();
  cmd->add_option("--cluster", a->cluster, "Cluster preset or YAML file")
      ->check(not_empty("a preset name or a YAML file"))
      ->capture_default_str();
  cmd->add_option("--device", a->device, "Device overriding the cluster's GPU (preset or file)")
      ->check(not_empty("a preset name or a YAML file"));
  cmd->add_option("--seq", a->seq, "Sequence length (default: the model's)")
      ->check(integer_in(1, int64_t{1} << 40));
  cmd->add_option("--dtype", a->dtype, "GEMM data type: bf16, fp16 or fp8")
      ->check(CLI::IsMember({"bf16", "fp16", "fp8"}))
      ->capture_default_str();
  cmd->add_option("--attention", a->attention, "flash or unfused")
      ->check(CLI::IsMember({"flash", "unfused"}))
      ->capture_default_str();
  cmd->add_option("--p2p", a->p2p, "Stage-to-stage transfers: auto, blocking, overlapped")
      ->check(CLI::IsMember({"auto", "blocking", "overlapped"}))
      ->capture_default_str();
  cmd->add_option(
      "--vary", a->vary,
      "KEY=V1,V2,...: plan keys (tp pp cp ep vpp mbs recompute sequence-parallel "
      "distributed-optimizer zero overlap-param-gather tp-comm-overlap) narrow the default space; "
      "cluster keys (cluster gpus "
      "device gpus-per-server nic-busbw nvlink-busbw, GB/s) widen it");
  cmd->add_option("--objective", a->objective, "time, cost, energy or tokens-per-dollar")
      ->check(CLI::IsMember({"time", "cost", "energy", "tokens-per-dollar"}))
      ->capture_default_str();
  cmd->add_option("--top", a->top, "Best plans to show")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--rank-by", a->rank_by, "Mode that ranks every plan: analytical or event")
      ->check(CLI::IsMember({"analytical", "event"}))
      ->capture_default_str();
  cmd->add_option("--recheck", a->recheck,
                  "Best plans re-checked in event mode (default: --top; 0: none)")
      ->check(integer_in(0, 1000));
  cmd->add_option("--db", a->db,
                  "SQLite database receiving every evaluated point; a restart skips those done")
      ->check(not_empty("a database file"));
  cmd->add_option("--threads", a->threads, "Worker threads (default: all cores)")
      ->check(integer_in(1, 1024))
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "Print the answer as JSON");
  cmd->add_flag("--quiet", a->quiet, "No progress bar (drawn on a terminal's stderr only)");
  return [cmd, a, distribution]() {
    a->command = "orrery explore";
    for (const CLI::Option* o : cmd->get_options())
      for (const std::string& value : o->results())
        a->command += " " + o->get_name() + (o->get_expected_min() == 0 ? "" : " " + value);
    return run_explore(*a, distribution);
  };
}

}  // namespace orrery
