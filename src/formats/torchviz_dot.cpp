#include "formats/torchviz_dot.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/quantity.h"
#include "core/text.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"
#include "formats/torchviz/op_kernels.h"
#include "formats/torchviz/shape_inference.h"

namespace orrery {
namespace {

constexpr Bytes kDefaultBucket = 25 * kMiB;      // PyTorch DDP's bucket_cap_mb
constexpr Bytes kDefaultFirstBucket = 1 * kMiB;  // DDP's dist._DEFAULT_FIRST_BUCKET_BYTES
constexpr int64_t kGradientBytes = 4;            // fp32 gradients (AMP keeps fp32 parameters)
constexpr size_t kNone = std::numeric_limits<size_t>::max();

// "NativeLayerNorm" -> "native_layer_norm".
std::string snake_case(std::string_view name) {
  std::string result;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c) && i > 0 && !std::isupper(static_cast<unsigned char>(name[i - 1])))
      result += '_';
    result += static_cast<char>(std::tolower(c));
  }
  return result;
}

// "encoder.layer.6.attention.self.query.weight" -> "encoder.layer.6.attention.self.query".
std::string module_of(const std::string& parameter) {
  const auto dot = parameter.rfind('.');
  return dot == std::string::npos ? parameter : parameter.substr(0, dot);
}

class Builder {
 public:
  Builder(const std::string& path, std::string_view content, const ReaderOptions& options,
          Diagnostics& diagnostics)
      : path_(path),
        options_(options),
        diagnostics_(diagnostics),
        graph_(parse_autograd_graph(path, content)),
        config_(options.graph_config.empty() ? GraphConfig{}
                                             : load_graph_config(options.graph_config)),
        shapes_(infer_shapes(graph_, config_, diagnostics)) {}

  Workload build();

 private:
  struct Parameter {
    NodeId node = 0;
    int64_t numel = 0;
    size_t ready = kNone;  // the layer after whose backward its gradient is complete
    bool expert = false;
  };
  struct Bucket {
    CommGroup group = CommGroup::Data;
    Bytes bytes = 0;
    size_t ready = kNone;  // the layer after whose backward it is issued
    int64_t parameters = 0;
  };

  const GraphNode& node(NodeId id) const { return graph_.nodes[id]; }
  std::string layer_name(NodeId id, const std::string& kind);
  void add_operator_layers();
  void add_gradient_accumulation();
  std::vector<Parameter> parameters() const;
  std::vector<Bucket> buckets(const std::vector<Parameter>& params) const;
  void check_expert_parallelism(const std::vector<Parameter>& params);
  void add_expert_all_to_alls();
  Layer optimizer_step(const std::vector<Parameter>& params) const;

  std::string path_;
  const ReaderOptions& options_;
  Diagnostics& diagnostics_;
  AutogradGraph graph_;
  GraphConfig config_;
  InferredShapes shapes_;
  std::vector<Layer> layers_;
  std::vector<size_t> layer_of_;  // by node id: its layer, or kNone
  std::vector<NodeId> node_of_;   // by layer: its node
  std::map<std::pair<int64_t, std::string>, int64_t> counters_;
};

std::string Builder::layer_name(NodeId id, const std::string& kind) {
  const GraphNode& n = node(id);
  if (shapes_.from_parameter[id]) {  // a cast of a parameter
    if (const auto p = parameter_of(graph_, shapes_, id); p && !node(*p).name.empty())
      return node(*p).name + ":" + kind;
  }
  for (const NodeId i : n.inputs) {  // an operator with a weight: its module's name
    if (!shapes_.from_parameter[i]) continue;
    if (const auto p = parameter_of(graph_, shapes_, i); p && !node(*p).name.empty())
      return module_of(node(*p).name) + ":" + kind;
  }
  const std::string scope = n.layer < 0 ? "prologue" : "layer " + std::to_string(n.layer);
  return scope + ":" + kind + "." + std::to_string(counters_[{n.layer, kind}]++);
}

void Builder::add_operator_layers() {
  layer_of_.assign(graph_.nodes.size(), kNone);
  for (const NodeId id : graph_.forward_order) {
    OpKernels kernels = op_kernels(graph_, shapes_, id);
    if (kernels.empty()) continue;
    Layer layer;
    layer.op = snake_case(node(id).op);
    layer.name = layer_name(id, layer.op);
    layer.forward.kernels = std::move(kernels.forward);
    layer.input_grad.kernels = std::move(kernels.input_grad);
    layer.weight_grad.kernels = std::move(kernels.weight_grad);
    layer_of_[id] = layers_.size();
    node_of_.push_back(id);
    layers_.push_back(std::move(layer));
  }
}

