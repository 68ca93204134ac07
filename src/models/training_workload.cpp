#include "models/training_workload.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "models/model_counts.h"
#include "models/stage_layout.h"

namespace orrery {
namespace {

constexpr int64_t kGradientBytes = 4;  // fp32 gradients (Megatron's main_grad), reduced as such

std::string str(int64_t n) {
  return std::to_string(n);
}

// The parts as one string, allocated once (a chain of + allocates at each step that outgrows
// the string: a record's name is built for every plan a search evaluates).
std::string joined(std::initializer_list<std::string_view> parts) {
  size_t size = 0;
  for (const std::string_view part : parts)
    size += part.size();
  std::string out;
  out.reserve(size);
  for (const std::string_view part : parts)
    out += part;
  return out;
}

// Refuses a plan Megatron-LM would not run, naming the flag.
void check_plan(const ModelSpec& spec, const ParallelPlan& p) {
  const auto need = [](bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
  };
  need(p.tp >= 1 && p.pp >= 1 && p.vpp >= 1 && p.cp >= 1 && p.ep >= 1 && p.dp >= 1,
       "--tp/--pp/--vpp/--cp/--ep: expected positive degrees");
  need(p.cp == 1 || p.seq % (2 * p.cp) == 0,
       "--cp " + str(p.cp) + ": expected a divisor of half the sequence (" + str(p.seq) +
           " tokens are split into 2 x cp chunks)");
  need(p.cp == 1 || p.flash_attention,
       "--cp " + str(p.cp) + ": context parallelism runs fused attention (--attention flash)");
  need(p.tp <= spec.heads && spec.heads % p.tp == 0,
       "--tp " + str(p.tp) + ": expected a divisor of the " + str(spec.heads) + " attention heads");
  need(spec.kv_heads % p.tp == 0, "--tp " + str(p.tp) + ": expected a divisor of the " +
                                      str(spec.kv_heads) + " key-value heads (Megatron's rule)");
  if (spec.moe) {
    need(spec.moe->experts % p.ep == 0, "--ep " + str(p.ep) + ": expected a divisor of the " +
                                            str(spec.moe->experts) + " experts");
    need(p.tp == 1 || p.sequence_parallel,
         "--tp " + str(p.tp) +
             ": a MoE model with tensor parallelism needs --sequence-parallel (Megatron's rule)");
  } else {
    need(p.ep == 1, "--ep " + str(p.ep) + ": '" + spec.name + "' has no experts");
  }
  need(p.dp % p.ep == 0, "--ep " + str(p.ep) + ": expected a divisor of the data-parallel degree " +
                             str(p.dp) + " (experts are spread over data-parallel ranks)");
  need(p.micro_batch >= 1 && p.micro_batches >= 1,
       "--gbs/--mbs: expected at least one micro-batch");
  need(p.micro_batches <= kMaxMicroBatches,
       "--gbs/--mbs: expected at most " + str(kMaxMicroBatches) +
           " micro-batches per iteration (global batch / (micro-batch x data-parallel)), the plan "
           "has " +
           str(p.micro_batches));
  need(p.vpp == 1 || p.pp > 1, "--vpp " + str(p.vpp) + ": interleaving needs --pp above 1");
  need(p.vpp == 1 || p.micro_batches >= p.pp,
       "--vpp " + str(p.vpp) + ": the interleaved schedule needs at least pp (" + str(p.pp) +
           ") micro-batches per iteration, the plan has " + str(p.micro_batches) +
           " (raise --gbs or lower --mbs)");
  need(p.seq >= 1, "--seq: expected a positive sequence length");
  need(!p.fp8_param_gather || (p.dtype == DType::FP8 && (p.distributed_optimizer || p.zero >= 1)),
       "--fp8-param-gather: expected --dtype fp8 and a sharded optimizer "
       "(--distributed-optimizer or --zero 1-3)");
  need(!p.overlap_param_gather || ((p.distributed_optimizer || p.zero == 1 || p.zero == 2) &&
                                   p.zero <= 2 && p.dp * p.cp > 1),
       "--overlap-param-gather: expected a sharded optimizer (--distributed-optimizer or --zero "
       "1-2) and more than one data-parallel rank (dp x cp = " +
           str(p.dp * p.cp) + ")");
  need(!p.tp_comm_overlap || (p.sequence_parallel && p.tp > 1),
       "--tp-comm-overlap: expected --sequence-parallel and --tp above 1 (it overlaps the "
       "sequence-parallel all-gathers and reduce-scatters with their GEMMs)");
}

ComputeDemand gemm(int64_t m, int64_t n, int64_t k, DType dtype, int64_t batch = 1,
                   int64_t out_bytes = 2) {
  ComputeDemand d;
  d.kind = KernelClass::Gemm;
  d.dtype = dtype;
  d.gemm = {batch, m, n, k, out_bytes};
  const auto in = static_cast<double>(size_in_bytes(dtype));
  const auto b = static_cast<double>(batch);
  d.flop = 2.0 * b * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  d.bytes = static_cast<Bytes>(
      b * (in * static_cast<double>(m * k + k * n) + static_cast<double>(out_bytes * m * n)));
  return d;
}

ComputeDemand streaming(KernelClass kind, double bytes, int64_t rows = 0) {
  ComputeDemand d;
  d.kind = kind;
  d.dtype = DType::BF16;
  d.bytes = static_cast<Bytes>(bytes);
  d.rows = rows;
  return d;
}

// Fused attention over `heads` heads of `sequences` sequences: causal forward FLOPs 2 s^2 d per
// head (half of the full QK^T and PV); the backward pass does 2.5 times that.
ComputeDemand fused_attention(int64_t sequences, int64_t heads, int64_t seq, int64_t qk_dim,
                              int64_t v_dim, bool backward, int64_t kv_heads) {
  const double factor = backward ? 2.5 : 1.0;
  ComputeDemand d;
  d.kind = backward ? KernelClass::AttentionBackward : KernelClass::Attention;
  d.dtype = DType::BF16;
  d.gemm = {sequences * heads, seq, seq, qk_dim};
  const auto s = static_cast<double>(seq);
  d.flop =
      factor * static_cast<double>(sequences * heads) * s * s * static_cast<double>(qk_dim + v_dim);
  d.bytes = static_cast<Bytes>(
      factor * 2.0 * static_cast<double>(sequences) * s *
      static_cast<double>(heads * (qk_dim + v_dim) + kv_heads * (qk_dim + v_dim)));
  return d;
}

Communication comm(CollectiveKind kind, CommGroup group, double bytes) {
  return {kind, group, static_cast<Bytes>(bytes)};
}

// Transformer Engine's communication-GEMM overlap (--tp-comm-overlap) as NeMo configures it for
// GPT-3 175B on H100 (its userbuffers config; docs/models.md): the SMs each overlap's
// communication holds, and the attention projection's forward split into 4 chunks.
constexpr int64_t kRingExchangeSms = 1;
constexpr int64_t kProjectionSplits = 4, kProjectionSms = 24;
constexpr int64_t kQkvBulkSms = 4, kFc1InputGradBulkSms = 2, kWeightGradBulkSms = 4;

GemmOverlap bulk(Communication c, int64_t sms) {
  return {c, GemmOverlapMethod::Bulk, 1, sms, false, {}};
}
// The attention projection's forward reduce-scatter, in chunks, its GEMM on the SMs left.
GemmOverlap projection_pipeline(Communication c) {
  return {c, GemmOverlapMethod::Pipelined, kProjectionSplits, kProjectionSms, true, {}};
}

// Builds the records of one pass and the iteration-level rows.
class Generator {
 public:
  Generator(const ModelSpec& spec, const ParallelPlan& plan)
      : spec_(spec),
        p_(plan),
        layout_(stage_layout(spec.layers, plan.pp, plan.vpp, plan.first_stage_layers,
                             plan.last_stage_layers)),
        whole_(parameter_count(spec)) {
    t_ = p_.tp;
    tokens_ = p_.micro_batch * p_.seq / p_.cp;  // this rank's share of the micro-batch
    sp_tokens_ = p_.sequence_parallel ? tokens_ / t_ : tokens_;
    sharded_ = p_.distributed_optimizer || p_.zero >= 1;
    overlap_ = p_.tp_comm_overlap;  // check_plan: with sequence parallelism and t > 1
    vb_ = static_cast<double>(p_.value_bytes);
    y_ = static_cast<double>(tokens_ * spec_.hidden) * vb_;  // one full activation, bytes
  }

