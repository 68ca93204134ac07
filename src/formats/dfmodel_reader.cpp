#include "formats/dfmodel_reader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

#include "dfmodel_dse.pb.h"
#include "formats/protobuf_log_capture.h"

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
    // A repeated field has lines per element only; asking for the field as a whole is an
    // error inside protobuf.
    if (!f || (f->is_repeated() && index < 0) || (!f->is_repeated() && index >= 0)) return fallback;
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

// A walk over a binary protobuf's wire format, guided by the schema, that says where and why it
// stops making sense: the protobuf library only says that parsing failed.
class WireWalk {
 public:
  explicit WireWalk(std::string_view bytes) : bytes_(bytes) {}

  // Walks the whole content as a Dse message; true when nothing is wrong.
  bool walk() { return walk(0, bytes_.size(), pb::Dse::descriptor(), ""); }

  const std::string& problem() const { return problem_; }  // empty when walk() is true
  // The content ends inside a field, and everything before fits the schema: a cut-off file.
  bool truncated() const { return truncated_ && !mismatched_; }
  bool saw_kernel() const { return saw_kernel_; }

 private:
  using Field = google::protobuf::FieldDescriptor;

  bool varint(size_t& i, size_t end, uint64_t& value) const {
    value = 0;
    for (int shift = 0; shift < 64 && i < end; shift += 7) {
      const auto byte = static_cast<uint8_t>(bytes_[i++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  static int wire_type_of(const Field* f) {
    switch (f->type()) {
      case Field::TYPE_FLOAT:
      case Field::TYPE_FIXED32:
      case Field::TYPE_SFIXED32:
        return 5;
      case Field::TYPE_DOUBLE:
      case Field::TYPE_FIXED64:
      case Field::TYPE_SFIXED64:
        return 1;
      case Field::TYPE_STRING:
      case Field::TYPE_BYTES:
      case Field::TYPE_MESSAGE:
        return 2;
      default:
        return 0;
    }
  }

  // `past_end`: the field runs past the end of its message; when that message ends where the
  // file does, the file may have been cut off.
  bool fail(size_t at, const std::string& what, bool past_end, size_t end) {
    problem_ = fmt::format("at byte {} of {}: {}", at, bytes_.size(), what);
    truncated_ = past_end && end == bytes_.size();
    return false;
  }

  bool walk(size_t begin, size_t end, const google::protobuf::Descriptor* d,
            const std::string& where) {
    std::map<int, int> seen;  // elements of each repeated field so far
    for (size_t i = begin; i < end;) {
      const size_t start = i;
      uint64_t tag = 0;
      if (!varint(i, end, tag)) return fail(start, "a field tag runs past the end", i >= end, end);
      const auto number = static_cast<int>(tag >> 3);
      const auto wire = static_cast<int>(tag & 7);
      const Field* f = d ? d->FindFieldByNumber(number) : nullptr;
      std::string name = where.empty() ? "" : where + ".";
      name += f ? f->name() : "field " + std::to_string(number);
      if (f && f->is_repeated()) name += "[" + std::to_string(seen[number]++) + "]";
      if (number == 0) return fail(start, "field number 0 is not valid", false, end);
      if (!f || wire_type_of(f) != wire) mismatched_ = true;
      switch (wire) {
        case 0: {
          uint64_t value = 0;
          if (!varint(i, end, value))
            return fail(start, name + " runs past the end", i >= end, end);
          break;
        }
        case 1:
        case 5: {
          const size_t width = wire == 1 ? 8 : 4;
          if (end - i < width)
            return fail(start, fmt::format("{} needs {} bytes, {} remain", name, width, end - i),
                        true, end);
          i += width;
          break;
        }
        case 2: {
          uint64_t length = 0;
          if (!varint(i, end, length))
            return fail(start, name + " runs past the end", i >= end, end);
          const bool message = f && f->type() == Field::TYPE_MESSAGE;
          if (f && f->name() == "kernels") saw_kernel_ = true;
          if (length > end - i) {
            // Walk what is there: a cut inside the message is reported where it falls.
            if (message && !walk(i, end, f->message_type(), name)) return false;
            return fail(start, fmt::format("{} claims {} bytes, {} remain", name, length, end - i),
                        true, end);
          }
          if (message && !walk(i, i + static_cast<size_t>(length), f->message_type(), name))
            return false;
          i += static_cast<size_t>(length);
          break;
        }
        default:
          return fail(start,
                      fmt::format("{} has wire type {}, which DSE files do not use", name, wire),
                      false, end);
      }
    }
    return true;
  }

  std::string_view bytes_;
  std::string problem_;
  bool truncated_ = false, mismatched_ = false, saw_kernel_ = false;
};

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
    first_line_ = text ? 1 : 0;  // binary files have no lines
    TextFormat::ParseInfoTree tree;
    const ProtobufLogCapture log;
    if (text) {
      parse_text(tree);
    } else if (content_.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
               !dse_.ParseFromArray(content_.data(), static_cast<int>(content_.size()))) {
      WireWalk walk(content_);
      const std::string library = ProtobufLogCapture::message();
      const std::string detail =
          !walk.walk()       ? walk.problem() + (walk.truncated() ? " (the file is cut off?)" : "")
          : !library.empty() ? "the protobuf library rejects it: " + library
          : content_.size() > static_cast<size_t>(std::numeric_limits<int>::max())
              ? "the file is over 2 GiB, more than the protobuf library reads"
              : "the protobuf library rejects it";
      throw InputError(
          {path_, 0},
          "expected a DFModel DSE file (protobuf text or binary); as binary, " + detail);
    }
    const Lines root(text ? &tree : nullptr, pb::Dse::descriptor());
    if (!text && has_unknown_fields(dse_))
      diagnostics_.warn({path_, 0},
                        "the binary file has fields Orrery's DFModel schema does not know; "
                        "they are ignored");

    DataflowProblem p;
    p.source = path_;
    p.name = std::filesystem::path(path_).stem().string();
    if (!dse_.has_dataflow_graph())
      throw InputError({path_, first_line_}, "expected a dataflow_graph block");
    if (!dse_.has_system()) throw InputError({path_, first_line_}, "expected a system block");
    p.graph_line = root.of("dataflow_graph", -1, first_line_);
    read_graph(dse_.dataflow_graph(), root.nested("dataflow_graph"), p);
    p.system =
        read_system(dse_.system(), root.nested("system"), root.of("system", -1, first_line_));
    read_cost(root, p);
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

  // Sizes, counts and ids are at most 2^31 - 1, so that products of two or three of them stay
  // exact in 64 bits (and in a double's 53-bit mantissa where that matters less).
  static constexpr int64_t kLargest = 2147483647;

  // Where a field of a block is: its own line, else the block's (binary files: neither).
  SourceLocation where(const Lines& lines, std::string_view field, int64_t block_line) const {
    return {path_, lines.of(field, -1, block_line)};
  }

  // An integer field of `owner`: `min` <= value <= 2^31 - 1.
  int64_t integer(int64_t value, const Lines& lines, std::string_view field, int64_t block_line,
                  const std::string& owner, int64_t min, std::string_view meaning = "") const {
    if (value < min || value > kLargest)
      throw InputError(where(lines, field, block_line),
                       fmt::format("{}: expected {} between {} and {}{}, found {}", owner, field,
                                   min, kLargest, meaning, value));
    return value;
  }

  // A float field of `owner`: finite and >= 0, or > 0 when `positive`.
  double real(float value, const Lines& lines, std::string_view field, int64_t block_line,
              const std::string& owner, bool positive = false) const {
    if (!std::isfinite(value) || value < 0 || (positive && value == 0)) {
      // The schema's fields are 32-bit floats: what the text said may have over- or underflowed.
      const char* why = std::isinf(value) ? " (a 32-bit float: values beyond 3.4e38 read as inf)"
                        : value == 0 && positive
                            ? " (a 32-bit float: values below 1.2e-38 read as 0)"
                            : "";
      throw InputError(where(lines, field, block_line),
                       fmt::format("{}: expected {} to be a finite number {} 0, found {}{}", owner,
                                   field, positive ? ">" : ">=", value, why));
    }
    return value;
  }

  // Fields shared by the four variant messages. Sizes of 0 are absent (proto3): outer and
  // output_tensor_size are then derived by the graph, M, N and K are errors there.
  template <typename V>
  void read_common(const V& v, const Lines& lines, const pb::Kernel& k, DataflowKernel& out) {
    const std::string label = kernel_label(k);
    out.outer = integer(v.outer(), lines, "outer", out.line, label, 0, " (0: 1)");
    out.m = integer(v.m(), lines, "M", out.line, label, 1);
    out.n = integer(v.n(), lines, "N", out.line, label, 1);
    out.output_bytes = real(v.output_tensor_size(), lines, "output_tensor_size", out.line, label);
    out.sharding = sharding_of(v.sharding());
    const auto tiling = tiling_of(v.tiling());
    if (!tiling)
      throw InputError({path_, lines.of("tiling", -1, out.line)},
                       kernel_label(k) +
                           ": expected a tiling (N_TILING, K_TILING, M_TILING, OUTER_TILING or "
                           "NO_TILING)");
    out.tiling = *tiling;
    out.collective = collective_of(v.communication_type());
    out.collective_bytes =
        real(v.communication_size(), lines, "communication_size", out.line, label);
    out.collective2 = collective_of(v.communication_type_2());
    out.collective2_bytes =
        real(v.communication_size_2(), lines, "communication_size_2", out.line, label);
    out.shard_outer_m = integer(v.shard_outer_m(), lines, "shard_outer_M", out.line, label, 0);
    out.shard_n = integer(v.shard_n(), lines, "shard_N", out.line, label, 0);
    out.memory_bytes = real(v.memory_size(), lines, "memory_size", out.line, label);
    out.num_input = integer(v.num_input(), lines, "num_input", out.line, label, 0, " (0: 1)");
  }

  // K and its shard, for the two GEMM variants.
  template <typename V>
  void read_k(const V& v, const Lines& lines, const pb::Kernel& k, DataflowKernel& out) {
    out.k = integer(v.k(), lines, "K", out.line, kernel_label(k), 1);
    out.shard_k = integer(v.shard_k(), lines, "shard_K", out.line, kernel_label(k), 0);
  }

  DataflowKernel read_kernel(const pb::Kernel& k, const Lines& lines, int64_t line) {
    DataflowKernel out;
    out.name = k.name();
    out.id = k.id();
    out.line = line;
    out.topological_number = k.topological_number();
    out.config = k.config();
    if (out.config < -1 || out.config > kLargest)
      throw InputError(where(lines, "config", line),
                       fmt::format("{}: expected config between -1 (free) and {}, found {}",
                                   kernel_label(k), kLargest, out.config));
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
        const Lines fields = lines.nested("gemm_input1_weight");
        read_common(v, fields, k, out);
        read_k(v, fields, k, out);
        out.input1_bytes =
            real(v.input_tensor_size(), fields, "input_tensor_size", line, kernel_label(k));
        out.weight_bytes =
            real(v.weight_tensor_size(), fields, "weight_tensor_size", line, kernel_label(k));
        out.skip_weight = v.skip_weight();
        out.use_effective_stage = v.use_effective_stage();
        break;
      }
      case pb::Kernel::kGemmInput1Input2: {
        const auto& v = k.gemm_input1_input2();
        out.variant = KernelVariant::GemmInputInput;
        const Lines fields = lines.nested("gemm_input1_input2");
        read_common(v, fields, k, out);
        read_k(v, fields, k, out);
        out.input1_bytes =
            real(v.input_tensor_1_size(), fields, "input_tensor_1_size", line, kernel_label(k));
        out.input2_bytes =
            real(v.input_tensor_2_size(), fields, "input_tensor_2_size", line, kernel_label(k));
        break;
      }
      case pb::Kernel::kElementwiseInput1: {
        const auto& v = k.elementwise_input1();
        out.variant = KernelVariant::Elementwise;
        const Lines fields = lines.nested("elementwise_input1");
        read_common(v, fields, k, out);
        out.input1_bytes =
            real(v.input_tensor_size(), fields, "input_tensor_size", line, kernel_label(k));
        break;
      }
      case pb::Kernel::kElementwiseInput1Input2: {
        const auto& v = k.elementwise_input1_input2();
        out.variant = KernelVariant::ElementwiseInputInput;
        const Lines fields = lines.nested("elementwise_input1_input2");
        read_common(v, fields, k, out);
        out.input1_bytes =
            real(v.input_tensor_1_size(), fields, "input_tensor_1_size", line, kernel_label(k));
        out.input2_bytes =
            real(v.input_tensor_2_size(), fields, "input_tensor_2_size", line, kernel_label(k));
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
    if (g.kernels_size() == 0)
      throw InputError({path_, p.graph_line}, "dataflow_graph: expected at least one kernel");
    for (int i = 0; i < g.kernels_size(); ++i)
      p.kernels.push_back(
          read_kernel(g.kernels(i), lines.nested("kernels", i), lines.of("kernels", i)));
    for (int i = 0; i < g.connections_size(); ++i) {
      const pb::Connection& c = g.connections(i);
      const Lines fields = lines.nested("connections", i);
      DataflowEdge e;
      e.id = c.id();
      e.line = lines.of("connections", i);
      const std::string label = "connection " + std::to_string(e.id);
      e.from_id = c.startidx();
      e.to_id = c.endidx();
      e.collective = collective_of(c.communication_type());
      e.collective_bytes =
          real(c.communication_size(), fields, "communication_size", e.line, label);
      e.buffer_depth = c.buffer_depth();
      e.tensor_bytes = real(c.tensor_size(), fields, "tensor_size", e.line, label);
      e.shard_tensor_bytes =
          real(c.shard_tensor_size(), fields, "shard_tensor_size", e.line, label);
      e.from_name = c.startname();
      e.to_name = c.endname();
      p.edges.push_back(std::move(e));
    }
  }

  DataflowSystem read_system(const pb::System& sys, const Lines& lines, int64_t line) {
    DataflowSystem s;
    s.line = line;
    s.chips = integer(sys.num_chip(), lines, "num_chip", line, "system", 1);
    s.hbd = integer(sys.hbd(), lines, "HBD", line, "system", 0);
    const auto& a = sys.accelerator();
    const Lines acc = lines.nested("accelerator");
    const int64_t acc_line = lines.of("accelerator", -1, line);
    s.cores = integer(a.core(), acc, "core", acc_line, "accelerator", 1);
    s.systolic_width =
        integer(a.systolic_width(), acc, "systolic_width", acc_line, "accelerator", 1);
    s.systolic_height =
        integer(a.systolic_height(), acc, "systolic_height", acc_line, "accelerator", 1);
    s.sram_bytes = real(a.sram_cap(), acc, "sram_cap", acc_line, "accelerator", true);
    s.freq_ghz = real(a.freq(), acc, "freq", acc_line, "accelerator", true);
    s.pmu = integer(a.pmu(), acc, "pmu", acc_line, "accelerator", 0);
    real(a.pmu_cap(), acc, "pmu_cap", acc_line, "accelerator");
    s.link_latency = real(a.link_latency(), acc, "link_latency", acc_line, "accelerator");
    const Lines mem = lines.nested("memory");
    const int64_t mem_line = lines.of("memory", -1, line);
    const auto& memory = sys.memory();
    s.dram_gbps = real(memory.dram_bw(), mem, "dram_bw", mem_line, "memory", true);
    s.dram_bytes = real(memory.dram_cap(), mem, "dram_cap", mem_line, "memory", true);
    s.second_dram_gbps = real(memory.second_dram_bw(), mem, "second_dram_bw", mem_line, "memory");
    s.second_dram_bytes =
        real(memory.second_dram_cap(), mem, "second_dram_cap", mem_line, "memory");

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
    s.topology_line = lines.of(s.topology, -1, line);
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
        dim.size = integer(r->GetInt64(m, d->FindFieldByName(axis)), topo, axis, s.topology_line,
                           s.topology, 0, " (0: free)");
        dim.link_gbps = real(r->GetFloat(m, d->FindFieldByName("link_bw_" + axis)), topo,
                             "link_bw_" + axis, s.topology_line, s.topology, true);
        dim.role = role_of(r->GetString(m, d->FindFieldByName("par_" + axis)),
                           {path_, topo.of("par_" + axis, -1, s.topology_line)});
        s.dimensions.push_back(dim);
      }
    }
    return s;
  }

  void read_cost(const Lines& root, DataflowProblem& p) {
    if (!dse_.has_cost()) {
      diagnostics_.warn({path_, 0}, "no cost block; cost and power are reported as 0");
      return;
    }
    const pb::Cost& c = dse_.cost();
    const Lines lines = root.nested("cost");
    const int64_t line = root.of("cost", -1, first_line_);
    const auto price = [&](float value, std::string_view field) {
      return real(value, lines, field, line, "cost");
    };
    DataflowCostTable& t = p.cost;
    t.link_price = price(c.link_unit_price(), "link_unit_price");
    t.switch_price = price(c.switch_unit_price(), "switch_unit_price");
    t.dram_price = price(c.dram_unit_price(), "dram_unit_price");
    t.chip_price = price(c.accelerator_price(), "accelerator_price");
    t.link_power[0] = price(c.link_unit_power_x(), "link_unit_power_x");
    t.link_power[1] = price(c.link_unit_power_y(), "link_unit_power_y");
    t.link_power[2] = price(c.link_unit_power_z(), "link_unit_power_z");
    t.switch_power = price(c.switch_unit_power(), "switch_unit_power");
    t.dram_power = price(c.dram_unit_power(), "dram_unit_power");
    t.chip_power = price(c.accelerator_power(), "accelerator_power");
  }

  void read_run(const Lines& root, DataflowProblem& p) {
    if (dse_.has_execution() && dse_.has_miscellany())
      throw InputError({path_, root.of("miscellany", -1, first_line_)},
                       "expected one run block, found both execution and miscellany");
    if (!dse_.has_execution() && !dse_.has_miscellany())
      throw InputError({path_, first_line_}, "expected an execution (or miscellany) block");
    const char* block = dse_.has_execution() ? "execution" : "miscellany";
    const pb::Execution& e = dse_.has_execution() ? dse_.execution() : dse_.miscellany();
    const Lines lines = root.nested(block);
    DataflowRun& run = p.run;
    run.line = root.of(block, -1, first_line_);
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
    run.num_config =
        integer(e.num_config(), lines, "num_config", run.line, block, 0, " (0: one per kernel)");
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
    run.compute_util = real(e.compute_util(), lines, "compute_util", run.line, block);
    if (run.compute_util > 1)
      throw InputError(where(lines, "compute_util", run.line),
                       fmt::format("{}: expected compute_util between 0 (cycle model) and 1, "
                                   "found {}",
                                   block, e.compute_util()));
    run.word_bytes = integer(e.word(), lines, "word", run.line, block, 0, " (0: 2 bytes)");
    if (run.word_bytes == 0) {
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
      const Lines fields = lines.nested("llm");
      run.llm_line = lines.of("llm", -1, run.line);
      const auto size = [&](int64_t value, std::string_view name, int64_t min,
                            std::string_view meaning = "") {
        return integer(value, fields, name, run.llm_line, "llm", min, meaning);
      };
      // Which of them must be >= 1 is the model's business (dataflow/problem_scope.h).
      run.llm = LlmShape{size(l.hidden_dim(), "hidden_dim", 0),
                         size(l.head_dim(), "head_dim", 0),
                         size(l.num_head(), "num_head", 0),
                         size(l.seq_len(), "seq_len", 0),
                         size(l.num_layer(), "num_layer", 0),
                         size(l.global_batch_size(), "global_batch_size", 0),
                         size(l.micro_batch_size(), "micro_batch_size", 0, " (0: free)"),
                         size(l.tile_size(), "tile_size", 0, " (0: free)"),
                         size(l.num_layer_in_graph(), "num_layer_in_graph", 0)};
    }
  }

  void read_limits(const Lines& root, DataflowProblem& p) {
    if (!dse_.has_gurobi()) return;
    const pb::Gurobi& g = dse_.gurobi();
    const Lines lines = root.nested("gurobi");
    p.limits.line = root.of("gurobi", -1, first_line_);
    // Threads beyond the CPUs and time limits beyond a year change nothing; larger values are
    // accepted and clamped by the search.
    const auto non_negative = [&](int64_t value, std::string_view field, std::string_view what) {
      if (value < 0)
        throw InputError(
            where(lines, field, p.limits.line),
            fmt::format("gurobi: expected {} >= 0 ({}), found {}", field, what, value));
      return value;
    };
    p.limits.threads = non_negative(g.thread(), "thread", "0: all CPUs");
    p.limits.time_limit_s = non_negative(g.time(), "time", "seconds; 0: no limit");
    p.limits.gap = real(g.gap(), lines, "gap", p.limits.line, "gurobi");
  }

  std::string path_;
  std::string_view content_;
  Diagnostics& diagnostics_;
  pb::Dse dse_;
  int64_t first_line_ = 1;  // where a block absent from a text file is reported; 0 for binary
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
  if (content.empty() || content.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return false;
  pb::Dse dse;
  const ProtobufLogCapture log;  // a failed parse is only a "no" here
  if (dse.ParseFromArray(content.data(), static_cast<int>(content.size())))
    return dse.dataflow_graph().kernels_size() > 0;
  // Every field fits the schema and a kernel began, but the library refuses the file (a string
  // that is not UTF-8), or the file is cut off: DFModel, with an error of its own to come.
  WireWalk walk(content);
  const bool fits = walk.walk() || walk.truncated();
  return fits && walk.saw_kernel();
}

DataflowProblem read_dfmodel(const std::string& path, std::string_view content,
                             Diagnostics& diagnostics) {
  return Reader(path, content, diagnostics).read();
}

}  // namespace orrery
