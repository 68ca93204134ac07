#include "models/aicb_export.h"

#include <algorithm>
#include <map>
#include <vector>

namespace orrery {
namespace {

// A row name the format can hold: no whitespace.
std::string row_name(const std::string& name) {
  std::string out = name;
  std::replace_if(
      out.begin(), out.end(), [](char c) { return c == ' ' || c == '\t'; }, '_');
  std::erase_if(out, [](char c) { return c == '(' || c == ')' || c == ','; });
  return out;
}

// Drops a collective of the context group (the format has no column for it).
void drop_context(Phase& phase) {
  if (phase.comm && phase.comm->group == CommGroup::Context) phase.comm.reset();
}

constexpr const char* kEmbeddingAllReduce =
    "the tied embedding's gradient all-reduce between the first and last stage";
constexpr const char* kLossAllReduce = "the loss all-reduce over the data-parallel group";

void note_lost(std::vector<std::string>& lost, const std::string& what) {
  if (std::find(lost.begin(), lost.end(), what) == lost.end()) lost.push_back(what);
}

constexpr const char* kGemmOverlap =
    "Transformer Engine's overlap of the tensor-parallel collectives with their GEMMs "
    "(--tp-comm-overlap): each is written after its GEMM (the weight gradient's reduce-scatter "
    "after the input gradient), and where a phase is left with two collectives one is dropped "
    "(a re-gather of a saved input; in an MLA model's attention output, the output gradient's "
    "all-gather)";

// Writes the collectives a row overlaps with its GEMMs (Phase::overlapped) as the format's
// collectives, run after the compute: forward and input-gradient ones in their own phase, the
// weight gradient's reduce-scatter in the input gradient's (the format's weight-gradient column is
// the data-parallel one), each where the phase has no collective of its own, else dropped.
void serialize_overlaps(Layer& l, std::vector<std::string>& lost) {
  const auto place = [](std::optional<GemmOverlap>& from, Phase& to) {
    if (from && !to.comm) to.comm = from->comm;
    from.reset();
  };
  if (!l.forward.overlapped && !l.input_grad.overlapped && !l.weight_grad.overlapped) return;
  note_lost(lost, kGemmOverlap);
  place(l.forward.overlapped, l.forward);
  place(l.weight_grad.overlapped, l.input_grad);
  place(l.input_grad.overlapped, l.input_grad);
}

// The iteration tail's collectives (training_workload.h): written as tensor-parallel where their
// group is the tensor group (one stage, and for the whole world no data or context
// parallelism), else dropped and named in `lost` (the format has no column for them; its
// data-parallel column is the weight gradients', which readers take for gradient reduction).
void write_tail(Phase& phase, const Parallelism& par, std::vector<std::string>& lost) {
  if (!phase.comm) return;
  const CommGroup group = phase.comm->group;
  if (group == CommGroup::Data) {
    phase.comm.reset();
    note_lost(lost, kLossAllReduce);
    return;
  }
  if (group != CommGroup::Embedding && group != CommGroup::ModelParallel &&
      group != CommGroup::World)
    return;
  const bool tensor = par.pp == 1 && (group == CommGroup::ModelParallel || par.dp() * par.cp == 1);
  if (tensor) {
    phase.comm->group = CommGroup::Tensor;
    return;
  }
  phase.comm.reset();
  note_lost(lost, group == CommGroup::Embedding
                      ? std::string(kEmbeddingAllReduce)
                      : "the gradient-norm (and fp16 found-inf) all-reduce over the " +
                            std::string(group == CommGroup::World ? "whole job"
                                                                  : "model-parallel group"));
}

}  // namespace

AicbExport aicb_workload(const Workload& g) {
  AicbExport out;
  Workload& w = out.workload;
  const Program& program = g.program;
  const Parallelism& par = g.parallelism;
  w.name = g.name;
  w.source = g.source;
  w.format = "simai";
  w.policy = "HYBRID_TRANSFORMER_FWD_IN_BCKWD";  // the policy whose readers use recompute lists
  w.parallelism = par;
  w.parallelism.cp = 1;
  if (par.pp > 1) w.stage_boundary_bytes = g.stage_boundary_bytes;
  w.model = g.model;

  // The stage whose rows every stage runs: the only one, or a middle one (no embedding, no head).
  const int64_t stage = par.pp == 1 ? 0 : par.pp / 2;
  const int64_t chunks = program.pass_per_model_chunk ? par.vpp : 1;
  const auto runs = [&](const Layer& l, int64_t chunk) {
    return !program.pass_per_model_chunk || program.runs_on(l, chunk * par.pp + stage);
  };
  if (par.pp > 1 && program.pass_per_model_chunk)
    out.lost.push_back("every stage runs stage " + std::to_string(stage) +
                       "'s layers: the first stage's embedding, the last stage's LM head and loss "
                       "and uneven layer counts are not in the file");
  if (g.gradient_bucket_bytes && par.dp() * par.cp > 1)
    out.lost.push_back("Megatron's gradient buckets: the reader issues one bucket per layer");
  if (g.param_gather_bucket_bytes && par.dp() * par.cp > 1)
    out.lost.push_back(
        "the parameter all-gather overlapped with the next forward (--overlap-param-gather): "
        "the file gathers after the optimizer");
  if (g.blocking_p2p && par.pp > 1)
    out.lost.push_back("the schedule waiting for stage-to-stage transfers (blocking p2p)");
  if (g.stage_boundary_gathered && par.pp > 1)
    out.lost.push_back("the receiving tensor group's all-gather of scattered activations");
  if (par.cp > 1)
    out.lost.push_back("context parallelism: its key-value exchanges are dropped and its " +
                       std::to_string(par.cp) + " ranks per sequence count as data-parallel");

  // generated row -> its written rows, one per pass that lists it (micro-batches share a pass)
  std::map<size_t, std::vector<size_t>> index;
  const auto add = [&](size_t from, const std::string& name) {
    Layer l = program.layers[from];
    l.name = name;
    l.stage_set = -1;
    drop_context(l.forward);
    drop_context(l.input_grad);
    serialize_overlaps(l, out.lost);
    write_tail(l.forward, par, out.lost);
    index[from].push_back(w.program.layers.size());
    w.program.layers.push_back(std::move(l));
  };
  for (const LayerRange pass : program.micro_batches) {
    const size_t begin = w.program.layers.size();
    for (int64_t c = 0; c < chunks; ++c)
      for (size_t i = pass.begin; i < pass.end; ++i) {
        if (!runs(program.layers[i], c)) continue;
        const bool opens = w.program.layers.size() == begin;
        const std::string name = row_name(program.layers[i].name);
        if (opens && name != "embedding") {
          Layer marker;  // the reader finds a pass by its embedding_layer row
          marker.name = "embedding_layer";
          w.program.layers.push_back(marker);
        }
        add(i, opens && name == "embedding" ? "embedding_layer" : name);
      }
    w.program.micro_batches.push_back({begin, w.program.layers.size()});
  }
  w.program.after.begin = w.program.layers.size();
  for (size_t i = program.after.begin; i < program.after.end; ++i) {
    const Layer& l = program.layers[i];
    if (program.pass_per_model_chunk && l.stage_set >= 0 &&
        !program.stage_sets[static_cast<size_t>(l.stage_set)][static_cast<size_t>(stage)]) {
      // Another stage's row: the written stage never runs it, and a collective there is lost.
      if (l.forward.comm && l.forward.comm->group == CommGroup::Embedding)
        note_lost(out.lost, kEmbeddingAllReduce);
      if (l.forward.comm && l.forward.comm->group == CommGroup::Data)
        note_lost(out.lost, kLossAllReduce);
      continue;
    }
    add(i, "optimizer_" + row_name(l.name));
  }
  w.program.after.end = w.program.layers.size();

  for (size_t k = 0; k < g.recompute.triggers.size(); ++k) {
    const auto checkpoint = index.find(static_cast<size_t>(g.recompute.checkpoints[k]));
    const auto trigger = index.find(static_cast<size_t>(g.recompute.triggers[k]));
    if (checkpoint == index.end() || trigger == index.end()) continue;
    for (size_t copy = 0; copy < trigger->second.size() && copy < checkpoint->second.size();
         ++copy) {
      w.recompute.checkpoints.push_back(static_cast<int64_t>(checkpoint->second[copy]));
      w.recompute.triggers.push_back(static_cast<int64_t>(trigger->second[copy]));
    }
  }
  return out;
}

}  // namespace orrery