  TrainingWorkload build() {
    TrainingWorkload out;
    Workload& w = out.workload;
    w.name = spec_.name;
    w.source = spec_.name;
    w.format = "model";
    w.header_line = 0;
    w.policy = "megatron";
    Parallelism& par = w.parallelism;
    par.tp = t_;
    par.cp = p_.cp;
    par.pp = p_.pp;
    par.ep = p_.ep;
    par.vpp = p_.vpp;
    par.micro_batches = p_.micro_batches;
    par.world_size = p_.world_size();
    // Stage-to-stage activations: 1/t of them per rank (sequence parallelism shards them
    // already; without it Megatron scatters them and the receiving tensor group gathers).
    w.stage_boundary_bytes =
        static_cast<Bytes>(static_cast<double>(tokens_ / t_ * spec_.hidden) * vb_);
    w.stage_boundary_gathered = !p_.sequence_parallel && t_ > 1;
    w.blocking_p2p = p_.p2p == P2pMode::Blocking || (p_.p2p == P2pMode::Auto && p_.vpp == 1);
    // Megatron's bucket: max(40 M, 1 M x the data-parallel size with context parallelism).
    const int64_t bucket_parameters = std::max<int64_t>(40'000'000, 1'000'000 * p_.dp * p_.cp);
    w.gradient_bucket_bytes = bucket_parameters * kGradientBytes;
    if (p_.overlap_param_gather)
      w.param_gather_bucket_bytes =
          static_cast<Bytes>(static_cast<double>(bucket_parameters) * weight_bytes());
    w.align_param_gather = p_.align_param_gather;

    Program& program = w.program;
    program.pass_per_model_chunk = true;
    // Every micro-batch runs the same pass: its layers are generated once and each micro-batch
    // lists the same range (the simulators cost each layer once per micro-batch that lists it).
    // Room for a pass (a few records per layer slot, the end stages) and the stages' rows.
    const int64_t slots = *std::max_element(layout_.layers.begin(), layout_.layers.end());
    program.layers.reserve(static_cast<size_t>(8 * slots + 8 * p_.pp + 16));
    const size_t begin = program.layers.size();
    pass(w);
    program.micro_batches.assign(static_cast<size_t>(p_.micro_batches),
                                 {begin, program.layers.size()});
    program.after.begin = program.layers.size();
    iteration_rows(program);
    program.after.end = program.layers.size();
    program.stage_sets = std::move(sets_);

    out.global_batch = p_.micro_batch * p_.micro_batches * p_.dp;
    out.tokens = out.global_batch * p_.seq;
    out.model_flop = model_flops_per_token(spec_, p_.seq) * static_cast<double>(out.tokens);
    out.hardware_flop_per_gpu = hardware_flop_per_gpu(w);
    ModelSummary summary;
    summary.parameters = whole_.total();
    summary.layers = spec_.layers;
    summary.forward_flop = out.model_flop / 3;
    w.model = summary;
    return out;
  }

 private:
  // The stage set of the virtual stages `runs` selects, shared between equal sets (found by
  // hash: a program has a set per pipeline stage, each looked up by its stage's rows). A new set
  // is moved into the program, never copied (copying a vector<bool> goes bit by bit).
  int32_t set_of(std::vector<bool> runs) {
    if (std::all_of(runs.begin(), runs.end(), [](bool b) { return b; })) return -1;
    const size_t hash = std::hash<std::vector<bool>>{}(runs);
    const auto [first, last] = set_index_.equal_range(hash);
    for (auto it = first; it != last; ++it)
      if (sets_[static_cast<size_t>(it->second)] == runs) return it->second;
    const auto index = static_cast<int32_t>(sets_.size());
    set_index_.emplace(hash, index);
    sets_.push_back(std::move(runs));
    return index;
  }

  // The set of virtual stage `v` alone.
  std::vector<bool> only(int64_t v) const {
    std::vector<bool> runs(static_cast<size_t>(layout_.virtual_stages()), false);
    runs[static_cast<size_t>(v)] = true;
    return runs;
  }

  Layer& record(Program& program, std::string name, int32_t set) {
    Layer& l = program.layers.emplace_back();
    l.name = std::move(name);
    l.stage_set = set;
    return l;
  }

  // One model chunk's pass: the embedding where virtual stage 0 runs it, layer slots k = 0, 1, ...
  // (slot k of virtual stage v is layer first[v] + k, dense or MoE), the LM head on the last.
  void pass(Workload& w) {
    Program& program = w.program;
    const size_t begin = program.layers.size();
    const int64_t vs = layout_.virtual_stages();
    if (p_.terms.end_stages) embedding(program, set_of(only(0)));
    const int64_t slots = *std::max_element(layout_.layers.begin(), layout_.layers.end());
    for (int64_t k = 0; k < slots; ++k) {
      // The virtual stages whose slot k is a dense layer, and those where it is a MoE layer.
      std::vector<bool> dense(static_cast<size_t>(vs), false), moe(static_cast<size_t>(vs), false);
      for (int64_t v = 0; v < vs; ++v) {
        if (k >= layout_.layers[static_cast<size_t>(v)]) continue;
        const int64_t layer = layout_.first[static_cast<size_t>(v)] + k;
        (spec_.is_moe_layer(layer) ? moe : dense)[static_cast<size_t>(v)] = true;
      }
      for (const bool is_moe : {false, true}) {
        auto& runs = is_moe ? moe : dense;
        if (std::none_of(runs.begin(), runs.end(), [](bool b) { return b; })) continue;
        transformer_layer(w, set_of(std::move(runs)), is_moe, "layer " + str(k + 1));
      }
    }
    if (p_.terms.end_stages) lm_head(program, set_of(only(vs - 1)));
    if (!p_.terms.elementwise)  // only the GEMMs and the attention kernels remain
      for (size_t i = begin; i < program.layers.size(); ++i)
        for (Phase* phase : {&program.layers[i].forward, &program.layers[i].input_grad,
                             &program.layers[i].weight_grad})
          std::erase_if(phase->kernels, [](const ComputeDemand& k) {
            return k.kind != KernelClass::Gemm && k.kind != KernelClass::Attention &&
                   k.kind != KernelClass::AttentionBackward;
          });
  }

