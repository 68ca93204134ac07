#include "formats/chakra_et_reader.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <regex>
#include <unordered_map>

#include "chakra_et.pb.h"
#include "formats/protobuf_log_capture.h"

namespace orrery {
namespace {

namespace fs = std::filesystem;
namespace pb = chakra_pb;

// The most nodes one rank's file may hold, and the largest message: beyond them the file is
// refused as a likely mistake (tasks are kept in memory).
constexpr size_t kMaxNodes = size_t{1} << 28;
constexpr uint32_t kMaxMessageBytes = uint32_t{1} << 26;

[[noreturn]] void fail(const std::string& source, const std::string& message) {
  throw InputError({source, 0}, message);
}

std::string node_name(uint64_t id) {
  return "node " + std::to_string(id);
}

const pb::AttributeProto* find_attr(const pb::Node& node, std::string_view name) {
  for (const pb::AttributeProto& a : node.attr())
    if (a.name() == name) return &a;
  return nullptr;
}

// An integer attribute, whatever integer type holds it; nullopt when absent.
std::optional<int64_t> int_attr(const pb::Node& node, std::string_view name,
                                const std::string& source) {
  const pb::AttributeProto* a = find_attr(node, name);
  if (!a) return std::nullopt;
  using V = pb::AttributeProto;
  switch (a->value_case()) {
    case V::kInt32Val:
      return a->int32_val();
    case V::kInt64Val:
      return a->int64_val();
    case V::kUint32Val:
      return a->uint32_val();
    case V::kSint32Val:
      return a->sint32_val();
    case V::kSint64Val:
      return a->sint64_val();
    case V::kFixed32Val:
      return a->fixed32_val();
    case V::kSfixed32Val:
      return a->sfixed32_val();
    case V::kSfixed64Val:
      return a->sfixed64_val();
    case V::kUint64Val:
    case V::kFixed64Val: {
      const uint64_t v = a->value_case() == V::kUint64Val ? a->uint64_val() : a->fixed64_val();
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) break;
      return static_cast<int64_t>(v);
    }
    default:
      break;
  }
  fail(source, node_name(node.id()) + ": expected attribute '" + std::string(name) +
                   "' to hold an integer");
}

int64_t nonnegative(const pb::Node& node, std::string_view name, const std::string& source,
                    std::optional<int64_t> value) {
  if (value && *value < 0)
    fail(source, node_name(node.id()) + ": expected attribute '" + std::string(name) +
                     "' >= 0, found " + std::to_string(*value));
  return value.value_or(0);
}

int64_t required_int(const pb::Node& node, std::string_view name, const std::string& source,
                     const std::string& what) {
  const auto v = int_attr(node, name, source);
  if (!v)
    fail(source,
         node_name(node.id()) + ": expected attribute '" + std::string(name) + "' (" + what + ")");
  return nonnegative(node, name, source, v);
}

// The duration a node gives: Orrery's exact picoseconds, else (compute and memory nodes only;
// communication is priced by the network model) Chakra's microseconds.
std::optional<Time> given_duration(const pb::Node& node, const std::string& source) {
  if (const auto ps = int_attr(node, "orrery_duration_ps", source))
    return Time::from_ps(nonnegative(node, "orrery_duration_ps", source, ps));
  const bool communication = node.type() == pb::COMM_COLL_NODE ||
                             node.type() == pb::COMM_SEND_NODE || node.type() == pb::COMM_RECV_NODE;
  if (node.duration_micros() > 0 && !communication) {
    if (node.duration_micros() > static_cast<uint64_t>(Time::max().ps() / 1'000'000))
      fail(source, node_name(node.id()) + ": expected duration_micros below 9.2e12, found " +
                       std::to_string(node.duration_micros()));
    return Time::from_ps(static_cast<int64_t>(node.duration_micros()) * 1'000'000);
  }
  return std::nullopt;
}

std::optional<CollectiveKind> collective_kind(int64_t type) {
  switch (type) {
    case pb::ALL_REDUCE:
      return CollectiveKind::AllReduce;
    case pb::REDUCE:
      return CollectiveKind::Reduce;
    case pb::ALL_GATHER:
      return CollectiveKind::AllGather;
    case pb::BROADCAST:
      return CollectiveKind::Broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveKind::AllToAll;
    case pb::REDUCE_SCATTER:
      return CollectiveKind::ReduceScatter;
    case pb::BARRIER:
      return CollectiveKind::AllReduce;  // of no bytes: the latency of a synchronisation
    default:
      return std::nullopt;
  }
}

// The schema's name of a type Orrery does not simulate, for the refusal.
std::string unsimulated_type(int64_t type) {
  switch (type) {
    case pb::GATHER:
      return std::to_string(type) + " (gather, which Orrery does not simulate)";
    case pb::SCATTER:
      return std::to_string(type) + " (scatter, which Orrery does not simulate)";
    case pb::REDUCE_SCATTER_BLOCK:
      return std::to_string(type) + " (reduce-scatter-block, which Orrery does not simulate)";
    default:
      return std::to_string(type) + " (not a type of schema 0.0.4)";
  }
}

void read_collective(const pb::Node& node, const std::string& source, ChakraGroups& groups,
                     GraphTask& t) {
  const int64_t type = required_int(node, "comm_type", source, "the collective, e.g. 0 all-reduce");
  const auto kind = collective_kind(type);
  if (!kind)
    fail(source, node_name(node.id()) +
                     ": expected comm_type all-reduce (0), reduce (1), "
                     "all-gather (2), broadcast (5), all-to-all (6), "
                     "reduce-scatter (7) or barrier (9), found " +
                     unsimulated_type(type));
  t.collective = *kind;
  t.bytes = type == pb::BARRIER
                ? 0
                : static_cast<Bytes>(required_int(node, "comm_size", source, "bytes"));
  if (const pb::AttributeProto* pg = find_attr(node, "pg_name")) {
    if (pg->value_case() != pb::AttributeProto::kStringVal)
      fail(source, node_name(node.id()) + ": expected attribute 'pg_name' to hold a string");
    if (!pg->string_val().empty()) t.group = groups.index(pg->string_val());
  }
}

void read_point_to_point(const pb::Node& node, const std::string& source, GraphTask& t) {
  const bool send = t.kind == GraphTaskKind::Send;
  const char* peer = send ? "comm_dst" : "comm_src";
  t.peer = required_int(node, peer, source, send ? "the receiving rank" : "the sending rank");
  t.bytes = static_cast<Bytes>(required_int(node, "comm_size", source, "bytes"));
  t.tag = nonnegative(node, "comm_tag", source, int_attr(node, "comm_tag", source));
}

// `untimed` counts compute nodes that give neither a duration nor a size.
GraphTask translate(const pb::Node& node, const std::string& source, ChakraGroups& groups,
                    size_t& untimed) {
  GraphTask t;
  t.node = node.id();
  t.duration = given_duration(node, source);
  switch (node.type()) {
    case pb::METADATA_NODE:
      t.duration = Time::zero();
      break;
    case pb::COMP_NODE: {
      if (t.duration) break;
      const auto flop = int_attr(node, "num_ops", source);
      const auto bytes = int_attr(node, "tensor_size", source);
      if (!flop && !bytes) {
        t.duration = Time::zero();
        ++untimed;
        break;
      }
      t.has_demand = true;
      t.flop = static_cast<double>(nonnegative(node, "num_ops", source, flop));
      t.bytes = static_cast<Bytes>(nonnegative(node, "tensor_size", source, bytes));
      break;
    }
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE:
      t.kind = GraphTaskKind::Memory;
      t.bytes = static_cast<Bytes>(
          nonnegative(node, "tensor_size", source, int_attr(node, "tensor_size", source)));
      t.has_demand = !t.duration;
      break;
    case pb::COMM_COLL_NODE:
      t.kind = GraphTaskKind::Collective;
      read_collective(node, source, groups, t);
      break;
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE:
      t.kind = node.type() == pb::COMM_SEND_NODE ? GraphTaskKind::Send : GraphTaskKind::Recv;
      read_point_to_point(node, source, t);
      break;
    default:
      fail(source, node_name(node.id()) +
                       ": expected a node type of schema 0.0.4 (METADATA 1, MEM_LOAD 2, "
                       "MEM_STORE 3, COMP 4, COMM_SEND 5, COMM_RECV 6, COMM_COLL 7), found " +
                       std::to_string(static_cast<int>(node.type())));
  }
  return t;
}

// What came before the next message, for errors: the metadata, or the last node's id.
std::string after(const std::optional<uint64_t>& last) {
  return last ? "after " + node_name(*last) : "after the global metadata";
}

// Reads the next length-delimited message; false at the end of the stream. `where()` names what
// came before, for errors (formatted only then).
template <class Where>
bool next_message(google::protobuf::io::ZeroCopyInputStream& raw, google::protobuf::Message& msg,
                  const std::string& source, Where&& where) {
  google::protobuf::io::CodedInputStream in(&raw);
  const void* data = nullptr;
  int size = 0;
  if (!in.GetDirectBufferPointer(&data, &size)) return false;
  uint32_t length = 0;
  if (!in.ReadVarint32(&length))
    fail(source, where() + ": expected the length of the next message, found a truncated varint");
  if (length > kMaxMessageBytes)
    fail(source, where() + ": expected a message of at most 64 MiB, found a length of " +
                     std::to_string(length) + " bytes");
  const auto limit = in.PushLimit(static_cast<int>(length));
  const bool parsed = msg.ParseFromCodedStream(&in);
  if (in.BytesUntilLimit() > 0 && !parsed)
    fail(source, where() + ": truncated message: expected " + std::to_string(length) +
                     " bytes, the file ends first");
  if (!parsed || !in.ConsumedEntireMessage()) {
    const std::string library = ProtobufLogCapture::message();
    fail(source, where() + ": expected a " + msg.GetTypeName() + " message of " +
                     std::to_string(length) + " bytes, found malformed protobuf" +
                     (library.empty() ? "" : " (" + library + ")"));
  }
  in.PopLimit(limit);
  return true;
}

// The nodes as read: tasks in file order, their dependencies as ids ([deps_begin, deps_end) of
// each task indexes `dep_ids`).
struct ReadNodes {
  std::vector<GraphTask> tasks;
  std::vector<uint64_t> dep_ids;
};

// Resolves dependency ids and puts the nodes in a topological order (file order where free).
RankGraph order_nodes(const ReadNodes& read, const std::string& source) {
  const std::vector<GraphTask>& nodes = read.tasks;
  std::unordered_map<uint64_t, uint32_t> index;
  index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i)
    if (!index.emplace(nodes[i].node, static_cast<uint32_t>(i)).second)
      fail(source, node_name(nodes[i].node) +
                       ": expected unique node ids, found a second "
                       "node with this id");
  // Dependencies as positions in file order, and successor lists in compressed form.
  std::vector<uint32_t> dep_index(read.dep_ids.size());
  std::vector<uint32_t> waiting(nodes.size(), 0);
  std::vector<uint32_t> successor_begin(nodes.size() + 1, 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (uint32_t k = nodes[i].deps_begin; k < nodes[i].deps_end; ++k) {
      const auto it = index.find(read.dep_ids[k]);
      if (it == index.end())
        fail(source, node_name(nodes[i].node) + ": expected dependency " +
                         std::to_string(read.dep_ids[k]) +
                         " to be a node of this file; there is none");
      if (it->second == i)
        fail(source, node_name(nodes[i].node) + ": expected no dependency on itself");
      dep_index[k] = it->second;
      ++successor_begin[it->second + 1];
      ++waiting[i];
    }
  for (size_t i = 0; i < nodes.size(); ++i)
    successor_begin[i + 1] += successor_begin[i];
  std::vector<uint32_t> successors(successor_begin.back());
  std::vector<uint32_t> fill(successor_begin.begin(), successor_begin.end() - 1);
  for (uint32_t i = 0; i < nodes.size(); ++i)
    for (uint32_t k = nodes[i].deps_begin; k < nodes[i].deps_end; ++k)
      successors[fill[dep_index[k]]++] = i;
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<uint32_t> position(nodes.size(), 0);
  std::vector<uint32_t> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    const uint32_t i = ready.top();
    ready.pop();
    position[i] = static_cast<uint32_t>(order.size());
    order.push_back(i);
    for (uint32_t k = successor_begin[i]; k < successor_begin[i + 1]; ++k)
      if (--waiting[successors[k]] == 0) ready.push(successors[k]);
  }
  if (order.size() != nodes.size()) {
    uint32_t stuck = 0;
    while (waiting[stuck] == 0)
      ++stuck;
    fail(source, node_name(nodes[stuck].node) +
                     ": expected acyclic dependencies; this node is on or behind a cycle");
  }
  RankGraph g;
  g.source = source;
  g.tasks.reserve(nodes.size());
  g.deps.reserve(read.dep_ids.size());
  for (const uint32_t i : order) {
    GraphTask t = nodes[i];
    t.deps_begin = static_cast<uint32_t>(g.deps.size());
    for (uint32_t k = nodes[i].deps_begin; k < nodes[i].deps_end; ++k)
      g.deps.push_back(position[dep_index[k]]);
    std::sort(g.deps.begin() + t.deps_begin, g.deps.end());
    g.deps.erase(std::unique(g.deps.begin() + t.deps_begin, g.deps.end()), g.deps.end());
    t.deps_end = static_cast<uint32_t>(g.deps.size());
    g.tasks.push_back(t);
  }
  return g;
}