void Builder::add_gradient_accumulation() {
  for (NodeId id = 0; id < graph_.nodes.size(); ++id) {
    const GraphNode& n = node(id);
    if (n.kind != NodeKind::Op || n.consumers.size() < 2) continue;
    // The sum happens before the backward of the nearest producer that has kernels.
    NodeId owner = id;
    while (layer_of_[owner] == kNone && node(owner).kind == NodeKind::Op &&
           !node(owner).inputs.empty())
      owner = node(owner).inputs.front();
    if (layer_of_[owner] == kNone) continue;
    auto& kernels = layers_[layer_of_[owner]].input_grad.kernels;
    const auto adds =
        gradient_accumulation(shapes_.tensors[id], static_cast<int64_t>(n.consumers.size()));
    kernels.insert(kernels.begin(), adds.begin(), adds.end());
  }
}

std::vector<Builder::Parameter> Builder::parameters() const {
  // A gradient is complete after the backward of the last of its readers to run backward: the
  // reader with the smallest forward position (seen through views, which have no kernels).
  std::vector<size_t> ready(graph_.nodes.size(), kNone);
  for (auto it = graph_.forward_order.rbegin(); it != graph_.forward_order.rend(); ++it) {
    for (const NodeId c : node(*it).consumers)
      ready[*it] = std::min(ready[*it], layer_of_[c] != kNone ? layer_of_[c] : ready[c]);
  }
  std::vector<Parameter> params;
  for (NodeId id = 0; id < graph_.nodes.size(); ++id) {
    const GraphNode& n = node(id);
    if (n.kind != NodeKind::Parameter) continue;
    Parameter p;
    p.node = id;
    p.numel = shapes_.tensors[id].numel();
    p.ready = ready[id];
    p.expert = options_.ep > 1 && expert_of(n.name).has_value();
    // A gradient nothing reads is complete from the start: after the first backward.
    if (p.ready == kNone) p.ready = layers_.size() - 1;
    params.push_back(p);
  }
  // Registration order (model.parameters(), which the graph does not keep), approximated by the
  // order of first use in the forward: by the forward position of the first operator reading the
  // parameter (through its casts and views), then weights (2-D) before biases, then argument order.
  std::vector<size_t> position(graph_.nodes.size(), 0);
  for (size_t i = 0; i < graph_.forward_order.size(); ++i)
    position[graph_.forward_order[i]] = i;
  using Key = std::tuple<size_t, int64_t, size_t>;
  std::vector<Key> first_use(graph_.nodes.size(), Key{kNone, 0, 0});
  for (const NodeId id : graph_.forward_order) {
    const GraphNode& n = node(id);
    if (n.kind != NodeKind::Op || shapes_.from_parameter[id]) continue;
    for (size_t arg = 0; arg < n.inputs.size(); ++arg) {
      if (!shapes_.from_parameter[n.inputs[arg]]) continue;
      const auto p = parameter_of(graph_, shapes_, n.inputs[arg]);
      if (!p) continue;
      first_use[*p] = std::min(
          first_use[*p], Key{position[id], -static_cast<int64_t>(node(*p).shape.size()), arg});
    }
  }
  std::vector<std::pair<Key, size_t>> order;  // (registration key, index in params)
  order.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    order.emplace_back(first_use[params[i].node], i);  // ties: file order
  std::sort(order.begin(), order.end());
  std::vector<Parameter> sorted;
  sorted.reserve(params.size());
  for (const auto& [key, i] : order)
    sorted.push_back(params[i]);
  return sorted;
}

