#include "cli/plan_options.h"

#include "cli/option_checks.h"
#include "core/diagnostics.h"
#include "models/calculon_execution.h"
#include "models/model_file.h"

namespace orrery {

namespace {

RecomputeMode recompute_mode(const std::string& name) {
  if (name == "full") return RecomputeMode::Full;
  if (name == "selective") return RecomputeMode::Selective;
  return RecomputeMode::None;
}

bool flag_given(const PlanArgs& p, const std::string& flag) {
  for (const std::string& name : p.given_flags)
    if (name == flag) return true;
  return false;
}

// The plan of Calculon's execution file under the explicit flags: a flag given wins, with a
// warning naming the key it overrides.
void apply_calculon_plan(const PlanArgs& p, std::optional<int64_t> gpus, ModelScenario& m,
                         PlanNotes& notes) {
  const CalculonExecution e = load_calculon_execution(p.plan_file);
  notes.warnings.insert(notes.warnings.end(), e.warnings.begin(), e.warnings.end());
  const auto take = [&](const char* flag, const char* key, auto& field, const auto& value) {
    if (flag_given(p, flag))
      notes.warnings.push_back(std::string(flag) + " overrides " + p.plan_file + "'s " + key);
    else
      field = value;
  };
  ParallelPlan& plan = m.plan;
  take("--tp", "tensor_par", plan.tp, e.plan.tp);
  take("--pp", "pipeline_par", plan.pp, e.plan.pp);
  take("--vpp", "pipeline_interleaving", plan.vpp, e.plan.vpp);
  take("--mbs", "microbatch_size", plan.micro_batch, e.plan.micro_batch);
  take("--recompute", "activation_recompute", plan.recompute, e.plan.recompute);
  take("--sequence-parallel", "tensor_par_comm_type", plan.sequence_parallel,
       e.plan.sequence_parallel);
  take("--distributed-optimizer", "optimizer_sharding", plan.distributed_optimizer,
       e.plan.distributed_optimizer);
  take("--dtype", "datatype", plan.dtype, e.plan.dtype);
  take("--gbs", "batch_size", m.global_batch, e.global_batch);
  if (gpus)
    notes.warnings.push_back("--gpus overrides " + p.plan_file + "'s num_procs");
  else
    m.gpus = e.num_procs;
  if (e.multi_query && m.spec.attention != AttentionKind::Mla) {
    m.spec.kv_heads = 1;
    m.spec.attention = AttentionKind::Gqa;
  }
  notes.overlap = e.overlap;
}

}  // namespace

void note_given_plan_flags(const std::vector<CLI::Option*>& flags, PlanArgs& plan) {
  for (const CLI::Option* o : flags)
    if (o->count() > 0) {
      if (!plan.given) plan.given_flag = o->get_name();
      plan.given = true;
      plan.given_flags.push_back(o->get_name());
    }
}

std::optional<ModelScenario> model_scenario(const std::string& model, const PlanArgs& p,
                                            std::optional<int64_t> ep, std::optional<int64_t> gpus,
                                            PlanNotes& notes) {
  if (model.empty()) {
    if (p.given) throw InputError(p.given_flag + " describes a parallel plan for --model");
    return std::nullopt;
  }
  ModelScenario m;
  m.spec = load_model(model, &notes.warnings);
  ParallelPlan& plan = m.plan;
  plan.tp = p.tp;
  plan.pp = p.pp;
  plan.cp = p.cp;
  plan.ep = ep.value_or(1);
  plan.vpp = p.vpp;
  plan.micro_batch = p.mbs;
  plan.seq = p.seq.value_or(m.spec.seq);
  plan.recompute = recompute_mode(p.recompute);
  plan.sequence_parallel = p.sequence_parallel;
  plan.distributed_optimizer = p.distributed_optimizer;
  plan.zero = p.zero;
  plan.fp8_param_gather = p.fp8_param_gather;
  plan.overlap_param_gather = p.overlap_param_gather;
  if (p.no_align_param_gather && !p.overlap_param_gather)
    throw InputError(
        "--no-align-param-gather: expected --overlap-param-gather (it chooses how "
        "the overlapped parameter gathers are launched)");
  plan.align_param_gather = !p.no_align_param_gather;
  plan.tp_comm_overlap = p.tp_comm_overlap;
  plan.flash_attention = p.attention != "unfused";
  plan.dtype = *parse_dtype(p.dtype);
  plan.p2p = p.p2p == "blocking"     ? P2pMode::Blocking
             : p.p2p == "overlapped" ? P2pMode::Overlapped
                                     : P2pMode::Auto;
  for (const std::string& term : p.without) {
    if (term == "attention") plan.terms.attention = false;
    if (term == "elementwise") plan.terms.elementwise = false;
    if (term == "end-stages") plan.terms.end_stages = false;
    if (term == "optimizer") plan.terms.optimizer = false;
    if (term == "fp8-casts") plan.terms.fp8_casts = false;
    if (term == "tail-collectives") plan.terms.tail_collectives = false;
    if (term == "sustained-clock") plan.terms.sustained_clock = false;
    if (term == "exposed-epilogue") plan.terms.exposed_epilogue = false;
    if (term == "slowest-gpu") plan.terms.slowest_gpu = false;
  }
  plan.first_stage_layers = p.first_stage_layers;
  plan.last_stage_layers = p.last_stage_layers;
  m.gpus = gpus;
  if (p.gbs) m.global_batch = *p.gbs;
  if (!p.plan_file.empty())
    apply_calculon_plan(p, gpus, m, notes);
  else if (!p.gbs)
    throw InputError("--model: expected --gbs (sequences per iteration) or --plan");
  m.train_tokens = p.train_tokens;
  return m;
}

// --model and its parallel plan; returns the plan flags (given without --model, an error).
std::vector<CLI::Option*> add_plan_options(CLI::App& cmd, std::string& model, PlanArgs& p) {
  cmd.add_option("--model", model,
                 "Model description instead of a workload file: a preset (see `orrery presets`) "
                 "or a YAML file (docs/models.md) or Calculon's model JSON (docs/calculon.md); "
                 "the iteration is generated as Megatron-LM "
                 "runs it with the plan below")
      ->check(not_empty("a preset name or a model file"))
      ->group("Model and parallel plan");
  std::vector<CLI::Option*> flags;
  flags.push_back(cmd.add_option("--plan", p.plan_file,
                                 "Calculon's execution JSON as the parallel plan "
                                 "(docs/calculon.md); the flags below override its keys")
                      ->check(CLI::ExistingFile)
                      ->group("Model and parallel plan"));
  const auto degree = [&](const std::string& name, int64_t& value, const std::string& help) {
    flags.push_back(cmd.add_option(name, value, help)
                        ->check(integer_in(1, kMaxWorldSize))
                        ->capture_default_str()
                        ->group("Model and parallel plan"));
  };
  degree("--tp", p.tp, "Tensor-parallel degree");
  degree("--pp", p.pp, "Pipeline-parallel stages");
  degree("--cp", p.cp,
         "Context-parallel degree (ring attention; ranks right outside tp in the placement)");
  degree("--vpp", p.vpp, "Model chunks per pipeline stage (interleaved schedule when > 1)");
  degree("--mbs", p.mbs, "Micro-batch size (sequences)");
  const auto optional_count = [&](const std::string& name, std::optional<int64_t>& value,
                                  const std::string& help) {
    flags.push_back(cmd.add_option(name, value, help)
                        ->check(integer_in(1, int64_t{1} << 40))
                        ->group("Model and parallel plan"));
  };
  optional_count("--gbs", p.gbs, "Global batch (sequences per iteration); required with --model");
  optional_count("--seq", p.seq, "Sequence length (default: the model's)");
  optional_count("--first-stage-layers", p.first_stage_layers,
                 "Layers of the first model chunk (default: spread evenly, the remainder on the "
                 "middle stages)");
  optional_count("--last-stage-layers", p.last_stage_layers, "Layers of the last model chunk");
  flags.push_back(cmd.add_option("--recompute", p.recompute,
                                 "Activation recompute: none, selective (attention core), full")
                      ->check(CLI::IsMember({"none", "selective", "full"}))
                      ->capture_default_str()
                      ->group("Model and parallel plan"));
  const auto on_off = [&](const std::string& name, bool& value, const std::string& help) {
    flags.push_back(cmd.add_flag(name, value, help)->group("Model and parallel plan"));
  };
  on_off(
      "--sequence-parallel", p.sequence_parallel,
      "Sequence parallelism (all-gather / reduce-scatter instead of tensor-parallel all-reduce)");
  on_off("--distributed-optimizer", p.distributed_optimizer,
         "Megatron's distributed optimizer (ZeRO-1): optimizer state sharded, gradients "
         "reduce-scattered, parameters all-gathered");
  on_off("--fp8-param-gather", p.fp8_param_gather,
         "With --dtype fp8 and a sharded optimizer: the weights' compute copy kept and "
         "all-gathered in fp8 (Megatron's fp8_param_gather, as NeMo's FP8 recipes run)");
  on_off("--overlap-param-gather", p.overlap_param_gather,
         "With a sharded optimizer and dp x cp > 1: the updated parameters all-gathered bucket by "
         "bucket during the next forward instead of after the optimizer (Megatron's "
         "overlap_param_gather, as NeMo's recipes run); under the interleaved schedule each "
         "model chunk's gather is launched whole from the schedule (Megatron-LM's "
         "align_param_gather)");
  on_off("--no-align-param-gather", p.no_align_param_gather,
         "With --overlap-param-gather: each bucket gathered only once the forward has waited for "
         "the one before, in every model chunk (Megatron-LM's --no-align-param-gather)");
  on_off("--tp-comm-overlap", p.tp_comm_overlap,
         "With --sequence-parallel and --tp above 1: the layers' tensor-parallel all-gathers and "
         "reduce-scatters run beside their GEMMs, pipelined in chunks or in bulk (Transformer "
         "Engine's userbuffers, Megatron's tp_comm_overlap, as NeMo's recipes run)");
  flags.push_back(cmd.add_option("--zero", p.zero,
                                 "ZeRO stage: 1 as --distributed-optimizer; 2 and 3 also shard "
                                 "gradients and parameters (memory only)")
                      ->check(CLI::Range(0, 3))
                      ->capture_default_str()
                      ->group("Model and parallel plan"));
  flags.push_back(cmd.add_option("--attention", p.attention,
                                 "flash (fused, the default) or unfused (scores stored, as "
                                 "Megatron ran in 2021-22)")
                      ->check(CLI::IsMember({"flash", "unfused"}))
                      ->capture_default_str()
                      ->group("Model and parallel plan"));
  flags.push_back(cmd.add_option("--dtype", p.dtype,
                                 "Data type of the linear layers' GEMMs: bf16, fp16 or fp8 "
                                 "(Transformer Engine); MFU divides by its dense peak")
                      ->check(CLI::IsMember({"bf16", "fp16", "fp8"}))
                      ->capture_default_str()
                      ->group("Model and parallel plan"));
  flags.push_back(cmd.add_option("--p2p", p.p2p,
                                 "Stage-to-stage transfers: auto (overlapped with the interleaved "
                                 "schedule, else blocking, as Megatron-LM today), blocking "
                                 "(Megatron until 2023), overlapped")
                      ->check(CLI::IsMember({"auto", "blocking", "overlapped"}))
                      ->capture_default_str()
                      ->group("Model and parallel plan"));
  flags.push_back(
      cmd.add_option("--without", p.without,
                     "Leave modelled terms out, to see what each adds (docs/validation.md): "
                     "attention, elementwise, end-stages, optimizer, fp8-casts, sm-contention, "
                     "sustained-clock, exposed-epilogue, slowest-gpu, tail-collectives")
          ->delimiter(',')
          ->check(CLI::IsMember({"attention", "elementwise", "end-stages", "optimizer", "fp8-casts",
                                 "sm-contention", "sustained-clock", "exposed-epilogue",
                                 "slowest-gpu", "tail-collectives"}))
          ->group("Model and parallel plan"));
  flags.push_back(cmd.add_option("--train-tokens", p.train_tokens,
                                 "Tokens to train on: adds time to train, GPU-hours, cost and "
                                 "energy (ideal: no failures or checkpoints)")
                      ->check(number_in(1, 1e18))
                      ->group("Model and parallel plan"));
  return flags;
}

}  // namespace orrery