// The trace files of a set: (rank, path), ranks 0 .. n-1 each once.
std::vector<std::string> trace_files(const std::string& path, std::string& stem) {
  static const std::regex pattern(R"((.+)\.(\d+)\.et)");
  fs::path dir;
  std::string prefix;
  std::error_code ec;
  std::smatch m;
  const std::string file = fs::path(path).filename().string();
  if (fs::is_directory(path, ec)) {
    dir = path;
  } else if (std::regex_match(file, m, pattern)) {
    dir = fs::path(path).parent_path();
    prefix = m[1];
  } else {
    dir = fs::path(path).parent_path();
    prefix = file;
  }
  if (dir.empty()) dir = ".";
  std::map<int64_t, std::string> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, m, pattern) || (!prefix.empty() && m[1] != prefix)) continue;
    if (!stem.empty() && m[1] != stem)
      fail(path, "expected the traces of one workload, found '" + stem + ".*.et' and '" +
                     m[1].str() + ".*.et'; name one as PATH/NAME.0.et");
    stem = m[1];
    const std::string digits = m[2];
    if (digits.size() > 7) fail(entry.path().string(), "expected a rank below 10^7");
    found[std::stoll(digits)] = entry.path().string();
  }
  if (found.empty()) fail(path, "expected Chakra trace files NAME.RANK.et; found none");
  std::vector<std::string> files;
  for (const auto& [rank, file_path] : found) {
    if (rank != static_cast<int64_t>(files.size()))
      fail((dir / (stem + "." + std::to_string(files.size()) + ".et")).string(),
           "expected the trace of rank " + std::to_string(files.size()) + " (ranks run from 0 to " +
               std::to_string(found.rbegin()->first) + "); no such file");
    files.push_back(file_path);
  }
  return files;
}

