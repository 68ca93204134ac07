#include "formats/simai_text.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <optional>

#include "core/text.h"

namespace orrery {
namespace {

constexpr std::array<std::string_view, 3> kPolicies = {"HYBRID_TRANSFORMER_FWD_IN_BCKWD",
                                                       "HYBRID_TRANSFORMER", "DATA"};

constexpr int kFields = 12;

using Line = TextLine;

// The header of line 1, key by key.
struct Header {
  std::string policy;
  std::map<std::string, int64_t> values;  // key without colon -> value
  std::vector<int64_t> checkpoints;
  std::vector<int64_t> triggers;
};

class Reader {
 public:
  Reader(const std::string& path, std::string_view content, Diagnostics& diagnostics,
         bool simai_compat)
      : path_(path),
        lines_(split_lines(content)),
        diagnostics_(diagnostics),
        simai_compat_(simai_compat) {}

  Workload read();

 private:
  SourceLocation at(int64_t line) const { return {path_, line}; }
  [[noreturn]] void fail(int64_t line, const std::string& message) const {
    throw InputError(at(line), message);
  }
  void warn(int64_t line, std::string message) { diagnostics_.warn(at(line), std::move(message)); }

  Header read_header(const Line& line);
  std::vector<int64_t> read_index_list(const std::vector<std::string_view>& tokens, size_t& i,
                                       std::string_view key, int64_t line);
  Layer read_record(const Line& line, const std::vector<std::string_view>& fields);
  Phase read_phase(const Line& line, const std::vector<std::string_view>& fields, int first,
                   CommGroup bare_group, std::string_view column);
  uint64_t read_number(const Line& line, std::string_view token, int field,
                       std::string_view meaning) const;
  void split_into_passes(Workload& workload);

