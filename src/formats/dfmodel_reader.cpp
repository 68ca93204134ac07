#include "formats/dfmodel_reader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <sstream>

#include "dfmodel_dse.pb.h"

namespace orrery {
namespace {

namespace pb = dfmodel_pb;
using google::protobuf::Descriptor;
using google::protobuf::Message;
using google::protobuf::TextFormat;

constexpr std::array<std::string_view, 6> kTopLevelBlocks = {
    "dataflow_graph", "system", "cost", "execution", "miscellany", "gurobi"};

// Keeps the first error of the text parser, with its 1-based line.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!message_.empty()) return;
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
  }
  bool any() const { return !message_.empty(); }
  int64_t line() const { return line_; }
  int64_t column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  int64_t line_ = 0, column_ = 0;
  std::string message_;
};

// Lines of the fields of one parsed message (all 0 for binary files, which have none).
class Lines {
 public:
  Lines(const TextFormat::ParseInfoTree* tree, const Descriptor* descriptor)
      : tree_(tree), descriptor_(descriptor) {}

  // 1-based line of the field (index-th element if repeated), or `fallback` when unknown.
  int64_t of(std::string_view field, int index = -1, int64_t fallback = 0) const {
    const auto* f = tree_ ? descriptor_->FindFieldByName(std::string(field)) : nullptr;
    if (!f) return fallback;
    const int line = tree_->GetLocation(f, index).line;
    return line >= 0 ? line + 1 : fallback;
  }

  Lines nested(std::string_view field, int index = -1) const {
    const auto* f = descriptor_->FindFieldByName(std::string(field));
    const auto* sub = f ? f->message_type() : nullptr;
    return Lines(tree_ && f ? tree_->GetTreeForNested(f, index) : nullptr, sub);
  }

 private:
  const TextFormat::ParseInfoTree* tree_;
  const Descriptor* descriptor_;
};

DataflowCollective collective_of(pb::CommunicationType t) {
  switch (t) {
    case pb::ALL_REDUCE:
      return DataflowCollective::AllReduce;
    case pb::ALL_TO_ALL:
      return DataflowCollective::AllToAll;
    case pb::ALL_GATHER:
      return DataflowCollective::AllGather;
    case pb::ALL_REDUCE_PERIODIC:
      return DataflowCollective::AllReducePeriodic;
    case pb::POINT_TO_POINT:
      return DataflowCollective::PointToPoint;
    case pb::BROADCAST:
      return DataflowCollective::Broadcast;
    default:
      return DataflowCollective::None;
  }
}

std::optional<TensorAxis> sharding_of(pb::Sharding s) {
  switch (s) {
    case pb::OUTER_SHARDING:
      return TensorAxis::Outer;
    case pb::M_SHARDING:
      return TensorAxis::M;
    case pb::K_SHARDING:
      return TensorAxis::K;
    case pb::N_SHARDING:
      return TensorAxis::N;
    case pb::NO_SHARDING:
      return TensorAxis::None;
    default:
      return std::nullopt;
  }
}

std::optional<TensorAxis> tiling_of(pb::Tiling t) {
  switch (t) {
    case pb::OUTER_TILING:
      return TensorAxis::Outer;
    case pb::M_TILING:
      return TensorAxis::M;
    case pb::K_TILING:
      return TensorAxis::K;
    case pb::N_TILING:
      return TensorAxis::N;
    case pb::NO_TILING:
      return TensorAxis::None;
    default:
      return std::nullopt;
  }
}

ParallelRole role_of(const std::string& par, const SourceLocation& where) {
  if (par.empty()) return ParallelRole::Unassigned;
  if (par == "TP") return ParallelRole::Tensor;
  if (par == "PP") return ParallelRole::Pipeline;
  if (par == "DP") return ParallelRole::Data;
  throw InputError(where, "expected a parallelism \"TP\", \"PP\" or \"DP\", found \"" + par + "\"");
}

class Reader {
 public:
  Reader(std::string path, std::string_view content, Diagnostics& diagnostics)
      : path_(std::move(path)), content_(content), diagnostics_(diagnostics) {}