  // Kernels ---------------------------------------------------------------------------------

  double act_bytes(int64_t rows, int64_t width) const {
    return static_cast<double>(rows) * static_cast<double>(width) * vb_;
  }
  ComputeDemand norm(int64_t rows, double factor = 1, int64_t width = 0) const {
    return streaming(KernelClass::LayerNorm,
                     factor * 2 * act_bytes(rows, width > 0 ? width : spec_.hidden), rows);
  }
  // Bias, dropout and residual add over the layer's sequence-parallel shard: two reads, a write
  // and a one-byte mask (Megatron's fused kernel).
  ComputeDemand residual(double factor = 1) const {
    return streaming(KernelClass::Elementwise,
                     factor * (3 * act_bytes(sp_tokens_, spec_.hidden) +
                               static_cast<double>(sp_tokens_ * spec_.hidden)));
  }
  // A linear layer (tokens x in -> out): forward, input-gradient and weight-gradient GEMMs; the
  // weight gradient accumulates into fp32 (read and write of in x out x 4 bytes), or, where no
  // full gradient buffer is kept (ZeRO-3, ZeRO-2 over several micro-batches), is written fresh
  // as fp32 (4 bytes) before its reduce-scatter. In FP8
  // (Transformer Engine) each pass also casts its bf16 operand: the input to fp8 (read 2, write 1
  // byte per value), the output gradient to fp8 and its transpose (read 2, write 2), and the
  // saved fp8 input transposed for the weight gradient (read 1, write 1).
  struct Linear {
    ComputeDemand forward, input_grad, weight_grad;
    std::vector<ComputeDemand> casts[3];  // forward, input gradient, weight gradient
  };
  Linear linear(int64_t tokens, int64_t in, int64_t out, int64_t batch = 1,
                bool high_precision = false) const {
    const DType type = high_precision && p_.dtype == DType::FP8 ? DType::BF16 : p_.dtype;
    Linear l{gemm(tokens, out, in, type, batch),
             gemm(tokens, in, out, type, batch),
             gemm(in, out, tokens, type, batch, fresh_gradients() ? 4 : 8),
             {}};
    if (type == DType::FP8 && p_.terms.fp8_casts) {
      const auto values = [&](int64_t width) {
        return static_cast<double>(batch * tokens) * static_cast<double>(width);
      };
      l.casts[0].push_back(streaming(KernelClass::Copy, 3 * values(in)));
      l.casts[1].push_back(streaming(KernelClass::Copy, 4 * values(out)));
      l.casts[2].push_back(streaming(KernelClass::Copy, 2 * values(in)));
    }
    return l;
  }
  // Room for the most kernels each phase of `layer` will list, so that a list built step by step
  // is allocated once (a search generates a program for every plan, and these add up).
  static void reserve_kernels(Layer& layer, size_t forward, size_t input_grad, size_t weight_grad) {
    layer.forward.kernels.reserve(forward);
    layer.input_grad.kernels.reserve(input_grad);
    layer.weight_grad.kernels.reserve(weight_grad);
  }
  static void add_casts(Layer& layer, const Linear& l) {
    Phase* phases[3] = {&layer.forward, &layer.input_grad, &layer.weight_grad};
    for (int k = 0; k < 3; ++k)
      phases[k]->kernels.insert(phases[k]->kernels.end(), l.casts[k].begin(), l.casts[k].end());
  }

  // Records ---------------------------------------------------------------------------------

  void embedding(Program& program, int32_t set) {
    Layer& e = record(program, "embedding", set);
    e.forward.kernels.push_back(
        streaming(KernelClass::Copy, 2 * act_bytes(tokens_, spec_.hidden)));  // gather rows
    if (t_ > 1)
      e.forward.comm =
          comm(p_.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
               CommGroup::Tensor, y_);
    if (t_ > 1 && p_.sequence_parallel)
      e.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    e.weight_grad.kernels.push_back(  // scatter-add into the fp32 table gradient
        streaming(KernelClass::Copy, act_bytes(tokens_, spec_.hidden) +
                                         8.0 * static_cast<double>(tokens_ * spec_.hidden)));
  }

  void lm_head(Program& program, int32_t set) {
    Layer& n = record(program, "final norm", set);
    n.forward.kernels.push_back(norm(sp_tokens_));
    n.input_grad.kernels.push_back(norm(sp_tokens_, 1.5));
    if (t_ > 1 && p_.sequence_parallel)
      n.forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    Layer& h = record(program, "LM head and loss", set);
    const int64_t shard = (spec_.vocab + t_ - 1) / t_;
    const Linear head = linear(tokens_, spec_.hidden, shard, 1, true);  // not an FP8 layer
    // Cross entropy over the vocabulary shard: the logits cast to fp32, max, exp and sum, and
    // the gradient written back (Megatron's vocab-parallel kernel: about three fp32 passes).
    const double logits = static_cast<double>(tokens_ * shard);
    h.forward.kernels = {head.forward,
                         streaming(KernelClass::Softmax, logits * (2 + 3 * 4), tokens_)};
    if (t_ > 1)  // max, target logit and sum of exponentials: N fp32 values each
      h.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Tensor,
                            3.0 * 4 * static_cast<double>(tokens_));
    h.input_grad.kernels = {streaming(KernelClass::Elementwise, logits * (4 + 2)), head.input_grad};
    if (t_ > 1)
      h.input_grad.comm =
          comm(p_.sequence_parallel ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
               CommGroup::Tensor, y_);
    h.weight_grad.kernels = {head.weight_grad};
  }

  void transformer_layer(Workload& w, int32_t set, bool moe, const std::string& name) {
    Program& program = w.program;
    const size_t first = program.layers.size();
    if (fully_sharded())
      parameter_gather(program, set, moe, name, false);
    else if (gradients_scattered_per_micro_batch())
      gradient_scatter(program, set, moe, name);
    attention_block(program, set, name);
    if (moe)
      moe_block(program, set, name);
    else
      mlp_block(program, set, name);
    if (p_.recompute == RecomputeMode::Full) {
      record(program, name + " end", set);  // the recompute trigger: re-run [first, here)
      w.recompute.checkpoints.push_back(static_cast<int64_t>(first));
      w.recompute.triggers.push_back(static_cast<int64_t>(program.layers.size() - 1));
    }
    if (fully_sharded()) parameter_gather(program, set, moe, name, true);
  }