  std::string path_;
  std::vector<Line> lines_;
  Diagnostics& diagnostics_;
  bool simai_compat_ = false;
  bool data_policy_ = false;
};

std::vector<int64_t> Reader::read_index_list(const std::vector<std::string_view>& tokens, size_t& i,
                                             std::string_view key, int64_t line) {
  const auto count_token = i + 1 < tokens.size() ? tokens[i + 1] : std::string_view();
  const auto count = parse_uint64(count_token);
  if (!count)
    fail(line, "expected a count after '" + std::string(key) + "', found '" +
                   std::string(count_token) + "'");
  std::vector<int64_t> indices;
  for (uint64_t k = 0; k < *count; ++k) {
    const size_t pos = i + 2 + k;
    const auto token = pos < tokens.size() ? tokens[pos] : std::string_view();
    const auto index = parse_uint64(token);
    if (!index)
      fail(line, "expected " + std::to_string(*count) + " layer indices after '" +
                     std::string(key) + " " + std::to_string(*count) + "', found '" +
                     std::string(token) + "'");
    indices.push_back(static_cast<int64_t>(*index));
  }
  i += 2 + *count;
  return indices;
}

Header Reader::read_header(const Line& line) {
  const auto tokens = split_whitespace(line.text);
  if (tokens.empty())
    fail(line.number, "expected a policy such as HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  Header header;
  header.policy = std::string(tokens[0]);
  if (std::find(kPolicies.begin(), kPolicies.end(), tokens[0]) == kPolicies.end())
    fail(line.number, "policy '" + header.policy +
                          "' is not supported; expected HYBRID_TRANSFORMER_FWD_IN_BCKWD, "
                          "HYBRID_TRANSFORMER or DATA");

  static const std::map<std::string_view, std::string> kKeys = {{"model_parallel_NPU_group:", "tp"},
                                                                {"ep:", "ep"},
                                                                {"pp:", "pp"},
                                                                {"vpp:", "vpp"},
                                                                {"ga:", "ga"},
                                                                {"all_gpus:", "all_gpus"},
                                                                {"pp_comm", "pp_comm"},
                                                                {"pp_comm:", "pp_comm"}};
  std::vector<std::string> unknown;
  for (size_t i = 1; i < tokens.size();) {
    const std::string_view token = tokens[i];
    if (token == "checkpoints:" || token == "checkpoint_initiates:") {
      auto list = read_index_list(tokens, i, token, line.number);
      (token == "checkpoints:" ? header.checkpoints : header.triggers) = std::move(list);
      continue;
    }
    const auto key = kKeys.find(token);
    if (key == kKeys.end()) {
      unknown.emplace_back(token);
      ++i;
      continue;
    }
    const auto value_token = i + 1 < tokens.size() ? tokens[i + 1] : std::string_view();
    const auto value = parse_uint64(value_token);
    const bool may_be_zero = key->second == "pp_comm";
    if (!value || (*value == 0 && !may_be_zero) || *value > (uint64_t{1} << 62))
      fail(line.number,
           "expected " + std::string(may_be_zero ? "a size in bytes" : "a positive integer") +
               " after '" + std::string(token) + "', found '" + std::string(value_token) + "'");
    if (header.values.count(key->second))
      warn(line.number, "'" + std::string(token) + "' given twice; using the first value");
    else
      header.values[key->second] = static_cast<int64_t>(*value);
    i += 2;
  }
  if (!unknown.empty()) {
    std::string list;
    for (const auto& u : unknown) {
      list += list.empty() ? "'" : ", '";
      list += u;
      list += "'";
    }
    warn(line.number, "ignored unrecognised header tokens " + list);
  }
  return header;
}

uint64_t Reader::read_number(const Line& line, std::string_view token, int field,
                             std::string_view meaning) const {
  const auto value = parse_uint64(token);
  if (!value)
    fail(line.number, "field " + std::to_string(field) + " (" + std::string(meaning) +
                          "): expected a non-negative integer, found '" + std::string(token) + "'");
  return *value;
}

Phase Reader::read_phase(const Line& line, const std::vector<std::string_view>& fields, int first,
                         CommGroup bare_group, std::string_view column) {
  constexpr uint64_t kMaxNs = 9'000'000'000'000'000;  // keeps picoseconds inside int64
  Phase phase;
  const uint64_t ns =
      read_number(line, fields[first], first + 1, std::string(column) + " compute, ns");
  if (ns > kMaxNs)
    fail(line.number, "field " + std::to_string(first + 1) + " (" + std::string(column) +
                          " compute, ns): expected at most 9e15 ns, found " + std::to_string(ns));
  phase.compute = Time::from_ns(static_cast<int64_t>(ns));
  phase.source_comm_type = std::string(fields[first + 1]);
  phase.source_comm_bytes =
      read_number(line, fields[first + 2], first + 3, std::string(column) + " comm size, bytes");
  if (phase.source_comm_bytes > UINT32_MAX)
    warn(line.number, std::string(column) + " comm size " +
                          std::to_string(phase.source_comm_bytes) +
                          " B does not fit in 32 bits; read as a 64-bit size (a 32-bit reader "
                          "would see " +
                          std::to_string(phase.source_comm_bytes & UINT32_MAX) + " B)");

  const std::string_view type = fields[first + 1];
  if (type == "NONE") return phase;
  static constexpr std::array<std::pair<std::string_view, CollectiveKind>, 4> kKinds = {{
      {"ALLREDUCE", CollectiveKind::AllReduce},
      {"ALLTOALL", CollectiveKind::AllToAll},
      {"ALLGATHER", CollectiveKind::AllGather},
      {"REDUCESCATTER", CollectiveKind::ReduceScatter},
  }};
  const auto kind = std::find_if(kKinds.begin(), kKinds.end(),
                                 [&](const auto& k) { return type.starts_with(k.first); });
  if (kind == kKinds.end()) {
    warn(line.number, std::string(column) + " comm type '" + std::string(type) +
                          "' is not a collective Orrery knows (ALLREDUCE, ALLGATHER, "
                          "REDUCESCATTER, ALLTOALL); no communication modelled, as in SimAI");
    return phase;
  }
  const std::string_view suffix = type.substr(kind->first.size());
  CommGroup group = bare_group;
  if (suffix == "_EP") {
    group = CommGroup::Expert;
  } else if (suffix == "_DP_EP") {
    group = CommGroup::ExpertData;
  } else if (!suffix.empty()) {
    warn(line.number, std::string(column) + " comm type '" + std::string(type) +
                          "': unrecognised suffix '" + std::string(suffix) + "'; modelled as " +
                          std::string(to_string(kind->second)) + " in the " +
                          std::string(to_string(bare_group)) +
                          " group (SimAI's analytical mode costs it as 0 unless it is smaller "
                          "than 1 MiB)");
  }
  if (data_policy_ && column != "wg") {
    warn(line.number, std::string(column) + " comm '" + std::string(type) +
                          "' ignored: the DATA policy communicates only weight gradients");
    return phase;
  }
  if (phase.source_comm_bytes > 0)
    phase.comm = Communication{kind->second, group, phase.source_comm_bytes};
  return phase;
}

Layer Reader::read_record(const Line& line, const std::vector<std::string_view>& fields) {
  if (fields.size() != kFields)
    fail(line.number,
         "expected 12 fields (name, dependency, fwd compute, fwd comm type, fwd comm size, "
         "ig compute, ig comm type, ig comm size, wg compute, wg comm type, wg comm size, "
         "wg update time), found " +
             std::to_string(fields.size()));
  Layer layer;
  layer.name = std::string(fields[0]);
  layer.line = line.number;
  if (!parse_int64(fields[1]))
    fail(line.number,
         "field 2 (dependency): expected an integer, found '" + std::string(fields[1]) + "'");
  layer.forward = read_phase(line, fields, 2, CommGroup::Tensor, "fwd");
  layer.input_grad = read_phase(line, fields, 5, CommGroup::Tensor, "ig");
  layer.weight_grad = read_phase(line, fields, 8, CommGroup::Data, "wg");
  read_number(line, fields[11], 12, "wg update time, ns");
  return layer;
}

bool is_pass_start(const Layer& layer) {
  return layer.name.starts_with("embedding_layer");
}
bool is_iteration_tail(const Layer& layer) {
  return layer.name.starts_with("cross_entropy") || layer.name.starts_with("optimizer");
}

void Reader::split_into_passes(Workload& workload) {
  Program& program = workload.program;
  const auto& layers = program.layers;
  size_t tail = layers.size();
  while (tail > 0 && is_iteration_tail(layers[tail - 1]))
    --tail;
  std::vector<size_t> starts;
  for (size_t i = 0; i < tail; ++i)
    if (is_pass_start(layers[i])) starts.push_back(i);

  if (starts.empty()) {
    program.before = {0, 0};
    program.micro_batches.push_back({0, tail});
    if (tail > 0)
      warn(layers[0].line, "no 'embedding_layer' row marks a micro-batch pass; treating the " +
                               std::to_string(tail) + " rows as one pass");
  } else {
    program.before = {0, starts.front()};
    for (size_t k = 0; k < starts.size(); ++k)
      program.micro_batches.push_back({starts[k], k + 1 < starts.size() ? starts[k + 1] : tail});
  }
  program.after = {tail, layers.size()};

  const auto passes = static_cast<int64_t>(program.micro_batches.size());
  if (passes != workload.parallelism.micro_batches && !simai_compat_) {
    std::string lines;
    for (size_t k = 0; k < starts.size() && k < 8; ++k)
      lines += (k ? ", " : "") + std::to_string(layers[starts[k]].line);
    if (starts.size() > 8) lines += ", ...";
    warn(1, "header says ga: " + std::to_string(workload.parallelism.micro_batches) +
                " but the listing has " + std::to_string(passes) + " micro-batch pass" +
                (passes == 1 ? "" : "es") +
                (lines.empty() ? std::string() : " (starting at lines " + lines + ")") +
                "; the event simulator runs the passes as listed");
  }
}

Workload Reader::read() {
  Workload workload;
  workload.source = path_;
  workload.name = std::filesystem::path(path_).stem().string();
  workload.format = "simai";

  const Header header = read_header(lines_[0]);
  workload.policy = header.policy;
  data_policy_ = header.policy == "DATA";

  auto& par = workload.parallelism;
  const auto value = [&](const std::string& key, int64_t fallback, bool warn_if_missing,
                         const std::string& why) {
    const auto it = header.values.find(key);
    if (it != header.values.end()) return it->second;
    if (warn_if_missing) warn(1, why);
    return fallback;
  };
  par.tp = value("tp", 1, !data_policy_,
                 "header has no 'model_parallel_NPU_group:'; using tensor parallelism 1");
  par.ep = value("ep", 1, !data_policy_, "header has no 'ep:'; using expert parallelism 1");
  par.pp = value("pp", 1, !data_policy_, "header has no 'pp:'; using 1 pipeline stage");
  par.vpp = value("vpp", 1, !data_policy_,
                  "header has no 'vpp:'; using vpp = 1 (SimAI leaves it 0, which makes its "
                  "bubble and total infinite)");
  par.micro_batches = value("ga", 1, !data_policy_, "header has no 'ga:'; using 1 micro-batch");
  // Each degree is at most 2^62, so their product may not fit: it is needed only without
  // all_gpus.
  int64_t implied = 0;
  const bool implied_fits = !__builtin_mul_overflow(par.tp, par.pp, &implied) &&
                            !__builtin_mul_overflow(implied, par.ep, &implied);
  if (!implied_fits && !header.values.count("all_gpus"))
    fail(1, "header has no 'all_gpus:' and tp * pp * ep (" + std::to_string(par.tp) + " x " +
                std::to_string(par.pp) + " x " + std::to_string(par.ep) +
                ") is beyond 64 bits; expected 'all_gpus:' or smaller degrees");
  par.world_size =
      value("all_gpus", implied, true,
            "header has no 'all_gpus:'; using tp * pp * ep = " + std::to_string(implied) + " GPUs");
  if (const auto it = header.values.find("pp_comm"); it != header.values.end()) {
    workload.stage_boundary_bytes = static_cast<Bytes>(it->second);
    if (par.pp == 1 && it->second != 0)
      warn(1, "pp_comm is " + std::to_string(it->second) + " B but there is only one stage");
    if (static_cast<uint64_t>(it->second) > UINT32_MAX)
      warn(1, "pp_comm " + std::to_string(it->second) +
                  " B does not fit in 32 bits; SimAI keeps only the low 32 bits");
  }
  workload.recompute = {header.checkpoints, header.triggers};
  if (header.policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD" &&
      (!header.checkpoints.empty() || !header.triggers.empty()))
    warn(1, "activation checkpoints are only used by HYBRID_TRANSFORMER_FWD_IN_BCKWD; ignored");
  if (header.policy != "HYBRID_TRANSFORMER_FWD_IN_BCKWD") workload.recompute = {};

  if (lines_.size() < 2 || trim(lines_[1].text).empty())
    fail(2, "expected the number of layer records on line 2");
  const auto declared = parse_uint64(trim(lines_[1].text));
  if (!declared)
    fail(2, "expected the number of layer records on line 2, found '" +
                std::string(trim(lines_[1].text)) + "'");
  if (*declared == 0) fail(2, "expected at least one layer record, found a count of 0");

  auto& layers = workload.program.layers;
  std::vector<const Line*> ignored;
  for (size_t i = 2; i < lines_.size(); ++i) {
    const Line& line = lines_[i];
    const auto fields = split_whitespace(line.text);
    if (fields.empty()) continue;
    if (layers.size() == *declared) {
      ignored.push_back(&line);
      continue;
    }
    layers.push_back(read_record(line, fields));
  }
  if (layers.size() < *declared)
    fail(lines_.back().number, "expected " + std::to_string(*declared) +
                                   " layer records (line 2), found " +
                                   std::to_string(layers.size()));
  if (!ignored.empty()) {
    std::string names;
    for (size_t k = 0; k < ignored.size() && k < 6; ++k) {
      const auto fields = split_whitespace(ignored[k]->text);
      names += (k ? ", " : "") + std::string(fields[0]);
    }
    if (ignored.size() > 6) names += ", ...";
    warn(ignored.front()->number,
         std::to_string(ignored.size()) + " record" + (ignored.size() == 1 ? "" : "s") +
             " after the " + std::to_string(*declared) + " declared on line 2 ignored (lines " +
             std::to_string(ignored.front()->number) + "-" +
             std::to_string(ignored.back()->number) + ": " + names +
             "); the count line wins, as in SimAI");
  }
  for (const auto& list : {workload.recompute.checkpoints, workload.recompute.triggers})
    for (const int64_t index : list)
      if (index >= static_cast<int64_t>(layers.size()))
        fail(1, "checkpoint layer index " + std::to_string(index) + " is beyond the " +
                    std::to_string(layers.size()) + " layer records");
  split_into_passes(workload);
  return workload;
}

}  // namespace

bool looks_like_simai_text(std::string_view content) {
  const auto first_newline = content.find('\n');
  if (first_newline == std::string_view::npos) return false;
  const auto tokens = split_whitespace(content.substr(0, first_newline));
  if (tokens.empty()) return false;
  const bool known_policy =
      std::find(kPolicies.begin(), kPolicies.end(), tokens[0]) != kPolicies.end();
  const bool has_simai_keys = std::any_of(tokens.begin(), tokens.end(), [](std::string_view t) {
    return t == "model_parallel_NPU_group:" || t == "all_gpus:" || t == "pp_comm";
  });
  // A known policy or SimAI's header keys are evidence enough: the reader then says precisely
  // what is wrong further down. An unknown all-capitals policy word counts when a record count
  // follows, so that it gets the reader's "not supported" rather than "unknown format".
  if (known_policy || has_simai_keys) return true;
  const bool policy_like = tokens[0].size() >= 2 &&
                           std::all_of(tokens[0].begin(), tokens[0].end(),
                                       [](char c) { return (c >= 'A' && c <= 'Z') || c == '_'; });
  auto rest = content.substr(first_newline + 1);
  const auto second = trim(rest.substr(0, rest.find('\n')));
  return policy_like && parse_uint64(second).has_value();
}

Workload read_simai_text(const std::string& path, std::string_view content,
                         Diagnostics& diagnostics, bool simai_compat) {
  return Reader(path, content, diagnostics, simai_compat).read();
}

}  // namespace orrery
