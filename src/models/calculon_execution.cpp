#include "models/calculon_execution.h"

#include <fstream>
#include <iterator>
#include <map>

#include "core/json_fields.h"

namespace orrery {
namespace {

using nlohmann::json;

constexpr int64_t kMaxDegree = int64_t{1} << 20;
constexpr int64_t kMaxBatch = int64_t{1} << 40;

// Keys that ask for something Orrery does not model when true, with what Orrery does instead.
const std::map<std::string, std::string>& unmodelled_switches() {
  static const std::map<std::string, std::string> keys = {
      {"fused_activation",
       "Orrery prices the activation as its own element-wise kernel, not fused into the GEMM"},
      {"seq_par_ag_redo",
       "Orrery runs sequence parallelism's all-gathers as Megatron-LM does, not as this key "
       "chooses"},
      {"weight_offload", "weights stay in GPU memory; offloading is not modelled"},
      {"activations_offload", "activations stay in GPU memory; offloading is not modelled"},
      {"optimizer_offload", "optimizer state stays in GPU memory; offloading is not modelled"}};
  return keys;
}

class ExecutionReader {
 public:
  ExecutionReader(const std::string& text, const std::string& source)
      : f_(text, source, "Calculon's execution JSON") {}

  CalculonExecution read() const;

 private:
  void read_degrees(const json& root, CalculonExecution& e) const;
  void read_choices(const json& root, CalculonExecution& e) const;
  void read_unmodelled(const json& root, CalculonExecution& e) const;
  void warn(CalculonExecution& e, const std::string& key, const std::string& why) const {
    e.warnings.push_back(f_.source() + ": Calculon execution key '" + key + "' " + why);
  }