  // ZeRO-3 (FSDP-style): parameters are sharded over the data-parallel group, so each layer's
  // are all-gathered before its forward and again before its backward, and its gradients are
  // reduce-scattered once its backward is done (overlapped, on the data-parallel stream). The
  // gathers block the compute (no prefetch of the next layer's parameters: an upper bound).
  bool fully_sharded() const { return p_.zero >= 3 && p_.dp * p_.cp > 1; }
  // No full gradient buffer to accumulate a weight gradient into.
  bool fresh_gradients() const { return fully_sharded() || gradients_scattered_per_micro_batch(); }
  // ZeRO-2 keeps only its shard of the gradients, so with several micro-batches each one's
  // gradients are reduce-scattered layer by layer as its backward finishes (there is no full
  // buffer to accumulate them in); with one micro-batch that is the single reduction ZeRO-1 does.
  bool gradients_scattered_per_micro_batch() const {
    return p_.zero == 2 && p_.dp * p_.cp > 1 && p_.micro_batches > 1;
  }
  // Each layer's shared pass row reduce-scatters its gradients after its weight gradient.
  void gradient_scatter(Program& program, int32_t set, bool moe, const std::string& name) {
    per_parameter_group(moe, [&](const std::string& what, CommGroup group, double params) {
      Layer& g = record(program, joined({name, " ", what, " gradient scatter"}), set);
      g.weight_grad.comm = comm(CollectiveKind::ReduceScatter, group, params * kGradientBytes);
    });
  }
  std::pair<double, double> local_layer_parameters(bool moe) const {
    int64_t layer = 0;
    while (layer + 1 < spec_.layers && spec_.is_moe_layer(layer) != moe)
      ++layer;
    const ParameterCount c = layer_parameter_count(spec_, layer);
    return {tensor_rank_dense_parameters(c, t_),
            static_cast<double>(c.routed_experts) / static_cast<double>(t_ * p_.ep)};
  }
  // Calls add(what, group, parameters) with one layer's local dense parameters over the
  // data-parallel group and, where experts are replicated, its routed experts' over the
  // expert-data-parallel group.
  template <class Add>
  void per_parameter_group(bool moe, Add add) const {
    const auto [dense, expert] = local_layer_parameters(moe);
    add("parameter", CommGroup::Data, dense);
    if (expert > 0 && p_.dp / p_.ep * p_.cp > 1)
      add("expert parameter", CommGroup::ExpertData, expert);
  }
  void parameter_gather(Program& program, int32_t set, bool moe, const std::string& name,
                        bool backward) {
    per_parameter_group(moe, [&](const std::string& what, CommGroup group, double params) {
      Layer& g =
          record(program, joined({name, " ", what, backward ? " re-gather" : " gather"}), set);
      if (backward) {
        g.input_grad.comm = comm(CollectiveKind::AllGather, group, params * weight_bytes());
      } else {
        g.forward.comm = comm(CollectiveKind::AllGather, group, params * weight_bytes());
        g.weight_grad.comm = comm(CollectiveKind::ReduceScatter, group, params * kGradientBytes);
      }
    });
  }

  // Bytes of one weight as the parameter all-gathers move it.
  double weight_bytes() const { return p_.fp8_param_gather ? 1.0 : vb_; }

  // Appends core attention's kernels for one micro-batch on one tensor-parallel rank to `out`.
  void core_attention(bool backward, std::vector<ComputeDemand>& out) const {
    const int64_t heads = spec_.heads / t_, kv = spec_.kv_heads / t_;
    const int64_t qk = spec_.attention == AttentionKind::Mla ? spec_.head_dim + spec_.mla.rope_dim
                                                             : spec_.head_dim;
    const int64_t vd =
        spec_.attention == AttentionKind::Mla ? spec_.mla.v_head_dim : spec_.head_dim;
    const int64_t s = p_.seq, b = p_.micro_batch;
    if (!p_.terms.attention) return;
    if (p_.flash_attention) {
      // Context parallelism (ring attention, load-balanced causal chunks): each rank computes
      // 1/cp of the work, in cp steps over key chunks of s / cp tokens.
      ComputeDemand a = fused_attention(b, heads, s, qk, vd, backward, kv);
      if (p_.cp > 1) {
        a.flop /= static_cast<double>(p_.cp);
        a.bytes /= p_.cp;
        a.gemm.m = a.gemm.n = s / p_.cp;
      }
      out.push_back(a);
      return;
    }
    // Unfused (Megatron 2021-22): QK^T and PV as batched GEMMs over the full s x s scores, the
    // fused scale-mask-softmax and the attention dropout (a one-byte mask) over them.
    const double scores = static_cast<double>(b * heads * s) * static_cast<double>(s);
    if (!backward)
      out.insert(out.end(), {gemm(s, s, qk, DType::BF16, b * heads),
                             streaming(KernelClass::Softmax, scores * 2 * vb_, b * heads * s),
                             streaming(KernelClass::Elementwise, scores * (2 * vb_ + 1)),
                             gemm(s, vd, s, DType::BF16, b * heads)});
    else
      out.insert(out.end(), {gemm(s, s, vd, DType::BF16, b * heads),  // d(probabilities) = dO V^T
                             gemm(s, vd, s, DType::BF16, b * heads),  // dV = P^T dO
                             streaming(KernelClass::Elementwise, scores * (2 * vb_ + 1)),
                             streaming(KernelClass::Softmax, scores * 3 * vb_, b * heads * s),
                             gemm(s, qk, s, DType::BF16, b * heads),    // dQ = dS K
                             gemm(s, qk, s, DType::BF16, b * heads)});  // dK = dS^T Q
  }

  // The query/key/value projection's output width on one tensor-parallel rank (MHA, GQA).
  int64_t qkv_width() const { return (spec_.heads + 2 * spec_.kv_heads) * spec_.head_dim / t_; }
  int64_t context_width() const {
    const int64_t vd =
        spec_.attention == AttentionKind::Mla ? spec_.mla.v_head_dim : spec_.head_dim;
    return spec_.heads * vd / t_;
  }