  DataflowProblem read() {
    const bool text = looks_like_dfmodel_text(content_);
    TextFormat::ParseInfoTree tree;
    if (text) {
      parse_text(tree);
    } else if (!dse_.ParseFromArray(content_.data(), static_cast<int>(content_.size()))) {
      throw InputError({path_, 0}, "expected a DFModel DSE file (protobuf text or binary)");
    }
    const Lines root(text ? &tree : nullptr, pb::Dse::descriptor());
    if (!text && has_unknown_fields(dse_))
      diagnostics_.warn({path_, 0},
                        "the binary file has fields Orrery's DFModel schema does not know; "
                        "they are ignored");

    DataflowProblem p;
    p.source = path_;
    p.name = std::filesystem::path(path_).stem().string();
    if (!dse_.has_dataflow_graph()) throw InputError({path_, 1}, "expected a dataflow_graph block");
    if (!dse_.has_system()) throw InputError({path_, 1}, "expected a system block");
    read_graph(dse_.dataflow_graph(), root.nested("dataflow_graph"), p);
    p.system = read_system(dse_.system(), root.nested("system"), root.of("system", -1, 1));
    read_cost(p);
    read_run(root, p);
    read_limits(root, p);
    return p;
  }

 private:
  void parse_text(TextFormat::ParseInfoTree& tree) {
    TextFormat::Parser parser;
    FirstError errors;
    parser.RecordErrorsTo(&errors);
    parser.WriteLocationsTo(&tree);
    const bool ok = parser.ParseFromString(std::string(content_), &dse_);
    if (!ok || errors.any())
      throw InputError({path_, value_line(errors)},
                       "expected DFModel DSE text (protobuf text format): " + errors.message());
  }

  // The text parser reports an unknown enum value at the token after it; this finds the value.
  int64_t value_line(const FirstError& e) const {
    static constexpr std::string_view kEnum = "Unknown enumeration value of \"";
    if (!e.message().starts_with(kEnum)) return e.line();
    const auto start = kEnum.size();
    const std::string value = e.message().substr(start, e.message().find('"', start) - start);
    size_t offset = 0;  // of the reported line
    for (int64_t line = 1; line < e.line(); ++line) {
      const size_t eol = content_.find('\n', offset);
      if (eol == std::string_view::npos) break;
      offset = eol + 1;
    }
    const size_t at = content_.rfind(value, offset + static_cast<size_t>(e.column()));
    if (at == std::string_view::npos || value.empty()) return e.line();
    return 1 + std::count(content_.begin(), content_.begin() + static_cast<long>(at), '\n');
  }

  static bool has_unknown_fields(const Message& m) {
    const auto* reflection = m.GetReflection();
    if (!reflection->GetUnknownFields(m).empty()) return true;
    std::vector<const google::protobuf::FieldDescriptor*> fields;
    reflection->ListFields(m, &fields);
    for (const auto* f : fields) {
      if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
      if (f->is_repeated()) {
        for (int i = 0; i < reflection->FieldSize(m, f); ++i)
          if (has_unknown_fields(reflection->GetRepeatedMessage(m, f, i))) return true;
      } else if (has_unknown_fields(reflection->GetMessage(m, f))) {
        return true;
      }
    }
    return false;
  }

  std::string kernel_label(const pb::Kernel& k) const {
    return "kernel '" + k.name() + "' (id " + std::to_string(k.id()) + ")";
  }

  // Fields shared by the four variant messages.
  template <typename V>
  void read_common(const V& v, const Lines& lines, const pb::Kernel& k, DataflowKernel& out) {
    out.outer = v.outer();
    out.m = v.m();
    out.n = v.n();
    out.output_bytes = v.output_tensor_size();
    out.sharding = sharding_of(v.sharding());
    const auto tiling = tiling_of(v.tiling());
    if (!tiling)
      throw InputError({path_, lines.of("tiling", -1, out.line)},
                       kernel_label(k) +
                           ": expected a tiling (N_TILING, K_TILING, M_TILING, OUTER_TILING or "
                           "NO_TILING)");
    out.tiling = *tiling;
    out.collective = collective_of(v.communication_type());
    out.collective_bytes = v.communication_size();
    out.collective2 = collective_of(v.communication_type_2());
    out.collective2_bytes = v.communication_size_2();
    out.shard_outer_m = v.shard_outer_m();
    out.shard_n = v.shard_n();
    out.memory_bytes = v.memory_size();
    out.num_input = v.num_input();
  }