  JsonFields f_;
};

void ExecutionReader::read_degrees(const json& root, CalculonExecution& e) const {
  ParallelPlan& p = e.plan;
  e.num_procs = f_.integer(root, "num_procs", 1, kMaxDegree);
  p.tp = f_.integer(root, "tensor_par", 1, kMaxDegree);
  p.pp = f_.integer(root, "pipeline_par", 1, kMaxDegree);
  p.dp = f_.integer(root, "data_par", 1, kMaxDegree);
  if (p.tp * p.pp * p.dp != e.num_procs)
    f_.fail("num_procs", "expected tensor_par x pipeline_par x data_par = " +
                             std::to_string(p.tp * p.pp * p.dp) + ", found " +
                             std::to_string(e.num_procs));
  e.global_batch = f_.integer(root, "batch_size", 1, kMaxBatch);
  p.micro_batch = f_.integer(root, "microbatch_size", 1, kMaxBatch);
  if (e.global_batch % (p.dp * p.micro_batch) != 0)
    f_.fail("batch_size", "expected a multiple of data_par x microbatch_size (" +
                              std::to_string(p.dp * p.micro_batch) + "), found " +
                              std::to_string(e.global_batch));
  p.micro_batches = e.global_batch / (p.dp * p.micro_batch);
  p.vpp = f_.integer(root, "pipeline_interleaving", 1, kMaxDegree);
  if (p.pp == 1 && p.vpp != 1)
    f_.fail("pipeline_interleaving",
            "expected 1 with pipeline_par 1, found " + std::to_string(p.vpp));
}

void ExecutionReader::read_choices(const json& root, CalculonExecution& e) const {
  ParallelPlan& p = e.plan;
  if (!f_.boolean(root, "training"))
    f_.fail("training", "expected true: Orrery simulates training iterations only");
  const std::string dtype = f_.choice(root, "datatype", {"bfloat16", "float16", "float8"});
  p.dtype = dtype == "float16" ? DType::FP16 : dtype == "float8" ? DType::FP8 : DType::BF16;
  const std::string recompute =
      f_.choice(root, "activation_recompute", {"full", "attn_only", "none"});
  p.recompute = recompute == "full"        ? RecomputeMode::Full
                : recompute == "attn_only" ? RecomputeMode::Selective
                                           : RecomputeMode::None;
  p.distributed_optimizer = f_.boolean(root, "optimizer_sharding");
  const std::string comm = f_.choice(root, "tensor_par_comm_type", {"ar", "p2p_rs_ag", "rs_ag"});
  p.sequence_parallel = comm == "rs_ag";
  if (comm == "p2p_rs_ag")
    warn(e, "tensor_par_comm_type",
         "p2p_rs_ag: the tensor-parallel all-reduce is modelled, the scatter and gather of "
         "stage-to-stage transfers is not");
  e.multi_query = f_.choice(root, "attention_type", {"multihead", "multiquery"}) == "multiquery";
  if (e.multi_query && p.tp > 1)
    f_.fail("attention_type",
            "multiquery (one key-value head) needs tensor_par 1: Orrery follows Megatron-LM, "
            "where tensor parallelism divides the key-value heads; found tensor_par " +
                std::to_string(p.tp));
  e.overlap = f_.boolean(root, "data_par_overlap");
  if (e.overlap && p.tp > 1)
    warn(e, "data_par_overlap",
         "true: Orrery's overlap also runs each layer's input-gradient collective beside its "
         "weight-gradient GEMM");
}

void ExecutionReader::read_unmodelled(const json& root, CalculonExecution& e) const {
  for (const auto& [key, why] : unmodelled_switches())
    if (root.contains(key) && f_.boolean(root, key)) warn(e, key, "true: " + why);
  if (root.contains("tensor_par_overlap") &&
      f_.choice(root, "tensor_par_overlap", {"none", "ring", "pipe"}) != "none")
    warn(e, "tensor_par_overlap",
         "asks for tensor-parallel communication overlapped with its GEMMs, which Orrery does not "
         "model");
  const auto net = [&](const char* key) {
    return root.contains(key) ? f_.integer(root, key, 0, kMaxDegree) : int64_t{0};
  };
  const int64_t tp_net = net("tensor_par_net");
  if (tp_net != 0 || net("pipeline_par_net") < tp_net || net("data_par_net") < tp_net)
    warn(e, "tensor_par_net",
         "(with pipeline_par_net, data_par_net): Orrery places tensor parallelism innermost and "
         "the other axes outside it (the cluster's placement), not by network index");
}

CalculonExecution ExecutionReader::read() const {
  const json root = f_.load();
  CalculonExecution e;
  read_degrees(root, e);
  read_choices(root, e);
  read_unmodelled(root, e);
  static const char* const kKnown[] = {"num_procs",
                                       "tensor_par",
                                       "pipeline_par",
                                       "data_par",
                                       "tensor_par_net",
                                       "pipeline_par_net",
                                       "data_par_net",
                                       "batch_size",
                                       "microbatch_size",
                                       "datatype",
                                       "fused_activation",
                                       "attention_type",
                                       "activation_recompute",
                                       "pipeline_interleaving",
                                       "optimizer_sharding",
                                       "tensor_par_comm_type",
                                       "tensor_par_overlap",
                                       "seq_par_ag_redo",
                                       "data_par_overlap",
                                       "weight_offload",
                                       "activations_offload",
                                       "optimizer_offload",
                                       "training"};
  for (const auto& item : root.items()) {
    bool known = false;
    for (const char* k : kKnown)
      known |= item.key() == k;
    if (!known) warn(e, item.key(), "is not one Orrery knows; ignored");
  }
  return e;
}

}  // namespace

CalculonExecution parse_calculon_execution(const std::string& text, const std::string& source) {
  return ExecutionReader(text, source).read();
}

CalculonExecution load_calculon_execution(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0}, "cannot read Calculon's execution JSON");
  return parse_calculon_execution({std::istreambuf_iterator<char>(in), {}}, path);
}

}  // namespace orrery