// Members of every named group from the JSON file.
void read_groups(const std::string& path, GraphProgram& program, ChakraGroups& groups) {
  std::ifstream in(path);
  if (!in) fail(path, "cannot open the process-group file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("expected JSON {\"group id\": [ranks...]}: ") + e.what());
  }
  if (!j.is_object()) fail(path, "expected a JSON object {\"group id\": [ranks...]}");
  const auto ranks = static_cast<int64_t>(program.ranks.size());
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_array() || it.value().empty())
      fail(path, "group '" + it.key() + "': expected a non-empty list of ranks");
    std::vector<int64_t> members;
    for (const auto& r : it.value()) {
      if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= ranks)
        fail(path, "group '" + it.key() + "': expected ranks from 0 to " +
                       std::to_string(ranks - 1) + " (the traces' ranks), found " + r.dump());
      members.push_back(r.get<int64_t>());
    }
    std::sort(members.begin(), members.end());
    if (std::adjacent_find(members.begin(), members.end()) != members.end())
      fail(path, "group '" + it.key() + "': expected each rank once");
    program.groups[static_cast<size_t>(groups.index(it.key()))] = std::move(members);
  }
}

// Every named group has members, and every rank that uses a group is one of them.
void check_groups(const GraphProgram& program, const std::string& groups_file) {
  for (size_t r = 0; r < program.ranks.size(); ++r)
    for (const GraphTask& t : program.ranks[r].tasks) {
      if (t.kind != GraphTaskKind::Collective || t.group < 0) continue;
      const auto& members = program.groups[static_cast<size_t>(t.group)];
      const std::string& name = program.group_names[static_cast<size_t>(t.group)];
      if (members.empty())
        fail(program.ranks[r].source,
             node_name(t.node) + ": expected process group '" + name + "' in " +
                 (groups_file.empty() ? std::string("a group file (--comm-groups, or "
                                                    "comm_group.json beside the traces)")
                                      : groups_file) +
                 "; it is not there");
      if (!std::binary_search(members.begin(), members.end(), static_cast<int64_t>(r)))
        fail(program.ranks[r].source, node_name(t.node) + ": expected rank " + std::to_string(r) +
                                          " to be a member of process group '" + name + "'");
    }
}

}  // namespace

