#include "formats/neusight_table.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "core/text.h"

namespace orrery {
namespace {

constexpr std::array<std::string_view, 11> kColumns = {"name",
                                                       "forward_compute_time",
                                                       "forward_comm_type",
                                                       "forward_comm_size",
                                                       "backward_compute_time",
                                                       "backward_comm_type",
                                                       "backward_comm_size",
                                                       "weight_grad_compute_time",
                                                       "weight_grad_comm_type",
                                                       "weight_grad_comm_size",
                                                       "process_time"};

constexpr std::string_view kGradSuffix = "_grad";
// Bounds that keep every time far inside Time's range (about 106 days): one row's time, the
// transformer blocks --layers may ask for, and the iteration's total compute time as the file
// gives it (the backward estimated later, training/backward_estimate.h, is bounded again there).
constexpr double kMaxRowMs = 3.6e6;  // an hour per operator
constexpr int64_t kMaxLayers = 10'000;
constexpr double kMaxTotalMs = 1e9;  // about 11.6 days of compute per iteration

std::vector<std::string_view> fields_of(std::string_view line) {
  const auto tabbed = split(trim(line), '\t');
  return tabbed.size() > 1 ? tabbed : split_whitespace(line);
}

// One table row as read, before the layers are built.
struct Row {
  int64_t line = 0;
  std::string name;
  Time forward, backward, weight_grad, process;
  std::optional<Communication> forward_comm, backward_comm, weight_grad_comm;
};

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A row of a numbered block, read from its name as torch.fx writes module paths
// ("transformer.h.3.ln_1" -> "transformer_h_3_ln_1", "model.layers.3.mlp" ->
// "model_layers_3_mlp"): the stack is the name up to its first number that is not the last part
// (a last number counts calls of one function: "addmm_2"), after NeuSight's "_grad" suffix.
struct BlockName {
  std::string_view stack;  // "transformer_h"
  int64_t index = 0;       // 3
};

std::optional<BlockName> block_name(std::string_view name) {
  if (name.ends_with(kGradSuffix)) name.remove_suffix(kGradSuffix.size());
  for (size_t start = 0; start < name.size();) {
    const size_t end = std::min(name.find('_', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (end == name.size()) break;  // the last part
    if (all_digits(part) && start > 1 && part.size() <= 9)
      return BlockName{name.substr(0, start - 1), *parse_int64(part)};
    start = end + 1;
  }
  return std::nullopt;
}

class Reader {
 public:
  Reader(const std::string& path, std::string_view content, const ReaderOptions& options,
         Diagnostics& diagnostics)
      : path_(path), content_(content), options_(options), diagnostics_(diagnostics) {}

  Workload read();

 private:
  [[noreturn]] void fail(int64_t line, const std::string& message) const {
    throw InputError({path_, line}, message);
  }
  void warn(int64_t line, std::string message) {
    diagnostics_.warn({path_, line}, std::move(message));
  }

  void read_header(const std::vector<std::string_view>& header);
  Row read_row(const TextLine& line, const std::vector<std::string_view>& fields);
  Time read_time(const TextLine& line, const std::vector<std::string_view>& fields, size_t column);
  std::optional<Communication> read_comm(const TextLine& line,
                                         const std::vector<std::string_view>& fields,
                                         size_t type_column, bool backward);
  void find_stack(const std::vector<Row>& rows);
  std::optional<int64_t> block_of(std::string_view name) const;
  std::string kind_of(std::string_view name) const;
  std::vector<Row> replicate_blocks(const std::vector<Row>& rows);
  void check_total(const std::vector<Row>& rows) const;
  std::optional<ForwardTimesOnly> forward_times_only(const std::vector<Row>& rows) const;

  std::string path_;
  std::string_view content_;
  const ReaderOptions& options_;
  Diagnostics& diagnostics_;
  int64_t element_bytes_ = 4;
  std::array<size_t, kColumns.size()> position_{};  // kColumns[c] is field position_[c]
  std::string stack_;                               // the numbered blocks' stack, if any
  std::string root_;                                // its first part ("transformer")
  int64_t blocks_ = 0;                              // transformer blocks after replication
};

void Reader::read_header(const std::vector<std::string_view>& header) {
  // The columns by name, in any order.
  std::array<bool, kColumns.size()> seen{};
  bool ok = header.size() == kColumns.size();
  for (size_t i = 0; ok && i < header.size(); ++i) {
    const auto c = std::find(kColumns.begin(), kColumns.end(), header[i]) - kColumns.begin();
    ok = c < static_cast<ptrdiff_t>(kColumns.size()) && !seen[static_cast<size_t>(c)];
    if (ok) {
      seen[static_cast<size_t>(c)] = true;
      position_[static_cast<size_t>(c)] = i;
    }
  }
  if (!ok)
    fail(1,
         "expected the NeuSight header: the 11 column names name, forward_compute_time, ..., "
         "process_time, separated by tabs");
}

// The stack of the first numbered row names the blocks; its first part ends them.
void Reader::find_stack(const std::vector<Row>& rows) {
  for (const Row& r : rows)
    if (const auto block = block_name(r.name)) {
      stack_ = std::string(block->stack);
      root_ = stack_.substr(0, stack_.find('_'));
      return;
    }
}

// The block index of a row of the blocks' stack.
std::optional<int64_t> Reader::block_of(std::string_view name) const {
  const auto block = block_name(name);
  if (!block || block->stack != stack_) return std::nullopt;
  return block->index;
}

// "transformer_h_3_ln_1" -> "ln", "transformer_ln_f" -> "ln_f", "addmm_2" -> "addmm",
// "lm_head_grad" -> "grad all-reduce".
std::string Reader::kind_of(std::string_view name) const {
  if (name.ends_with(kGradSuffix)) return "grad all-reduce";
  if (block_of(name)) {
    name.remove_prefix(stack_.size() + 1);
    name.remove_prefix(name.find('_') + 1);
  } else if (!root_.empty() && name.starts_with(root_ + "_")) {
    name.remove_prefix(root_.size() + 1);
  }
  const auto last = name.rfind('_');
  if (last != std::string_view::npos && last + 1 < name.size() &&
      parse_uint64(name.substr(last + 1)))
    name = name.substr(0, last);
  return std::string(name);
}

Time Reader::read_time(const TextLine& line, const std::vector<std::string_view>& fields,
                       size_t column) {
  const std::string_view token = fields[position_[column]];
  const auto ms = parse_double(token);
  if (!ms || !(*ms >= 0 && *ms <= kMaxRowMs))
    fail(line.number, "column " + std::to_string(position_[column] + 1) + " (" +
                          std::string(kColumns[column]) +
                          "): expected a non-negative time in milliseconds (at most 3.6e6, an "
                          "hour), found '" +
                          std::string(token) + "'");
  return Time::from_seconds(*ms * 1e-3);
}

std::optional<Communication> Reader::read_comm(const TextLine& line,
                                               const std::vector<std::string_view>& fields,
                                               size_t type_column, bool backward) {
  const std::string_view type = fields[position_[type_column]];
  const std::string_view size_token = fields[position_[type_column + 1]];
  const auto elements = parse_uint64(size_token);
  if (!elements || *elements > (uint64_t{1} << 56))
    fail(line.number, "column " + std::to_string(position_[type_column + 1] + 1) + " (" +
                          std::string(kColumns[type_column + 1]) +
                          "): expected a number of elements, found '" + std::string(size_token) +
                          "'");
  if (type == "None" || type == "NONE" || type == "none") return std::nullopt;
  const Bytes bytes = *elements * static_cast<Bytes>(element_bytes_);
  if (type == "ALLREDUCE_ASYNC" || type == "allreduce_async") {
    if (!backward)
      warn(line.number, "forward ALLREDUCE_ASYNC read as a blocking tensor-parallel all-reduce");
    return Communication{CollectiveKind::AllReduce, backward ? CommGroup::Data : CommGroup::Tensor,
                         bytes};
  }
  if (type == "ALLREDUCE" || type == "allreduce") {
    warn(line.number,
         "tensor-parallel all-reduce: the table does not give the TP degree, and Orrery runs "
         "NeuSight tables with TP 1, where it costs nothing");
    return Communication{CollectiveKind::AllReduce, CommGroup::Tensor, bytes};
  }
  warn(line.number, std::string(kColumns[type_column]) + " '" + std::string(type) +
                        "' is not modelled for NeuSight tables (pipeline send/receive rows "
                        "need stages the table does not describe); ignored");
  return std::nullopt;
}

Row Reader::read_row(const TextLine& line, const std::vector<std::string_view>& fields) {
  if (fields.size() != kColumns.size())
    fail(line.number,
         "expected 11 fields (name, forward_compute_time, forward_comm_type, "
         "forward_comm_size, backward_compute_time, backward_comm_type, "
         "backward_comm_size, weight_grad_compute_time, weight_grad_comm_type, "
         "weight_grad_comm_size, process_time), found " +
             std::to_string(fields.size()));
  Row row;
  row.line = line.number;
  row.name = std::string(fields[position_[0]]);
  row.forward = read_time(line, fields, 1);
  row.forward_comm = read_comm(line, fields, 2, false);
  row.backward = read_time(line, fields, 4);
  row.backward_comm = read_comm(line, fields, 5, true);
  row.weight_grad = read_time(line, fields, 7);
  row.weight_grad_comm = read_comm(line, fields, 8, true);
  row.process = read_time(line, fields, 10);
  return row;
}

// A table whose every backward and weight-gradient time is 0 (NeuSight run with is_train False)
// gives forward times only; the rows with an `X_grad` row own parameters. The backward is
// estimated where timing is decided (training/backward_estimate.h).
std::optional<ForwardTimesOnly> Reader::forward_times_only(const std::vector<Row>& rows) const {
  const bool none = std::all_of(rows.begin(), rows.end(), [](const Row& r) {
    return r.backward == Time::zero() && r.weight_grad == Time::zero();
  });
  if (!none) return std::nullopt;
  std::set<std::string_view> has_grad_row;
  for (const Row& r : rows)
    if (r.name.ends_with(kGradSuffix))
      has_grad_row.insert(std::string_view(r.name).substr(0, r.name.size() - kGradSuffix.size()));
  ForwardTimesOnly out;
  for (size_t i = 0; i < rows.size(); ++i)
    if (has_grad_row.count(rows[i].name)) out.parameter_layers.push_back(i);
  return out;
}

// The iteration's compute as the file gives it, after replication: refused at the row where it
// passes kMaxTotalMs.
void Reader::check_total(const std::vector<Row>& rows) const {
  double total_ms = 0;
  for (const Row& r : rows) {
    total_ms += r.forward.milliseconds() + r.backward.milliseconds() +
                r.weight_grad.milliseconds() + r.process.milliseconds();
    if (total_ms > kMaxTotalMs) {
      std::ostringstream text;
      text << "expected at most 1e9 ms (11.6 days) of compute per iteration; the rows up to this "
              "one hold "
           << total_ms << " ms"
           << (options_.layers ? " after replicating the blocks (--layers)" : "");
      fail(r.line, text.str());
    }
  }
}

std::vector<Row> Reader::replicate_blocks(const std::vector<Row>& rows) {
  // Block k: from its first row to the next row of the stack's root that is not in block k
  // ("transformer_ln_f" after "transformer_h_0_..."); rows between without the prefix ("addmm")
  // belong to it.
  find_stack(rows);
  std::vector<int64_t> owner(rows.size(), -1);
  int64_t current = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string_view name = rows[i].name;
    if (const auto k = block_of(name))
      current = *k;
    else if (!root_.empty() && name.starts_with(root_ + "_"))
      current = -1;
    owner[i] = current;
  }
  std::vector<int64_t> listed;
  for (const int64_t k : owner)
    if (k >= 0 && std::find(listed.begin(), listed.end(), k) == listed.end()) listed.push_back(k);
  blocks_ = static_cast<int64_t>(listed.size());
  if (!options_.layers) {
    if (!listed.empty())
      warn(0, "the table lists " + std::to_string(listed.size()) + " transformer block(s) (" +
                  stack_ +
                  "_K_ rows) and does not say how many the model has; simulating the blocks "
                  "listed (use --layers N)");
    return rows;
  }
  const int64_t wanted = *options_.layers;
  if (listed.empty()) {
    warn(0,
         "no rows of numbered blocks (such as transformer_h_0_ln_1 or model_layers_0_mlp); "
         "--layers ignored");
    return rows;
  }
  if (wanted < blocks_)
    throw InputError({path_, 0}, "--layers " + std::to_string(wanted) + ": expected at least the " +
                                     std::to_string(blocks_) + " blocks the table lists");
  const int64_t last = listed.back();
  const auto first_of_last =
      static_cast<size_t>(std::find(owner.begin(), owner.end(), last) - owner.begin());
  size_t end_of_last = first_of_last;
  while (end_of_last < rows.size() && owner[end_of_last] == last)
    ++end_of_last;
  std::vector<Row> result(rows.begin(), rows.begin() + static_cast<ptrdiff_t>(end_of_last));
  const std::string prefix = stack_ + "_" + std::to_string(last) + "_";
  for (int64_t k = last + 1; k < last + 1 + wanted - blocks_; ++k) {
    const std::string renamed = stack_ + "_" + std::to_string(k) + "_";
    for (size_t i = first_of_last; i < end_of_last; ++i) {
      Row copy = rows[i];
      copy.name = copy.name.starts_with(prefix) ? renamed + copy.name.substr(prefix.size())
                                                : renamed + copy.name;
      result.push_back(std::move(copy));
    }
  }
  result.insert(result.end(), rows.begin() + static_cast<ptrdiff_t>(end_of_last), rows.end());
  blocks_ = wanted;
  return result;
}

Workload Reader::read() {
  // Flags first: they are wrong whatever the file holds.
  if (options_.layers && (*options_.layers < 1 || *options_.layers > kMaxLayers))
    throw InputError("--layers " + std::to_string(*options_.layers) +
                     ": expected a number of transformer blocks from 1 to " +
                     std::to_string(kMaxLayers));
  const std::vector<TextLine> lines = split_lines(content_);
  read_header(fields_of(lines[0].text));
  element_bytes_ = size_in_bytes(options_.comm_dtype.value_or(DType::FP32));

  std::vector<Row> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i].text).empty()) continue;
    rows.push_back(read_row(lines[i], fields_of(lines[i].text)));
  }
  if (rows.empty()) fail(lines.back().number, "expected at least one operator row");
  rows = replicate_blocks(rows);
  check_total(rows);

  Workload w;
  w.source = path_;
  w.name = std::filesystem::path(path_).stem().string();
  w.format = "neusight";
  w.world_size_from_file = false;
  ModelSummary model;
  bool any_comm = false;
  Time process;
  for (Row& row : rows) {
    Layer layer;
    layer.name = row.name;
    layer.line = row.line;
    layer.op = kind_of(row.name);
    layer.forward.compute = row.forward;
    layer.forward.comm = row.forward_comm;
    layer.input_grad.compute = row.backward;
    layer.weight_grad.compute = row.weight_grad;
    for (auto* comm : {&row.backward_comm, &row.weight_grad_comm}) {
      if (!*comm) continue;
      Phase& phase = is_data_parallel((*comm)->group) ? layer.weight_grad : layer.input_grad;
      if (phase.comm) warn(row.line, "two gradient collectives in one row; keeping the first");
      if (!phase.comm) phase.comm = *comm;
    }
    if (layer.weight_grad.comm && is_data_parallel(layer.weight_grad.comm->group))
      model.parameters += static_cast<int64_t>(layer.weight_grad.comm->bytes) / element_bytes_;
    any_comm = any_comm || layer.forward.comm || layer.input_grad.comm || layer.weight_grad.comm;
    process += row.process;
    w.program.layers.push_back(std::move(layer));
  }
  const size_t passes_end = w.program.layers.size();
  if (process > Time::zero()) {
    Layer optimizer;
    optimizer.name = "optimizer";
    optimizer.op = "optimizer";
    optimizer.forward.compute = process;
    w.program.layers.push_back(std::move(optimizer));
  }
  w.program.micro_batches = {{0, passes_end}};
  w.program.before = {0, 0};
  w.program.after = {passes_end, w.program.layers.size()};
  if (any_comm && !options_.comm_dtype)
    warn(0,
         "communication sizes are element counts; read as fp32 (4 B) elements "
         "(--comm-dtype)");
  model.layers = blocks_;
  w.model = model;
  w.forward_times_only = forward_times_only(rows);
  return w;
}

}  // namespace

bool looks_like_neusight_table(std::string_view content) {
  const auto header = fields_of(content.substr(0, content.find('\n')));
  return header.size() == kColumns.size() &&
         std::all_of(header.begin(), header.end(), [](std::string_view name) {
           return std::find(kColumns.begin(), kColumns.end(), name) != kColumns.end();
         });
}

Workload read_neusight_table(const std::string& path, std::string_view content,
                             const ReaderOptions& options, Diagnostics& diagnostics) {
  return Reader(path, content, options, diagnostics).read();
}

}  // namespace orrery
