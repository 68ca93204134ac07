#include "formats/neusight_table.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>
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
// transformer blocks --layers may ask for, the synthesized backward ratio, and the iteration's
// total compute time.
constexpr double kMaxRowMs = 3.6e6;  // an hour per operator
constexpr int64_t kMaxLayers = 10'000;
constexpr double kMaxBackwardRatio = 100;
constexpr double kMaxTotalMs = 1e9;  // about 11.6 days of compute per iteration
constexpr std::string_view kBlockPrefix = "transformer_h_";

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

// Block index of a `transformer_h_K_...` name, or -1.
int64_t block_of(std::string_view name) {
  if (!name.starts_with(kBlockPrefix)) return -1;
  name.remove_prefix(kBlockPrefix.size());
  const auto digits = name.find('_');
  const auto k = parse_int64(name.substr(0, digits));
  return k ? *k : -1;
}

// "transformer_h_3_ln_1" -> "ln", "addmm_2" -> "addmm", "lm_head_grad" -> "grad all-reduce".
std::string kind_of(std::string_view name) {
  if (name.ends_with(kGradSuffix)) return "grad all-reduce";
  if (block_of(name) >= 0) {
    name.remove_prefix(kBlockPrefix.size());
    name.remove_prefix(name.find('_') + 1);
  } else if (name.starts_with("transformer_")) {
    name.remove_prefix(std::string_view("transformer_").size());
  }
  const auto last = name.rfind('_');
  if (last != std::string_view::npos && last + 1 < name.size() &&
      parse_uint64(name.substr(last + 1)))
    name = name.substr(0, last);
  return std::string(name);
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

  Row read_row(const TextLine& line, const std::vector<std::string_view>& fields);
  Time read_time(const TextLine& line, std::string_view token, size_t column);
  std::optional<Communication> read_comm(const TextLine& line,
                                         const std::vector<std::string_view>& fields,
                                         size_t type_column, bool backward);
  void synthesize_backward(std::vector<Row>& rows);
  std::vector<Row> replicate_blocks(const std::vector<Row>& rows);

  std::string path_;
  std::string_view content_;
  const ReaderOptions& options_;
  Diagnostics& diagnostics_;
  int64_t element_bytes_ = 4;
  int64_t blocks_ = 0;  // transformer blocks after replication
};

Time Reader::read_time(const TextLine& line, std::string_view token, size_t column) {
  const auto ms = parse_double(token);
  if (!ms || !(*ms >= 0 && *ms <= kMaxRowMs))
    fail(line.number, "column " + std::to_string(column + 1) + " (" +
                          std::string(kColumns[column]) +
                          "): expected a non-negative time in milliseconds (at most 3.6e6, an "
                          "hour), found '" +
                          std::string(token) + "'");
  return Time::from_seconds(*ms * 1e-3);
}