  DataflowKernel read_kernel(const pb::Kernel& k, const Lines& lines, int64_t line) {
    DataflowKernel out;
    out.name = k.name();
    out.id = k.id();
    out.line = line;
    out.topological_number = k.topological_number();
    out.config = k.config();
    if (k.fwd_bwd() != pb::FWD && k.fwd_bwd() != pb::BWD)
      throw InputError({path_, lines.of("fwd_bwd", -1, line)},
                       kernel_label(k) + ": expected fwd_bwd: FWD or BWD");
    out.backward = k.fwd_bwd() == pb::BWD;
    if (k.type() != pb::SYSTOLIC && k.type() != pb::SIMD)
      throw InputError({path_, lines.of("type", -1, line)},
                       kernel_label(k) + ": expected type: SYSTOLIC or SIMD");
    out.unit = k.type() == pb::SYSTOLIC ? KernelUnit::Systolic : KernelUnit::Simd;
    switch (k.kernel_variant_case()) {
      case pb::Kernel::kGemmInput1Weight: {
        const auto& v = k.gemm_input1_weight();
        out.variant = KernelVariant::GemmInputWeight;
        read_common(v, lines.nested("gemm_input1_weight"), k, out);
        out.k = v.k();
        out.input1_bytes = v.input_tensor_size();
        out.weight_bytes = v.weight_tensor_size();
        out.shard_k = v.shard_k();
        out.skip_weight = v.skip_weight();
        out.use_effective_stage = v.use_effective_stage();
        break;
      }
      case pb::Kernel::kGemmInput1Input2: {
        const auto& v = k.gemm_input1_input2();
        out.variant = KernelVariant::GemmInputInput;
        read_common(v, lines.nested("gemm_input1_input2"), k, out);
        out.k = v.k();
        out.input1_bytes = v.input_tensor_1_size();
        out.input2_bytes = v.input_tensor_2_size();
        out.shard_k = v.shard_k();
        break;
      }
      case pb::Kernel::kElementwiseInput1: {
        const auto& v = k.elementwise_input1();
        out.variant = KernelVariant::Elementwise;
        read_common(v, lines.nested("elementwise_input1"), k, out);
        out.input1_bytes = v.input_tensor_size();
        break;
      }
      case pb::Kernel::kElementwiseInput1Input2: {
        const auto& v = k.elementwise_input1_input2();
        out.variant = KernelVariant::ElementwiseInputInput;
        read_common(v, lines.nested("elementwise_input1_input2"), k, out);
        out.input1_bytes = v.input_tensor_1_size();
        out.input2_bytes = v.input_tensor_2_size();
        break;
      }
      default:
        throw InputError({path_, line},
                         kernel_label(k) +
                             ": expected one of gemm_input1_weight, gemm_input1_input2, "
                             "elementwise_input1, elementwise_input1_input2");
    }
    return out;
  }

  void read_graph(const pb::DataflowGraph& g, const Lines& lines, DataflowProblem& p) {
    for (int i = 0; i < g.kernels_size(); ++i)
      p.kernels.push_back(
          read_kernel(g.kernels(i), lines.nested("kernels", i), lines.of("kernels", i)));
    for (int i = 0; i < g.connections_size(); ++i) {
      const pb::Connection& c = g.connections(i);
      DataflowEdge e;
      e.id = c.id();
      e.line = lines.of("connections", i);
      e.from_id = c.startidx();
      e.to_id = c.endidx();
      e.collective = collective_of(c.communication_type());
      e.collective_bytes = c.communication_size();
      e.buffer_depth = c.buffer_depth();
      e.tensor_bytes = c.tensor_size();
      e.shard_tensor_bytes = c.shard_tensor_size();
      e.from_name = c.startname();
      e.to_name = c.endname();
      p.edges.push_back(std::move(e));
    }
    if (p.kernels.empty())
      throw InputError({path_, lines.of("kernels", -1, 1)},
                       "expected at least one kernel in dataflow_graph");
  }

