#include "formats/chakra_et_writer.h"

#include <google/protobuf/util/delimited_message_util.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "chakra_et.pb.h"
#include "core/diagnostics.h"
#include "formats/chakra_et_reader.h"

namespace orrery {
namespace {

namespace pb = chakra_pb;

void add_int(pb::Node& node, const char* name, int64_t value) {
  pb::AttributeProto* a = node.add_attr();
  a->set_name(name);
  a->set_int64_val(value);
}

pb::CollectiveCommType comm_type(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return pb::ALL_REDUCE;
    case CollectiveKind::AllGather:
      return pb::ALL_GATHER;
    case CollectiveKind::ReduceScatter:
      return pb::REDUCE_SCATTER;
    case CollectiveKind::AllToAll:
      return pb::ALL_TO_ALL;
    case CollectiveKind::Broadcast:
      return pb::BROADCAST;
    case CollectiveKind::Reduce:
      return pb::REDUCE;
    case CollectiveKind::SendRecv:
      break;
  }
  throw InputError("--to chakra: a sendrecv collective has no Chakra collective type");
}

pb::NodeType node_type(GraphTaskKind kind) {
  switch (kind) {
    case GraphTaskKind::Compute:
      return pb::COMP_NODE;
    case GraphTaskKind::Memory:
      return pb::MEM_LOAD_NODE;
    case GraphTaskKind::Collective:
      return pb::COMM_COLL_NODE;
    case GraphTaskKind::Send:
      return pb::COMM_SEND_NODE;
    case GraphTaskKind::Recv:
      return pb::COMM_RECV_NODE;
  }
  return pb::INVALID_NODE;
}

const char* node_label(GraphTaskKind kind) {
  switch (kind) {
    case GraphTaskKind::Compute:
      return "compute";
    case GraphTaskKind::Memory:
      return "memory";
    case GraphTaskKind::Collective:
      return "collective";
    case GraphTaskKind::Send:
      return "send";
    case GraphTaskKind::Recv:
      return "recv";
  }
  return "?";
}

// The ranks a collective spans.
int64_t group_size(const GraphProgram& program, const GraphTask& t) {
  return t.group < 0 ? static_cast<int64_t>(program.ranks.size())
                     : static_cast<int64_t>(program.groups[static_cast<size_t>(t.group)].size());
}

pb::Node to_node(const GraphProgram& program, int64_t rank, const RankGraph& g, uint32_t i) {
  const GraphTask& t = g.tasks[i];
  pb::Node node;
  node.set_id(i);
  node.set_name(node_label(t.kind));
  node.set_type(node_type(t.kind));
  for (uint32_t k = t.deps_begin; k < t.deps_end; ++k)
    node.add_ctrl_deps(g.deps[k]);
  if (t.duration) {
    node.set_duration_micros(
        static_cast<uint64_t>(std::llround(static_cast<double>(t.duration->ps()) * 1e-6)));
    add_int(node, "orrery_duration_ps", t.duration->ps());
  }
  pb::AttributeProto* cpu = node.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(false);
  switch (t.kind) {
    case GraphTaskKind::Compute:
    case GraphTaskKind::Memory:
      // A demand, or the work behind a priced duration (read back, the duration wins).
      if (t.has_demand || t.flop > 0 || t.bytes > 0) {
        if (t.kind == GraphTaskKind::Compute) add_int(node, "num_ops", std::llround(t.flop));
        add_int(node, "tensor_size", static_cast<int64_t>(t.bytes));
      }
      break;
    case GraphTaskKind::Collective: {
      add_int(node, "comm_type", comm_type(t.collective));
      const auto n = group_size(program, t);
      add_int(
          node, "comm_size",
          static_cast<int64_t>(t.collective == CollectiveKind::AllGather ? t.bytes / n : t.bytes));
      if (t.group >= 0) {
        pb::AttributeProto* pg = node.add_attr();
        pg->set_name("pg_name");
        pg->set_string_val(program.group_names[static_cast<size_t>(t.group)]);
      }
      break;
    }
    case GraphTaskKind::Send:
    case GraphTaskKind::Recv: {
      const bool send = t.kind == GraphTaskKind::Send;
      add_int(node, "comm_src", send ? rank : t.peer);
      add_int(node, "comm_dst", send ? t.peer : rank);
      add_int(node, "comm_size", static_cast<int64_t>(t.bytes));
      add_int(node, "comm_tag", t.tag);
      break;
    }
  }
  return node;
}

void put(std::ostream& out, const google::protobuf::Message& message) {
  google::protobuf::util::SerializeDelimitedToOstream(message, &out);
}

}  // namespace

void write_chakra_rank(std::ostream& out, const GraphProgram& program, size_t rank,
                       const std::string& name) {
  pb::GlobalMetadata metadata;
  metadata.set_version(kChakraVersion);
  pb::AttributeProto* a = metadata.add_attr();
  a->set_name("workload");
  a->set_string_val(name);
  put(out, metadata);
  const RankGraph& g = program.ranks[rank];
  for (uint32_t i = 0; i < g.tasks.size(); ++i)
    put(out, to_node(program, static_cast<int64_t>(rank), g, i));
}

std::string trace_file_stem(const std::string& name) {
  std::string stem;
  for (const char c : name)
    stem +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  stem.erase(0, stem.find_first_not_of('.'));
  return stem.empty() ? "workload" : stem;
}

void write_chakra_traces(const GraphProgram& program, const std::string& dir,
                         const std::string& name) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError({dir, 0}, "cannot create the output directory: " + ec.message());
  const std::string stem = trace_file_stem(name);
  for (size_t r = 0; r < program.ranks.size(); ++r) {
    const fs::path path = fs::path(dir) / (stem + "." + std::to_string(r) + ".et");
    std::ofstream out(path, std::ios::binary);
    write_chakra_rank(out, program, r, name);
    if (!out) throw InputError({path.string(), 0}, "cannot write the trace");
  }
  if (program.groups.empty()) return;
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (size_t g = 0; g < program.groups.size(); ++g)
    groups[program.group_names[g]] = program.groups[g];
  const fs::path path = fs::path(dir) / "comm_group.json";
  std::ofstream out(path);
  out << groups.dump() << "\n";
  if (!out) throw InputError({path.string(), 0}, "cannot write the process groups");
}

}  // namespace orrery