// PyTorch DDP's bucketing (reducer.cpp, compute_bucket_assignment_by_size), per gradient group:
// parameters are taken in an order and a bucket closes once it holds at least its cap: the
// first bucket's cap is first_bucket_size (1 MiB), the others' bucket_size (25 MiB).
// - registration order (the default; what DDP builds at construction):
//   the parameters in registration order, so the small bucket holds the first-registered ones;
//   the list is then reversed, so bucket 0 holds the last-registered parameters, whose
//   gradients the backward produces first;
// - ready order (graph config bucket_order: ready; what DDP rebuilds after the first
//   iteration): the parameters in the order their gradients become ready, small bucket first.
// Buckets are issued in their order, each once all its gradients are complete and the bucket
// before it has been issued (DDP launches bucket k + 1 only after bucket k).
std::vector<Builder::Bucket> Builder::buckets(const std::vector<Parameter>& params) const {
  const Bytes cap = config_.bucket_size.value_or(kDefaultBucket);
  const Bytes first_cap = config_.first_bucket_size.value_or(kDefaultFirstBucket);
  const bool ready_order =
      config_.bucket_order.value_or(BucketOrder::Registration) == BucketOrder::Ready;
  std::vector<Parameter> order = params;  // registration order
  if (ready_order) {
    // The backward completes gradients from the last layer to the first; within one layer's
    // backward, in reverse registration order.
    std::reverse(order.begin(), order.end());
    std::stable_sort(order.begin(), order.end(),
                     [](const Parameter& a, const Parameter& b) { return a.ready > b.ready; });
  }
  std::vector<Bucket> result;
  for (const CommGroup group : {CommGroup::Data, CommGroup::ExpertData}) {
    std::vector<Bucket> formed;
    Bucket open;
    open.group = group;
    for (const Parameter& p : order) {
      if ((group == CommGroup::ExpertData) != p.expert) continue;
      open.bytes += static_cast<Bytes>(p.numel * kGradientBytes);
      open.ready = std::min(open.ready, p.ready);  // the last of its gradients to complete
      ++open.parameters;
      if (open.bytes >= (formed.empty() ? first_cap : cap)) {
        formed.push_back(open);
        open = Bucket{};
        open.group = group;
      }
    }
    if (open.parameters > 0) formed.push_back(open);
    if (!ready_order) std::reverse(formed.begin(), formed.end());
    for (size_t k = 1; k < formed.size(); ++k)  // not before the bucket ahead of it
      formed[k].ready = std::min(formed[k].ready, formed[k - 1].ready);
    result.insert(result.end(), formed.begin(), formed.end());
  }
  return result;
}

void Builder::check_expert_parallelism(const std::vector<Parameter>& params) {
  if (options_.ep <= 1) return;
  if (std::none_of(params.begin(), params.end(), [](const Parameter& p) { return p.expert; })) {
    diagnostics_.warn({}, "--ep " + std::to_string(options_.ep) + ": the graph '" + path_ +
                              "' has no experts.<k> parameters to shard");
    return;
  }
  std::map<std::string, int64_t> experts;  // expert list -> experts in it
  for (const Parameter& p : params)
    if (const auto e = expert_of(node(p.node).name))
      experts[e->module] = std::max(experts[e->module], e->index + 1);
  std::set<int64_t> counts;
  for (const auto& [module, count] : experts)
    if (count % options_.ep != 0) counts.insert(count);
  if (counts.empty()) return;
  std::string list;
  for (const int64_t c : counts)
    list += (list.empty() ? "" : " or ") + std::to_string(c);
  diagnostics_.warn({}, "--ep " + std::to_string(options_.ep) + ": expert lists of " + list +
                            " experts do not divide evenly over " + std::to_string(options_.ep) +
                            " expert-parallel ranks; each rank is costed with an equal 1/" +
                            std::to_string(options_.ep) +
                            " share of them, as if they did (choose an --ep that divides the "
                            "experts per layer)");
}

void Builder::add_expert_all_to_alls() {
  if (options_.ep <= 1) return;
  // The first and last linear layer of each expert, in forward order.
  std::map<std::pair<std::string, int64_t>, std::pair<size_t, size_t>> experts;
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l].op != "addmm" && layers_[l].op != "mm") continue;
    const LinearOperands operands = linear_operands(graph_, shapes_, node_of_[l]);
    if (!operands.weight_is_parameter) continue;
    const auto p = parameter_of(graph_, shapes_, *operands.weight);
    if (const auto e = p ? expert_of(node(*p).name) : std::nullopt) {
      auto [it, added] = experts.try_emplace({e->module, e->index}, l, l);
      it->second.second = l;
    }
  }
  for (const auto& [expert, span] : experts) {
    const auto bytes_of = [](const TensorShape& t) {
      return static_cast<Bytes>(t.numel() * size_in_bytes(t.dtype));
    };
    const auto data = linear_operands(graph_, shapes_, node_of_[span.first]).data;
    const Bytes dispatch = data ? bytes_of(shapes_.tensors[*data]) : 0;
    const Bytes combine = bytes_of(shapes_.tensors[node_of_[span.second]]);
    const auto add = [&](size_t l, Bytes bytes) {
      for (Phase* phase : {&layers_[l].forward, &layers_[l].input_grad}) {
        if (!phase->comm)
          phase->comm = Communication{CollectiveKind::AllToAll, CommGroup::Expert, 0};
        phase->comm->bytes += bytes;
      }
    };
    add(span.first, dispatch);
    add(span.second, combine);
  }
}