  DataflowSystem read_system(const pb::System& sys, const Lines& lines, int64_t line) {
    DataflowSystem s;
    s.line = line;
    s.chips = sys.num_chip();
    const auto& a = sys.accelerator();
    s.cores = a.core();
    s.systolic_width = a.systolic_width();
    s.systolic_height = a.systolic_height();
    s.sram_bytes = a.sram_cap();
    s.freq_ghz = a.freq();
    s.pmu = a.pmu();
    s.link_latency = a.link_latency();
    s.dram_gbps = sys.memory().dram_bw();
    s.dram_bytes = sys.memory().dram_cap();
    s.second_dram_gbps = sys.memory().second_dram_bw();
    s.second_dram_bytes = sys.memory().second_dram_cap();
    s.hbd = sys.hbd();

    using L = LinkKind;
    struct Kinds {
      const char* name;
      std::array<L, 3> kinds;
      int dims;
    };
    static constexpr std::array<Kinds, 11> kTopologies = {{
        {"r", {L::Ring}, 1},
        {"sw", {L::Switch}, 1},
        {"fc", {L::FullMesh}, 1},
        {"r_r", {L::Ring, L::Ring}, 2},
        {"r_fc", {L::Ring, L::FullMesh}, 2},
        {"r_sw", {L::Ring, L::Switch}, 2},
        {"sw_sw", {L::Switch, L::Switch}, 2},
        {"fc_fc", {L::FullMesh, L::FullMesh}, 2},
        {"r_r_r", {L::Ring, L::Ring, L::Ring}, 3},
        {"r_sw_sw", {L::Ring, L::Switch, L::Switch}, 3},
        {"sw_sw_sw", {L::Switch, L::Switch, L::Switch}, 3},
    }};
    const auto* reflection = sys.GetReflection();
    const auto* oneof = pb::System::descriptor()->FindOneofByName("topology_variant");
    const auto* field = reflection->GetOneofFieldDescriptor(sys, oneof);
    if (!field)
      throw InputError({path_, line},
                       "system: expected a topology (r, sw, fc, r_r, r_fc, r_sw, sw_sw, fc_fc, "
                       "r_r_r, r_sw_sw or sw_sw_sw)");
    s.topology = field->name();
    const Lines topo = lines.nested(s.topology);
    const Message& m = reflection->GetMessage(sys, field);
    const auto* r = m.GetReflection();
    const auto* d = m.GetDescriptor();
    for (const Kinds& t : kTopologies) {
      if (s.topology != t.name) continue;
      static constexpr std::array<const char*, 3> kAxes = {"x", "y", "z"};
      for (int i = 0; i < t.dims; ++i) {
        const std::string axis = kAxes[static_cast<size_t>(i)];
        TopologyDimension dim;
        dim.kind = t.kinds[static_cast<size_t>(i)];
        dim.size = r->GetInt64(m, d->FindFieldByName(axis));
        dim.link_gbps = r->GetFloat(m, d->FindFieldByName("link_bw_" + axis));
        dim.role = role_of(r->GetString(m, d->FindFieldByName("par_" + axis)),
                           {path_, topo.of("par_" + axis, -1, line)});
        if (dim.size < 0)
          throw InputError({path_, topo.of(axis, -1, line)},
                           s.topology + "." + axis + ": expected a size >= 0 (0: free)");
        s.dimensions.push_back(dim);
      }
    }
    return s;
  }

  void read_cost(DataflowProblem& p) {
    if (!dse_.has_cost()) {
      diagnostics_.warn({path_, 0}, "no cost block; cost and power are reported as 0");
      return;
    }
    const pb::Cost& c = dse_.cost();
    DataflowCostTable& t = p.cost;
    t.link_price = c.link_unit_price();
    t.switch_price = c.switch_unit_price();
    t.dram_price = c.dram_unit_price();
    t.chip_price = c.accelerator_price();
    t.link_power[0] = c.link_unit_power_x();
    t.link_power[1] = c.link_unit_power_y();
    t.link_power[2] = c.link_unit_power_z();
    t.switch_power = c.switch_unit_power();
    t.dram_power = c.dram_unit_power();
    t.chip_power = c.accelerator_power();
  }