  void attention_block(Program& program, int32_t set, const std::string& name) {
    const Linear out = linear(tokens_, context_width(), spec_.hidden);
    Layer* a = spec_.attention == AttentionKind::Mla ? &mla_projections(program, set, name)
                                                     : &qkv_projection(program, set, name);
    if (p_.cp > 1) {
      // Ring attention: the keys and values of every rank of the context group pass around it
      // (an all-gather of 2 N g d / t values per rank; MLA's heads have keys of d + r and values
      // of v), their gradients back (a reduce-scatter).
      const double kv =
          spec_.attention == AttentionKind::Mla
              ? act_bytes(
                    tokens_,
                    spec_.heads * (spec_.head_dim + spec_.mla.rope_dim + spec_.mla.v_head_dim) / t_)
              : 2 * act_bytes(tokens_, spec_.kv_heads * spec_.head_dim / t_);
      a->forward.comm =
          comm(CollectiveKind::AllGather, CommGroup::Context, kv * static_cast<double>(p_.cp));
      a = &record(program, name + " core attention", set);
      a->input_grad.comm =
          comm(CollectiveKind::ReduceScatter, CommGroup::Context, kv * static_cast<double>(p_.cp));
    }
    core_attention(false, a->forward.kernels);
    if (p_.recompute == RecomputeMode::Selective) core_attention(false, a->input_grad.kernels);
    core_attention(true, a->input_grad.kernels);

    // With sequence parallelism the output's backward re-gathers the saved input shards of the
    // block's column-parallel GEMMs: the hidden state, or MLA's compressed queries (or the hidden
    // state without q_l) and compressed keys and values (only the RoPE key is gathered by hand).
    const int64_t regathered =
        spec_.attention == AttentionKind::Mla
            ? (spec_.mla.q_lora_rank > 0 ? spec_.mla.q_lora_rank : spec_.hidden) +
                  spec_.mla.kv_lora_rank
            : spec_.hidden;
    // Under TE's overlap the QKV projection's input gradient re-gathers its own input (MLA's
    // projections keep the block's re-gather).
    const bool own = overlap_ && spec_.attention != AttentionKind::Mla;
    block_output(program, set, name + " attention output", out,
                 own ? 0 : act_bytes(tokens_, regathered),
                 projection_pipeline(comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, y_)));
  }