std::optional<Communication> Reader::read_comm(const TextLine& line,
                                               const std::vector<std::string_view>& fields,
                                               size_t type_column, bool backward) {
  const std::string_view type = fields[type_column];
  const std::string_view size_token = fields[type_column + 1];
  const auto elements = parse_uint64(size_token);
  if (!elements || *elements > (uint64_t{1} << 56))
    fail(line.number, "column " + std::to_string(type_column + 2) + " (" +
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
  row.name = std::string(fields[0]);
  row.forward = read_time(line, fields[1], 1);
  row.forward_comm = read_comm(line, fields, 2, false);
  row.backward = read_time(line, fields[4], 4);
  row.backward_comm = read_comm(line, fields, 5, true);
  row.weight_grad = read_time(line, fields[7], 7);
  row.weight_grad_comm = read_comm(line, fields, 8, true);
  row.process = read_time(line, fields[10], 10);
  return row;
}

void Reader::synthesize_backward(std::vector<Row>& rows) {
  const bool none = std::all_of(rows.begin(), rows.end(), [](const Row& r) {
    return r.backward == Time::zero() && r.weight_grad == Time::zero();
  });
  if (!none) return;
  const double ratio = options_.backward_ratio.value_or(2.0);
  std::map<std::string, bool> has_grad_row;
  for (const Row& r : rows)
    if (r.name.ends_with(kGradSuffix))
      has_grad_row[r.name.substr(0, r.name.size() - kGradSuffix.size())] = true;
  for (Row& r : rows) {
    const double forward_ps = static_cast<double>(r.forward.ps());
    if (has_grad_row.count(r.name)) {
      r.backward = Time::from_ps(std::llround(forward_ps * ratio / 2));
      r.weight_grad = Time::from_ps(std::llround(forward_ps * ratio / 2));
    } else {
      r.backward = Time::from_ps(std::llround(forward_ps * ratio));
    }
  }
  std::ostringstream text;
  text << "every backward time is 0 (NeuSight without is_train); backward synthesized as " << ratio
       << " x forward, split evenly between input and weight gradient for rows with parameters "
          "(--backward-ratio)";
  warn(0, text.str());
}

std::vector<Row> Reader::replicate_blocks(const std::vector<Row>& rows) {
  // Block k: from its first row to the next `transformer_` row of another block or none.
  std::vector<int64_t> owner(rows.size(), -1);
  int64_t current = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string_view name = rows[i].name;
    const int64_t k = block_of(name);
    if (k >= 0)
      current = k;
    else if (name.starts_with("transformer_"))
      current = -1;
    owner[i] = current;
  }
  std::vector<int64_t> listed;
  for (const int64_t k : owner)
    if (k >= 0 && std::find(listed.begin(), listed.end(), k) == listed.end()) listed.push_back(k);
  blocks_ = static_cast<int64_t>(listed.size());
  if (!options_.layers) {
    if (!listed.empty())
      warn(0, "the table lists " + std::to_string(listed.size()) +
                  " transformer block(s) and does not say how many the model has (GPT-2 Large: "
                  "36); simulating the blocks listed (use --layers N)");
    return rows;
  }
  const int64_t wanted = *options_.layers;
  if (listed.empty()) {
    warn(0, "no transformer_h_K_ rows; --layers ignored");
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
  const std::string prefix = std::string(kBlockPrefix) + std::to_string(last) + "_";
  for (int64_t k = last + 1; k < last + 1 + wanted - blocks_; ++k) {
    const std::string renamed = std::string(kBlockPrefix) + std::to_string(k) + "_";
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
  if (const auto& r = options_.backward_ratio; r && !(*r > 0 && *r <= kMaxBackwardRatio)) {
    std::ostringstream text;
    text << "--backward-ratio " << *r
         << ": expected a finite ratio of backward to forward time, above 0 and at most "
         << kMaxBackwardRatio;
    throw InputError(text.str());
  }
  const std::vector<TextLine> lines = split_lines(content_);
  const auto header = fields_of(lines[0].text);
  if (!std::equal(header.begin(), header.end(), kColumns.begin(), kColumns.end()))
    fail(1,
         "expected the NeuSight header: the 11 column names name, forward_compute_time, ..., "
         "process_time, separated by tabs");
  element_bytes_ = size_in_bytes(options_.comm_dtype.value_or(DType::FP32));

  std::vector<Row> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i].text).empty()) continue;
    rows.push_back(read_row(lines[i], fields_of(lines[i].text)));
  }
  if (rows.empty()) fail(lines.back().number, "expected at least one operator row");
  synthesize_backward(rows);
  rows = replicate_blocks(rows);
  double total_ms = 0;
  for (const Row& r : rows)
    total_ms += (r.forward + r.backward + r.weight_grad + r.process).milliseconds();
  if (total_ms > kMaxTotalMs) {
    std::ostringstream text;
    text << "expected at most 1e9 ms (11.6 days) of compute per iteration, found " << total_ms
         << " ms after replicating the blocks" << (options_.layers ? " (--layers)" : "")
         << " and synthesizing the backward";
    throw InputError({path_, 0}, text.str());
  }

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
  return w;
}

}  // namespace

bool looks_like_neusight_table(std::string_view content) {
  const auto header = fields_of(content.substr(0, content.find('\n')));
  return header.size() == kColumns.size() && header[0] == kColumns[0] && header[1] == kColumns[1];
}

Workload read_neusight_table(const std::string& path, std::string_view content,
                             const ReaderOptions& options, Diagnostics& diagnostics) {
  return Reader(path, content, options, diagnostics).read();
}

}  // namespace orrery