  void read_run(const Lines& root, DataflowProblem& p) {
    if (dse_.has_execution() && dse_.has_miscellany())
      throw InputError({path_, root.of("miscellany", -1, 1)},
                       "expected one run block, found both execution and miscellany");
    if (!dse_.has_execution() && !dse_.has_miscellany())
      throw InputError({path_, 1}, "expected an execution (or miscellany) block");
    const char* block = dse_.has_execution() ? "execution" : "miscellany";
    const pb::Execution& e = dse_.has_execution() ? dse_.execution() : dse_.miscellany();
    const Lines lines = root.nested(block);
    DataflowRun& run = p.run;
    run.line = root.of(block, -1, 1);
    switch (e.execution_style()) {
      case pb::KERNEL_BY_KERNEL:
        run.style = ExecutionStyle::KernelByKernel;
        break;
      case pb::DATAFLOW:
        run.style = ExecutionStyle::Dataflow;
        break;
      default:
        throw InputError(
            {path_, lines.of("execution_style", -1, run.line)},
            std::string(block) + ": expected execution_style: KERNEL_BY_KERNEL or DATAFLOW");
    }
    run.num_config = e.num_config();
    if (e.perfect_overlap() && e.overlap() != pb::Overlap_Style_Placeholder &&
        e.overlap() != pb::PERFECT_OVERLAP)
      throw InputError({path_, lines.of("overlap", -1, run.line)},
                       "expected one overlap setting, found perfect_overlap: true and a "
                       "different overlap");
    if (e.perfect_overlap() || e.overlap() == pb::PERFECT_OVERLAP)
      run.overlap = OverlapStyle::Perfect;
    else if (e.overlap() == pb::OVERLAP_COMPUTE_MEMORY)
      run.overlap = OverlapStyle::ComputeMemory;
    run.separate_rs_ag_for_ar = e.separate_rs_ag_for_ar();
    run.compute_util = e.compute_util();
    run.word_bytes = e.word();
    if (run.word_bytes <= 0) {
      diagnostics_.warn({path_, lines.of("word", -1, run.line)},
                        std::string(block) + ": no word size; taking 2 bytes per element");
      run.word_bytes = 2;
    }
    const auto* oneof = pb::Execution::descriptor()->FindOneofByName("workload_variant");
    const auto* field = e.GetReflection()->GetOneofFieldDescriptor(e, oneof);
    if (!field)
      throw InputError({path_, run.line},
                       std::string(block) + ": expected a workload (llm, dlrm, hpl, fft, ...)");
    run.workload_kind = field->name();
    if (e.has_llm()) {
      const pb::Llm& l = e.llm();
      run.llm = LlmShape{l.hidden_dim(),       l.head_dim(),  l.num_head(),
                         l.seq_len(),          l.num_layer(), l.global_batch_size(),
                         l.micro_batch_size(), l.tile_size(), l.num_layer_in_graph()};
    }
  }

  void read_limits(const Lines& root, DataflowProblem& p) {
    if (!dse_.has_gurobi()) return;
    const pb::Gurobi& g = dse_.gurobi();
    p.limits.threads = g.thread();
    p.limits.gap = g.gap();
    p.limits.time_limit_s = g.time();
    if (p.limits.threads < 0 || p.limits.time_limit_s < 0 || p.limits.gap < 0)
      throw InputError({path_, root.of("gurobi", -1, 1)},
                       "gurobi: expected thread, gap and time >= 0");
  }

  std::string path_;
  std::string_view content_;
  Diagnostics& diagnostics_;
  pb::Dse dse_;
};

}  // namespace

bool looks_like_dfmodel_text(std::string_view content) {
  size_t i = 0;
  while (i < content.size()) {
    const char c = content[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      ++i;
    } else if (c == '#') {
      const size_t eol = content.find('\n', i);
      i = eol == std::string_view::npos ? content.size() : eol + 1;
    } else {
      break;
    }
  }
  const auto rest = content.substr(i);
  for (const std::string_view block : kTopLevelBlocks) {
    if (!rest.starts_with(block)) continue;
    auto after = rest.substr(block.size());
    while (!after.empty() &&
           (after.front() == ' ' || after.front() == '\t' || after.front() == ':' ||
            after.front() == '\r' || after.front() == '\n'))
      after.remove_prefix(1);
    if (!after.empty() && (after.front() == '{' || after.front() == '<')) return true;
  }
  return false;
}

bool looks_like_dfmodel_binary(std::string_view content) {
  if (content.empty()) return false;
  pb::Dse dse;
  return dse.ParseFromArray(content.data(), static_cast<int>(content.size())) &&
         dse.dataflow_graph().kernels_size() > 0;
}

DataflowProblem read_dfmodel(const std::string& path, std::string_view content,
                             Diagnostics& diagnostics) {
  return Reader(path, content, diagnostics).read();
}

}  // namespace orrery