Layer Builder::optimizer_step(const std::vector<Parameter>& params) const {
  // Per rank: the replicated parameters and this rank's share of the experts.
  double local = 0;
  for (const Parameter& p : params)
    local += static_cast<double>(p.numel) / static_cast<double>(p.expert ? options_.ep : 1);
  const OptimizerKind kind = config_.optimizer.value_or(OptimizerKind::Adam);
  if (!config_.optimizer)
    diagnostics_.warn({path_, 0},
                      "the graph has no optimizer step; adding Adam's (graph config "
                      "'optimizer': adam, sgd or none)");
  Layer layer;
  layer.op = "optimizer";
  // Adam reads parameter, gradient and two moments and writes parameter and moments (fp32):
  // 28 B and ~12 FLOP per parameter; SGD reads parameter and gradient, writes the parameter.
  const bool adam = kind == OptimizerKind::Adam;
  layer.name = adam ? "optimizer (adam)" : "optimizer (sgd)";
  ComputeDemand step;
  step.kind = KernelClass::Elementwise;
  step.dtype = DType::FP32;
  step.flop = local * (adam ? 12 : 2);
  step.bytes = static_cast<Bytes>(local * (adam ? 28 : 12));
  layer.forward.kernels.push_back(step);
  return layer;
}

Workload Builder::build() {
  if (options_.ep < 1) throw InputError("--ep: expected a positive expert-parallel degree");
  add_operator_layers();
  if (layers_.empty()) throw InputError({path_, 1}, "expected an autograd graph with operators");
  add_gradient_accumulation();
  add_expert_all_to_alls();
  const std::vector<Parameter> params = parameters();
  check_expert_parallelism(params);

  // Gradient buckets, each a zero-compute row placed just before the layer whose backward makes
  // it issue, so that it runs right after that backward. Rows before one layer run in the
  // backward from last to first: a later bucket goes in front of an earlier one.
  std::vector<std::vector<Layer>> before(layers_.size());
  int64_t counter[2] = {0, 0};
  for (const Bucket& b : buckets(params)) {
    const bool expert = b.group == CommGroup::ExpertData;
    Layer bucket;
    bucket.op = "grad all-reduce";
    bucket.name = std::string(expert ? "expert " : "") + "gradient bucket " +
                  std::to_string(counter[expert]++) + " (" + format_size(b.bytes) + ", " +
                  std::to_string(b.parameters) + (b.parameters == 1 ? " tensor)" : " tensors)");
    bucket.weight_grad.comm = Communication{CollectiveKind::AllReduce, b.group, b.bytes};
    auto& rows = before[b.ready];
    rows.insert(rows.begin(), std::move(bucket));
  }
  Workload w;
  w.source = path_;
  w.name = std::filesystem::path(path_).stem().string();
  w.format = "torchviz";
  w.world_size_from_file = false;
  w.parallelism.ep = options_.ep;
  w.parallelism.world_size = options_.ep;
  auto& layers = w.program.layers;
  for (size_t l = 0; l < layers_.size(); ++l) {
    for (Layer& b : before[l])
      layers.push_back(std::move(b));
    layers.push_back(std::move(layers_[l]));
  }
  const size_t pass_end = layers.size();
  if (config_.optimizer.value_or(OptimizerKind::Adam) != OptimizerKind::None)
    layers.push_back(optimizer_step(params));
  w.program.micro_batches = {{0, pass_end}};
  w.program.before = {0, 0};
  w.program.after = {pass_end, layers.size()};

  ModelSummary model;
  double forward_flop = 0;
  for (size_t l = 0; l < pass_end; ++l)
    for (const ComputeDemand& k : layers[l].forward.kernels)
      forward_flop += k.flop;
  for (const Parameter& p : params) {
    model.parameters += p.numel;
    model.layers = std::max(model.layers, node(p.node).layer + 1);
  }
  model.forward_flop = forward_flop;
  w.model = model;
  return w;
}

}  // namespace

bool looks_like_torchviz_dot(std::string_view content) {
  const std::string_view head = trim(content.substr(0, 4096));
  return (head.starts_with("digraph") || head.starts_with("strict digraph")) &&
         (head.find("Backward") != std::string_view::npos ||
          head.find("AccumulateGrad") != std::string_view::npos);
}

Workload read_torchviz_dot(const std::string& path, std::string_view content,
                           const ReaderOptions& options, Diagnostics& diagnostics) {
  return Builder(path, content, options, diagnostics).build();
}

}  // namespace orrery