  // Under TE's overlap, a column-parallel GEMM (QKV, FC1) of record `l`: its forward runs beside
  // the ring exchange of its input's all-gather, its input gradient beside the bulk re-gather of
  // its saved input (`input_grad_sms`), its weight gradient beside the bulk reduce-scatter of the
  // input gradient (which without the overlap runs after the input gradient).
  void column_parallel_overlaps(Layer& l, int64_t input_grad_sms) const {
    const Communication gather = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    l.forward.overlapped = ring_exchange(gather, false);
    l.input_grad.overlapped = bulk(gather, input_grad_sms);
    l.input_grad.comm.reset();
    l.weight_grad.overlapped =
        bulk(comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, y_), kWeightGradBulkSms);
  }
  GemmOverlap ring_exchange(Communication c, bool sm_margin) const {
    return {c, GemmOverlapMethod::RingExchange, t_, kRingExchangeSms, sm_margin, {}};
  }

  // The norm and the query/key/value projection (column-parallel; with sequence parallelism the
  // norm is its own record, the all-gather following it). Returns the projection's record, to
  // which core attention is added.
  Layer& qkv_projection(Program& program, int32_t set, const std::string& name) {
    const bool sp = p_.sequence_parallel && t_ > 1;
    const Linear qkv = linear(tokens_, spec_.hidden, qkv_width());
    Layer* a = &record(program, name + " attention", set);
    if (sp) {
      a->name = name + " attention norm";
      a->forward.kernels.push_back(norm(sp_tokens_));
      a->input_grad.kernels.push_back(norm(sp_tokens_, 1.5));
      if (!overlap_) a->forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
      a = &record(program, name + " attention", set);
    }
    // The norm, the projection, RoPE, a cast and up to four core attention kernels forward; the
    // norm, the projection, a cast and up to 4 + 6 core attention kernels (selective recompute).
    reserve_kernels(*a, 8, 13, 2);
    if (!sp) {
      a->forward.kernels.push_back(norm(tokens_));
      a->input_grad.kernels.push_back(norm(tokens_, 1.5));
    }
    a->forward.kernels.push_back(qkv.forward);
    if (spec_.position == Position::Rope)
      a->forward.kernels.push_back(
          streaming(KernelClass::Elementwise,
                    2 * act_bytes(tokens_, (spec_.heads + spec_.kv_heads) * spec_.head_dim / t_)));
    a->input_grad.kernels.push_back(qkv.input_grad);
    if (t_ > 1)
      a->input_grad.comm = comm(sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                                CommGroup::Tensor, y_);
    a->weight_grad.kernels.push_back(qkv.weight_grad);
    add_casts(*a, qkv);
    if (overlap_) column_parallel_overlaps(*a, kQkvBulkSms);
    return *a;
  }

  // Multi-latent attention as Megatron-core runs it. The down-projections (queries to the rank
  // q_l, keys and values to kv_l plus the shared RoPE key) are held whole on every tensor rank
  // ("duplicated") and run on the rank's own tokens (its sequence shard with sequence
  // parallelism), with the norm before them and the norms of their outputs; the compressed values
  // and the RoPE key are then all-gathered over the tensor group (with sequence parallelism) and
  // projected up column-parallel, whose input gradient the group reduce-scatters: q_l + kv_l + r
  // values per token instead of the hidden state's h (without sequence parallelism it all-reduces
  // the up-projections' q_l + kv_l). The three tensors are priced as one collective. Without q_l
  // the queries project from the gathered hidden state. Returns the up-projections' record.
  Layer& mla_projections(Program& program, int32_t set, const std::string& name) {
    const bool sp = p_.sequence_parallel && t_ > 1;
    const MlaShape& m = spec_.mla;
    const int64_t h = spec_.hidden, rows = sp ? sp_tokens_ : tokens_;
    const int64_t ql = m.q_lora_rank, kv = m.kv_lora_rank + m.rope_dim;
    // Gathered with sequence parallelism: the compressed queries (or the hidden state), keys and
    // values and the RoPE key; without it the up-projections' input gradients are all-reduced,
    // which the RoPE key is not part of.
    const double gathered = act_bytes(tokens_, (ql > 0 ? ql : h) + kv);
    const double reduced = sp ? gathered : act_bytes(tokens_, (ql > 0 ? ql : h) + m.kv_lora_rank);
    const Linear kv_down = linear(rows, h, kv);
    const Linear kv_up =
        linear(tokens_, m.kv_lora_rank, spec_.heads * (spec_.head_dim + m.v_head_dim) / t_);
    const int64_t q_width = spec_.heads * (spec_.head_dim + m.rope_dim) / t_;
    const Linear q_up = linear(tokens_, ql > 0 ? ql : h, q_width);

    Layer& d = record(program, name + " attention norm and down-projections", set);
    reserve_kernels(d, 7, 5, 2);
    d.forward.kernels.push_back(norm(rows));
    d.forward.kernels.push_back(kv_down.forward);
    d.forward.kernels.push_back(norm(rows, 1, m.kv_lora_rank));
    d.input_grad.kernels.push_back(norm(rows, 1.5, m.kv_lora_rank));
    d.input_grad.kernels.push_back(kv_down.input_grad);
    d.weight_grad.kernels.push_back(kv_down.weight_grad);
    add_casts(d, kv_down);
    if (ql > 0) {
      const Linear q_down = linear(rows, h, ql);
      d.forward.kernels.push_back(q_down.forward);
      d.forward.kernels.push_back(norm(rows, 1, ql));
      d.input_grad.kernels.push_back(norm(rows, 1.5, ql));
      d.input_grad.kernels.push_back(q_down.input_grad);
      d.weight_grad.kernels.push_back(q_down.weight_grad);
      add_casts(d, q_down);
    }
    d.input_grad.kernels.push_back(norm(rows, 1.5));
    if (sp) d.forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, gathered);

    Layer& a = record(program, name + " attention", set);
    reserve_kernels(a, 9, 14, 2);
    a.forward.kernels.push_back(q_up.forward);
    a.forward.kernels.push_back(kv_up.forward);
    if (spec_.position == Position::Rope)  // the queries' RoPE part and the shared RoPE key
      a.forward.kernels.push_back(
          streaming(KernelClass::Elementwise,
                    2 * act_bytes(tokens_, spec_.heads * m.rope_dim / t_ + m.rope_dim)));
    a.input_grad.kernels.push_back(kv_up.input_grad);
    a.input_grad.kernels.push_back(q_up.input_grad);
    if (t_ > 1)
      a.input_grad.comm = comm(sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                               CommGroup::Tensor, reduced);
    a.weight_grad.kernels.push_back(q_up.weight_grad);
    a.weight_grad.kernels.push_back(kv_up.weight_grad);
    add_casts(a, q_up);
    add_casts(a, kv_up);
    return a;
  }

  // A block's row-parallel output projection (attention's out-proj, the MLP's FC2): the GEMMs,
  // the forward all-reduce (reduce-scatter with sequence parallelism, whose backward re-gathers
  // the block's saved input for its first GEMM's weight gradient, `regathered` bytes, if any), and
  // without sequence parallelism the block's bias-dropout-residual. Under TE's overlap the forward
  // reduce-scatter runs as `forward_overlap` says and the input gradient beside the ring exchange
  // of the output gradient's all-gather (which without it closes the record after the block).
  void block_output(Program& program, int32_t set, const std::string& name, const Linear& l,
                    double regathered, const GemmOverlap& forward_overlap) {
    const bool sp = p_.sequence_parallel && t_ > 1;
    Layer& o = record(program, name, set);
    reserve_kernels(o, 3, 3, 2);  // the GEMM, an FP8 cast and the residual
    o.forward.kernels.push_back(l.forward);
    o.input_grad.kernels.push_back(l.input_grad);
    o.weight_grad.kernels.push_back(l.weight_grad);
    add_casts(o, l);
    if (overlap_) {
      o.forward.overlapped = forward_overlap;
      o.input_grad.overlapped =
          ring_exchange(comm(CollectiveKind::AllGather, CommGroup::Tensor, y_), false);
    } else if (t_ > 1) {
      o.forward.comm = comm(sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                            CommGroup::Tensor, y_);
    }
    if (sp) {
      if (regathered > 0)
        o.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, regathered);
    } else {
      o.forward.kernels.push_back(residual());
      o.input_grad.kernels.push_back(residual(1.5));
    }
  }

  // The record that closes a block under sequence parallelism: residual, then the next block's
  // norm and all-gather; backward, the all-gather of the block output's gradient.
  Layer& residual_and_norm(Program& program, int32_t set, const std::string& name, bool gather) {
    Layer& r = record(program, name, set);
    r.forward.kernels = {residual(), norm(sp_tokens_)};
    r.input_grad.kernels = {norm(sp_tokens_, 1.5), residual(1.5)};
    if (overlap_) return r;  // both all-gathers run beside the GEMMs that need them
    if (gather) r.forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    r.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    return r;
  }

  void mlp_block(Program& program, int32_t set, const std::string& name) {
    const bool sp = p_.sequence_parallel && t_ > 1;
    const int64_t h = spec_.hidden, f = spec_.ffn_hidden / t_;
    const int64_t up = spec_.activation == Activation::Swiglu ? 2 * f : f;
    const Linear fc1 = linear(tokens_, h, up);
    const Linear fc2 = linear(tokens_, f, h);
    if (sp) residual_and_norm(program, set, name + " attention residual, MLP norm", true);
    Layer* m = &record(program, name + " MLP", set);
    // The norm (forward and backward, without sequence parallelism), the GEMM, the activation and
    // an FP8 cast.
    reserve_kernels(*m, 4, 4, 2);
    if (!sp) m->forward.kernels.push_back(norm(tokens_));
    m->forward.kernels.push_back(fc1.forward);
    m->forward.kernels.push_back(activation(f, false));
    m->input_grad.kernels.push_back(activation(f, true));
    m->input_grad.kernels.push_back(fc1.input_grad);
    if (!sp) m->input_grad.kernels.push_back(norm(tokens_, 1.5));
    if (t_ > 1)
      m->input_grad.comm = comm(sp ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce,
                                CommGroup::Tensor, y_);
    m->weight_grad.kernels.push_back(fc1.weight_grad);
    add_casts(*m, fc1);
    if (overlap_) column_parallel_overlaps(*m, kFc1InputGradBulkSms);

    block_output(program, set, name + " MLP output", fc2, overlap_ ? 0 : y_,
                 ring_exchange(comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, y_), true));
    if (sp) {
      Layer& r = record(program, name + " MLP residual", set);
      r.forward.kernels.push_back(residual());
      r.input_grad.kernels.push_back(residual(1.5));
      if (!overlap_) r.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, y_);
    }
  }

  // The MLP's activation over `width` columns per token: GeLU / squared ReLU read one matrix and
  // write one; SwiGLU reads two; backward reads input and gradient(s) and writes gradient(s).
  ComputeDemand activation(int64_t width, bool backward, int64_t rows = -1) const {
    const int64_t n = rows < 0 ? tokens_ : rows;
    const double m = act_bytes(n, width);
    const bool glu = spec_.activation == Activation::Swiglu;
    return streaming(KernelClass::Elementwise,
                     backward ? (glu ? 5 * m : 3 * m) : (glu ? 3 * m : 2 * m));
  }

  void moe_block(Program& program, int32_t set, const std::string& name) {
    const MoeSpec& e = *spec_.moe;
    const int64_t h = spec_.hidden;
    const int64_t routed = sp_tokens_ * e.top_k;  // token copies this rank sends
    const double sent = act_bytes(routed, h);
    const bool sp = t_ > 1;  // check_plan: tp > 1 implies sequence parallelism here
    // Router, top-k and permutation on the rank's tokens.
    Layer& r = sp ? residual_and_norm(program, set, name + " attention residual, MoE norm", false)
                  : record(program, name + " MoE norm", set);
    if (!sp) {
      r.forward.kernels.push_back(norm(tokens_));
      r.input_grad.kernels.push_back(norm(tokens_, 1.5));
    }
    Layer& router = record(program, name + " MoE router", set);
    const Linear gate = linear(sp_tokens_, h, e.experts, 1, true);
    const double scores = static_cast<double>(sp_tokens_ * e.experts) * 4;
    router.forward.kernels = {gate.forward, streaming(KernelClass::Softmax, 3 * scores, sp_tokens_),
                              streaming(KernelClass::Copy, 2 * sent)};
    router.input_grad.kernels = {streaming(KernelClass::Copy, 2 * sent),
                                 streaming(KernelClass::Elementwise, 3 * scores), gate.input_grad};
    router.weight_grad.kernels = {gate.weight_grad};
    const auto a2a = [&] { return comm(CollectiveKind::AllToAll, CommGroup::Expert, sent); };
    if (p_.ep > 1) router.forward.comm = a2a();
    if (t_ > 1) {  // the experts are sharded over tp: gather the routed tokens
      Layer& g = record(program, name + " MoE token gather", set);
      g.forward.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, sent * t_);
      if (p_.ep > 1) g.input_grad.comm = a2a();
    }
    // Local experts: rows per expert under balanced routing, each expert 1/t of its width.
    const int64_t local = e.experts / p_.ep;
    const int64_t rows = std::max<int64_t>(1, sp_tokens_ * t_ * e.top_k * p_.ep / e.experts);
    const int64_t f = e.ffn_hidden / t_;
    const int64_t up = spec_.activation == Activation::Swiglu ? 2 * f : f;
    const Linear fc1 = linear(rows, h, up, local), fc2 = linear(rows, f, h, local);
    Layer& x = record(program, name + " MoE experts", set);
    x.forward.kernels = {fc1.forward, activation(f, false, rows * local), fc2.forward};
    x.input_grad.kernels = {fc2.input_grad, activation(f, true, rows * local), fc1.input_grad};
    x.weight_grad.kernels = {fc1.weight_grad, fc2.weight_grad};
    add_casts(x, fc1);
    add_casts(x, fc2);
    if (t_ > 1) {
      x.forward.comm = comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, sent * t_);
      x.input_grad.comm = comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, sent * t_);
      Layer& s = record(program, name + " MoE token scatter", set);
      if (p_.ep > 1) s.forward.comm = a2a();
      s.input_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Tensor, sent * t_);
    } else if (p_.ep > 1) {
      x.forward.comm = a2a();
      x.input_grad.comm = a2a();
    }
    // Unpermute (weighted sum of the expert outputs), shared experts, residual.
    Layer& c = record(program, name + " MoE combine", set);
    c.forward.kernels = {streaming(KernelClass::Copy, sent + act_bytes(sp_tokens_, h))};
    c.input_grad.kernels = {streaming(KernelClass::Copy, 2 * sent)};
    if (e.shared_experts > 0) {
      const int64_t fs = e.shared_experts * e.shared_ffn_hidden;
      const int64_t sup = spec_.activation == Activation::Swiglu ? 2 * fs : fs;
      const Linear s1 = linear(sp_tokens_, h, sup), s2 = linear(sp_tokens_, fs, h);
      c.forward.kernels.insert(c.forward.kernels.end(),
                               {s1.forward, activation(fs, false, sp_tokens_), s2.forward});
      c.input_grad.kernels.insert(c.input_grad.kernels.end(),
                                  {s2.input_grad, activation(fs, true, sp_tokens_), s1.input_grad});
      c.weight_grad.kernels = {s1.weight_grad, s2.weight_grad};
      add_casts(c, s1);
      add_casts(c, s2);
    }
    c.forward.kernels.push_back(residual());
    c.input_grad.kernels.push_back(residual(1.5));
    if (p_.ep > 1) c.input_grad.comm = a2a();
  }

  // Iteration-level rows of each stage: gradient reduction (dense and expert parameters),
  // the optimizer, and the distributed optimizer's parameter all-gather.
  void iteration_rows(Program& program) {
    // A layer's parameters depend only on whether it is a MoE layer: each kind is counted once.
    std::optional<ParameterCount> per_kind[2];
    for (int64_t s = 0; s < p_.pp; ++s) {
      double layers_dense = 0, expert = 0, dense = 0, replicated = 0;
      for (const int64_t l : layout_.stage_layer_indices(s)) {
        const bool moe = spec_.is_moe_layer(l);
        std::optional<ParameterCount>& counted = per_kind[moe ? 1 : 0];
        if (!counted) counted = layer_parameter_count(spec_, l);
        const ParameterCount& c = *counted;
        layers_dense += tensor_rank_dense_parameters(c, t_);
        expert += static_cast<double>(c.routed_experts) / static_cast<double>(t_ * p_.ep);
        replicated += tensor_replicated(c, moe);
      }
      if (s == 0) dense += static_cast<double>(whole_.embedding) / t_ + whole_.position;
      if (s == p_.pp - 1) {  // the LM head (or its tied copy) and the final norm
        const double final_norm =
            static_cast<double>(spec_.hidden) * (spec_.norm == Norm::LayerNorm ? 2 : 1);
        dense += static_cast<double>(spec_.tied_embeddings && p_.pp > 1 ? whole_.embedding
                                                                        : whole_.lm_head) /
                     t_ +
                 final_norm;
        replicated += final_norm;
      }
      // Under ZeRO-3 the layers' parameters are gathered and reduced layer by layer
      // (parameter_gather), under ZeRO-2 with several micro-batches their gradients are
      // (gradient_scatter); the rows here carry the embedding and head only.
      const bool per_layer = fully_sharded() || gradients_scattered_per_micro_batch();
      const double reduced_dense = per_layer ? dense : dense + layers_dense;
      const double reduced_expert = per_layer ? 0 : expert;
      dense += layers_dense;
      // Chunk 0 of stage s (virtual stage s): the row runs on stage s.
      const int32_t set = p_.pp > 1 ? set_of(only(s)) : -1;
      const std::string stage = p_.pp > 1 ? " (stage " + str(s) + ")" : "";
      const auto reduction = [&](const std::string& what, CommGroup group, double params,
                                 int64_t replicas) {
        if (replicas <= 1 || params <= 0) return;
        Layer& g = record(program, joined({what, " gradient reduction", stage}), set);
        g.weight_grad.comm =
            comm(sharded_ ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, group,
                 params * kGradientBytes);
      };
      reduction("dense", CommGroup::Data, reduced_dense, p_.dp * p_.cp);
      reduction("expert", CommGroup::ExpertData, reduced_expert, p_.dp / p_.ep * p_.cp);
      if (p_.terms.tail_collectives) tail_collectives(program, s, set, stage, replicated);
      // The optimizer step over the local shard, in bytes per parameter: the gradient-norm read
      // (4); with fp16, the loss scaler's unscale-and-check pass over the fp32 gradients (read and
      // write, 8); Adam reading the fp32 gradient, master weight, momentum and variance and
      // writing the last three (28); the compute copy refreshed from the master weight (read 4,
      // write the weight's bytes). Then the whole fp32 gradient buffer is zeroed (4 per local
      // parameter).
      // The distributed optimizer shards over the data-parallel group, DP x CP.
      const double dense_shard = sharded_ ? dense / static_cast<double>(p_.dp * p_.cp) : dense;
      const double expert_shard =
          sharded_ ? expert / static_cast<double>(std::max<int64_t>(1, p_.dp / p_.ep * p_.cp))
                   : expert;
      if (p_.terms.optimizer) {
        Layer& o = record(program, "optimizer" + stage, set);
        const double unscale = p_.dtype == DType::FP16 ? 8 : 0;
        const double per_parameter = 4 + unscale + 28 + 4 + weight_bytes();
        o.forward.kernels = {
            streaming(KernelClass::Elementwise, per_parameter * (dense_shard + expert_shard)),
            streaming(KernelClass::Copy, 4 * (dense + expert))};
      }
      // After the step (Megatron's train_step), the last stage averages the iteration's loss
      // over the data-parallel (x context) group: the summed loss and its token count, two fp32
      // values (in the tail-collectives term).
      if (p_.terms.tail_collectives && s == p_.pp - 1 && p_.dp * p_.cp > 1) {
        Layer& l = record(program, "loss all-reduce" + stage, set);
        l.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Data, 2 * 4);
      }
      if (sharded_ && p_.dp * p_.cp > 1) {
        // The updated shards are gathered whole, but for ZeRO-3's layers (gathered as used).
        const double gathered_dense = fully_sharded() ? reduced_dense : dense;
        const double gathered_expert = fully_sharded() ? reduced_expert : expert;
        Layer& g = record(program, "parameter all-gather" + stage, set);
        g.weight_grad.comm =
            comm(CollectiveKind::AllGather, CommGroup::Data, gathered_dense * weight_bytes());
        if (gathered_expert > 0 && p_.dp / p_.ep * p_.cp > 1) {
          Layer& x = record(program, "expert parameter all-gather" + stage, set);
          x.weight_grad.comm = comm(CollectiveKind::AllGather, CommGroup::ExpertData,
                                    gathered_expert * weight_bytes());
        }
      }
    }
  }

  // Parameters of a layer every tensor rank holds whole: the norms' weights (and LayerNorm's
  // biases), the MoE router, MLA's down-projections and their norms, and the biases of the
  // row-parallel layers (the attention output
  // projection, the dense MLP's FC2 or the shared experts' FC2), which Megatron adds after the
  // tensor group's reduction.
  double tensor_replicated(const ParameterCount& c, bool moe) const {
    const bool row_bias_mlp = !moe || spec_.moe->shared_experts > 0;
    const double row_biases =
        spec_.bias ? static_cast<double>(spec_.hidden) * (row_bias_mlp ? 2 : 1) : 0;
    return static_cast<double>(c.norms + c.router + c.tensor_duplicated) + row_biases;
  }

  // What Megatron's finalize_model_grads and optimizer step all-reduce between the gradient
  // reduction and the Adam step on stage `s` (MEGATRON-MODEL.md 4.2), each blocking the stage:
  // - sequence parallelism: each tensor rank's gradients of the `replicated` parameters
  //   (tensor_replicated) come from its own shard of the tokens, so the tensor group all-reduces
  //   them, fp32, in one coalesced call (_allreduce_non_tensor_model_parallel_grads);
  // - tied embeddings over several stages: the first stage's word embedding and the last
  //   stage's LM head are one weight, whose fp32 gradient (vocab / t x hidden values per tensor
  //   rank) the two stages all-reduce between them (_allreduce_word_embedding_grads);
  // - fp16: the loss scaler's found-inf flag (one fp32 value, MAX) and, always, the gradient
  //   norm for clipping (one fp32 value: the local sum of squares), each over the ranks whose
  //   gradients together make the norm: the model-parallel group (TP x PP), or every rank when
  //   the optimizer is sharded (get_grad_stats_parallel_group).
  void tail_collectives(Program& program, int64_t s, int32_t set, const std::string& stage,
                        double replicated) {
    if (p_.sequence_parallel && t_ > 1 && replicated > 0) {
      Layer& r = record(program, "replicated gradient all-reduce" + stage, set);
      r.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Tensor,
                            replicated * static_cast<double>(kGradientBytes));
    }
    if (spec_.tied_embeddings && p_.pp > 1 && (s == 0 || s == p_.pp - 1)) {
      const int64_t shard = (spec_.vocab + t_ - 1) / t_;
      Layer& e = record(program, "embedding gradient all-reduce" + stage, set);
      e.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Embedding,
                            static_cast<double>(shard * spec_.hidden) * kGradientBytes);
    }
    const CommGroup stats = sharded_ ? CommGroup::World : CommGroup::ModelParallel;
    if ((sharded_ ? p_.world_size() : t_ * p_.pp) <= 1) return;
    if (p_.dtype == DType::FP16) {
      Layer& f = record(program, "found-inf all-reduce" + stage, set);
      f.forward.comm = comm(CollectiveKind::AllReduce, stats, 4);
    }
    Layer& n = record(program, "gradient-norm all-reduce" + stage, set);
    n.forward.comm = comm(CollectiveKind::AllReduce, stats, 4);
  }

  // Per GPU, averaged over stages: the FLOPs of every kernel each stage runs in an iteration.
  double hardware_flop_per_gpu(const Workload& w) const {
    const Program& program = w.program;
    std::vector<double> recomputed(program.layers.size(), 0);
    for (size_t k = 0; k < w.recompute.triggers.size(); ++k)
      for (auto l = static_cast<size_t>(w.recompute.checkpoints[k]);
           l < static_cast<size_t>(w.recompute.triggers[k]); ++l)
        recomputed[l] += 1;
    const auto flop = [](const Phase& phase) {
      double f = 0;
      for (const ComputeDemand& k : phase.kernels)
        f += k.flop;
      return f;
    };
    double total = 0;
    const int64_t vs = layout_.virtual_stages();
    for (size_t i = 0; i < program.layers.size(); ++i) {
      const Layer& l = program.layers[i];
      const double once =
          flop(l.forward) * (1 + recomputed[i]) + flop(l.input_grad) + flop(l.weight_grad);
      if (once == 0) continue;
      int64_t runs = 0;
      if (i >= program.after.begin) {
        runs = 1;  // an iteration-level row runs on one stage
      } else {
        for (int64_t v = 0; v < vs; ++v)
          runs += program.runs_on(l, v) ? 1 : 0;
        runs *= p_.micro_batches;  // each micro-batch runs the pass
      }
      total += once * static_cast<double>(runs);
    }
    return total / static_cast<double>(p_.pp);
  }

  const ModelSpec& spec_;
  const ParallelPlan& p_;
  StageLayout layout_;
  ParameterCount whole_;  // the model's parameters
  int64_t t_ = 1, tokens_ = 0, sp_tokens_ = 0;
  bool sharded_ = false;  // the optimizer (distributed, ZeRO >= 1) shards over DP x CP
  bool overlap_ = false;  // Transformer Engine's communication-GEMM overlap (--tp-comm-overlap)
  double vb_ = 2, y_ = 0;
  std::vector<std::vector<bool>> sets_;
  std::unordered_multimap<size_t, int32_t> set_index_;  // a set's hash -> its index in sets_
};

}  // namespace

TrainingWorkload generate_training_workload(const ModelSpec& spec, const ParallelPlan& plan) {
  check_plan(spec, plan);
  return Generator(spec, plan).build();
}

}  // namespace orrery