bool is_chakra_trace_path(const std::string& path) {
  static const std::regex pattern(R"(.+\.\d+\.et)");
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (std::regex_match(entry.path().filename().string(), pattern)) return true;
    return false;
  }
  if (std::regex_match(fs::path(path).filename().string(), pattern)) return true;
  return !fs::exists(path, ec) && fs::exists(path + ".0.et", ec);
}

int32_t ChakraGroups::index(const std::string& name) {
  const auto [it, added] =
      index_.try_emplace(name, static_cast<int32_t>(program_.group_names.size()));
  if (added) {
    program_.group_names.push_back(name);
    program_.groups.emplace_back();
  }
  return it->second;
}

RankGraph read_chakra_rank(std::istream& in, const std::string& source, ChakraGroups& groups,
                           Diagnostics& diagnostics) {
  const ProtobufLogCapture log;  // what the library rejects goes into the error instead
  google::protobuf::io::IstreamInputStream raw(&in);
  pb::GlobalMetadata metadata;
  if (!next_message(raw, metadata, source, [] { return std::string("the start of the file"); }))
    fail(source, "expected the global metadata message first; the file is empty");
  if (metadata.version() != kChakraVersion)
    fail(source, "expected schema version " + std::string(kChakraVersion) + ", found '" +
                     metadata.version() + "'");
  ReadNodes nodes;
  pb::Node node;
  std::optional<uint64_t> last;
  size_t untimed = 0;
  while (next_message(raw, node, source, [&] { return after(last); })) {
    if (nodes.tasks.size() >= kMaxNodes) fail(source, "expected at most 2^28 nodes per rank");
    GraphTask& t = nodes.tasks.emplace_back(translate(node, source, groups, untimed));
    t.deps_begin = static_cast<uint32_t>(nodes.dep_ids.size());
    nodes.dep_ids.insert(nodes.dep_ids.end(), node.ctrl_deps().begin(), node.ctrl_deps().end());
    nodes.dep_ids.insert(nodes.dep_ids.end(), node.data_deps().begin(), node.data_deps().end());
    t.deps_end = static_cast<uint32_t>(nodes.dep_ids.size());
    last = node.id();
  }
  if (untimed > 0)
    diagnostics.warn({source, 0}, std::to_string(untimed) +
                                      " compute node(s) give no duration, num_ops or "
                                      "tensor_size; they take no time");
  return order_nodes(nodes, source);
}

Workload read_chakra_traces(const std::string& path, const ReaderOptions& options,
                            Diagnostics& diagnostics) {
  std::string stem;
  const std::vector<std::string> files = trace_files(path, stem);
  Workload w;
  w.name = stem;
  w.source = path;
  w.format = "chakra";
  GraphProgram& program = w.graph.emplace();
  ChakraGroups groups(program);
  program.ranks.reserve(files.size());
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail(file, "cannot open the trace");
    program.ranks.push_back(read_chakra_rank(in, file, groups, diagnostics));
  }
  std::string groups_file = options.comm_groups;
  if (groups_file.empty()) {
    const fs::path beside = fs::path(files.front()).parent_path() / "comm_group.json";
    std::error_code ec;
    if (fs::exists(beside, ec)) groups_file = beside.string();
  }
  if (!groups_file.empty()) read_groups(groups_file, program, groups);
  check_groups(program, groups_file);
  const auto ranks = static_cast<int64_t>(files.size());
  for (RankGraph& rank : program.ranks)
    for (GraphTask& t : rank.tasks) {
      if ((t.kind == GraphTaskKind::Send || t.kind == GraphTaskKind::Recv) && t.peer >= ranks)
        fail(rank.source, node_name(t.node) + ": expected a peer rank from 0 to " +
                              std::to_string(ranks - 1) + ", found " + std::to_string(t.peer));
      // Chakra's all-gather size is one rank's share; Orrery's the gathered buffer.
      if (t.kind == GraphTaskKind::Collective && t.collective == CollectiveKind::AllGather) {
        const auto members =
            t.group < 0 ? ranks
                        : static_cast<int64_t>(program.groups[static_cast<size_t>(t.group)].size());
        if (t.bytes > std::numeric_limits<Bytes>::max() / static_cast<Bytes>(members))
          fail(rank.source, node_name(t.node) + ": expected comm_size x ranks to fit 64 bits");
        t.bytes *= static_cast<Bytes>(members);
      }
    }
  w.parallelism.world_size = ranks;
  return w;
}

}  // namespace orrery
