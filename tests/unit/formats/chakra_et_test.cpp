// The Chakra ET reader and writer (formats/chakra_et_reader.h, chakra_et_writer.h): ASTRA-sim's
// bundled traces, node types and attributes, and every kind of broken file refused in one line.
#include <gtest/gtest.h>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <map>
#include <sstream>

#include "chakra_et.pb.h"
#include "formats/chakra_et_reader.h"
#include "formats/chakra_et_writer.h"

namespace orrery {
namespace {

namespace pb = chakra_pb;
const std::string kChakra = std::string(ORRERY_SOURCE_DIR) + "/examples/chakra/";

void add_int(pb::Node& n, const std::string& name, int64_t v) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_uint64_val(static_cast<uint64_t>(v));  // any integer type is read
}

pb::Node node(uint64_t id, pb::NodeType type, std::vector<uint64_t> deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_type(type);
  for (const uint64_t d : deps)
    n.add_data_deps(d);
  return n;
}

std::string stream_of(const std::vector<pb::Node>& nodes, const std::string& version = "0.0.4") {
  std::ostringstream out;
  pb::GlobalMetadata m;
  m.set_version(version);
  google::protobuf::util::SerializeDelimitedToOstream(m, &out);
  for (const pb::Node& n : nodes)
    google::protobuf::util::SerializeDelimitedToOstream(n, &out);
  return out.str();
}

RankGraph read(const std::string& bytes, GraphProgram& program) {
  std::istringstream in(bytes);
  Diagnostics d;
  ChakraGroups groups(program);
  return read_chakra_rank(in, "t.0.et", groups, d);
}

std::string error_of(const std::string& bytes) {
  GraphProgram program;
  try {
    read(bytes, program);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraEt, AstraSimAllReduceIsOneCollectiveOfAllRanks) {
  Diagnostics d;
  const Workload w = read_chakra_traces(kChakra + "all_reduce_4npus_1MB", {}, d);
  EXPECT_EQ(w.format, "chakra");
  EXPECT_EQ(w.name, "all_reduce");
  ASSERT_TRUE(w.graph);
  ASSERT_EQ(w.graph->ranks.size(), 4u);
  EXPECT_EQ(w.parallelism.world_size, 4);
  for (const RankGraph& r : w.graph->ranks) {
    ASSERT_EQ(r.tasks.size(), 1u);
    EXPECT_EQ(r.tasks[0].kind, GraphTaskKind::Collective);
    EXPECT_EQ(r.tasks[0].collective, CollectiveKind::AllReduce);
    EXPECT_EQ(r.tasks[0].bytes, Bytes{1} << 20);
    EXPECT_EQ(r.tasks[0].group, -1);
  }
}

// All-gather's comm_size is one rank's share; the IR counts the gathered buffer.
TEST(ChakraEt, AllGatherSizeIsEachRanksShare) {
  Diagnostics d;
  const Workload w = read_chakra_traces(kChakra + "all_gather_8npus_1MB/all_gather.3.et", {}, d);
  EXPECT_EQ(w.graph->ranks.at(5).tasks.at(0).bytes, Bytes{8} << 20);
}

TEST(ChakraEt, NodeTypesAndDependencies) {
  pb::Node comp = node(10, pb::COMP_NODE);
  comp.set_duration_micros(3);
  pb::Node flops = node(11, pb::COMP_NODE, {10});
  add_int(flops, "num_ops", 1000);
  add_int(flops, "tensor_size", 64);
  pb::Node send = node(12, pb::COMM_SEND_NODE, {11});
  add_int(send, "comm_dst", 1);
  add_int(send, "comm_size", 4096);
  add_int(send, "comm_tag", 7);
  pb::Node coll = node(13, pb::COMM_COLL_NODE, {12});
  add_int(coll, "comm_type", pb::REDUCE_SCATTER);
  add_int(coll, "comm_size", 1 << 20);
  pb::AttributeProto* pg = coll.add_attr();
  pg->set_name("pg_name");
  pg->set_string_val("tp");
  pb::Node load = node(14, pb::MEM_LOAD_NODE);
  add_int(load, "tensor_size", 512);
  GraphProgram program;
  const RankGraph g = read(stream_of({coll, send, flops, comp, load}), program);  // out of order
  ASSERT_EQ(g.tasks.size(), 5u);
  // A topological order taking ready nodes in file order: 10 (ready, before the load in the
  // file) frees 11, which comes before the load in the file, and so on to 13; then the load.
  std::vector<uint64_t> ids;
  for (const GraphTask& t : g.tasks)
    ids.push_back(t.node);
  EXPECT_EQ(ids, (std::vector<uint64_t>{10, 11, 12, 13, 14}));
  EXPECT_EQ(g.tasks[0].duration, Time::from_us(3));
  EXPECT_FALSE(g.tasks[1].duration);
  EXPECT_DOUBLE_EQ(compute_demand(g.tasks[1])->flop, 1000);
  EXPECT_EQ(compute_demand(g.tasks[1])->bytes, 64u);
  EXPECT_EQ(compute_demand(g.tasks[1])->kind, KernelClass::Elementwise);
  EXPECT_EQ(g.tasks[2].kind, GraphTaskKind::Send);
  EXPECT_EQ(g.tasks[2].peer, 1);
  EXPECT_EQ(g.tasks[2].tag, 7);
  EXPECT_EQ(g.tasks[3].collective, CollectiveKind::ReduceScatter);
  EXPECT_EQ(program.group_names.at(static_cast<size_t>(g.tasks[3].group)), "tp");
  EXPECT_EQ(g.tasks[4].kind, GraphTaskKind::Memory);
  EXPECT_EQ(compute_demand(g.tasks[4])->bytes, 512u);
  EXPECT_EQ(compute_demand(g.tasks[4])->kind, KernelClass::Copy);
  // Dependencies point at earlier tasks.
  EXPECT_EQ(g.tasks[3].deps_end - g.tasks[3].deps_begin, 1u);
  EXPECT_EQ(g.deps[g.tasks[3].deps_begin], 2u);
}

// Every CollectiveCommType of schema 0.0.4 is either read as the collective it names or refused
// naming it, because a trace of gathers must not run as something else.
TEST(ChakraEt, EveryCollectiveTypeIsReadOrRefusedByName) {
  const std::vector<std::pair<int64_t, CollectiveKind>> read_as = {
      {pb::ALL_REDUCE, CollectiveKind::AllReduce},
      {pb::REDUCE, CollectiveKind::Reduce},
      {pb::ALL_GATHER, CollectiveKind::AllGather},
      {pb::BROADCAST, CollectiveKind::Broadcast},
      {pb::ALL_TO_ALL, CollectiveKind::AllToAll},
      {pb::REDUCE_SCATTER, CollectiveKind::ReduceScatter},
      {pb::BARRIER, CollectiveKind::AllReduce}};
  for (const auto& [type, kind] : read_as) {
    pb::Node coll = node(1, pb::COMM_COLL_NODE);
    add_int(coll, "comm_type", type);
    add_int(coll, "comm_size", 64);
    GraphProgram program;
    const RankGraph g = read(stream_of({coll}), program);
    EXPECT_EQ(g.tasks.at(0).collective, kind) << "comm_type " << type;
    // A barrier moves nothing, whatever size the node gives.
    EXPECT_EQ(g.tasks.at(0).bytes, type == pb::BARRIER ? 0u : 64u) << "comm_type " << type;
  }
  const std::vector<std::pair<int64_t, std::string>> refused = {
      {pb::GATHER, "found 3 (gather, which Orrery does not simulate)"},
      {pb::SCATTER, "found 4 (scatter, which Orrery does not simulate)"},
      {pb::REDUCE_SCATTER_BLOCK, "found 8 (reduce-scatter-block, which Orrery does not simulate)"},
      {10, "found 10 (not a type of schema 0.0.4)"}};
  for (const auto& [type, says] : refused) {
    pb::Node coll = node(7, pb::COMM_COLL_NODE);
    add_int(coll, "comm_type", type);
    add_int(coll, "comm_size", 64);
    const std::string error = error_of(stream_of({coll}));
    EXPECT_NE(error.find("t.0.et: node 7: expected comm_type all-reduce (0)"), std::string::npos)
        << error;
    EXPECT_NE(error.find(says), std::string::npos) << error;
  }
}

TEST(ChakraEt, OtherVersionsAreRefusedNamingTheVersion) {
  EXPECT_NE(error_of(stream_of({}, "0.0.3"))
                .find("t.0.et: expected schema version 0.0.4, found "
                      "'0.0.3'"),
            std::string::npos);
}

TEST(ChakraEt, BrokenFilesNameTheNodeAndTheExpectation) {
  const std::string good = stream_of({node(1, pb::COMP_NODE), node(2, pb::COMP_NODE, {1})});
  EXPECT_NE(error_of(good.substr(0, good.size() - 1)).find("after node 1: truncated message"),
            std::string::npos)
      << error_of(good.substr(0, good.size() - 1));
  EXPECT_NE(error_of(stream_of({node(1, pb::COMP_NODE, {9})}))
                .find("node 1: expected dependency 9 to be a node of this file"),
            std::string::npos);
  EXPECT_NE(error_of(stream_of({node(1, pb::COMP_NODE, {2}), node(2, pb::COMP_NODE, {1})}))
                .find("node 1: expected acyclic dependencies"),
            std::string::npos);
  EXPECT_NE(error_of(stream_of({node(1, pb::COMM_COLL_NODE)}))
                .find("node 1: expected attribute "
                      "'comm_type'"),
            std::string::npos);
  EXPECT_NE(error_of(stream_of({node(1, pb::COMP_NODE), node(1, pb::COMP_NODE)}))
                .find("node 1: expected unique node ids"),
            std::string::npos);
  EXPECT_NE(error_of("").find("expected the global metadata message first"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x05\x0a\x03", 3)).find("truncated message"), std::string::npos);
  // Invalid UTF-8 in a string: protobuf's reason in the one-line error, nothing else printed.
  const std::string utf8 = error_of(std::string("\x07\x0a\x05\xff\xfe\x30\x2e\x34", 9));
  EXPECT_NE(utf8.find("found malformed protobuf (String field 'orrery.chakra_pb.GlobalMetadata."
                      "version' contains invalid UTF-8 data"),
            std::string::npos)
      << utf8;
}

// The writer's files read back as the same graph, exact durations included.
TEST(ChakraEt, WrittenTracesReadBack) {
  GraphProgram p;
  p.groups = {{0, 1}};
  p.group_names = {"dp.0"};
  for (int64_t r = 0; r < 2; ++r) {
    RankGraph& g = p.ranks.emplace_back();
    GraphTask c;
    c.duration = Time::from_ps(1'234'567);
    g.tasks.push_back(c);
    GraphTask a;
    a.kind = GraphTaskKind::Collective;
    a.collective = CollectiveKind::AllGather;
    a.bytes = 2000;
    a.group = 0;
    a.duration = Time::from_ps(99);
    a.deps_begin = 0;
    a.deps_end = 1;
    g.deps.push_back(0);
    g.tasks.push_back(a);
  }
  const std::string dir = ::testing::TempDir() + "/chakra_written";
  write_chakra_traces(p, dir, "w");
  Diagnostics d;
  const Workload w = read_chakra_traces(dir, {}, d);
  ASSERT_EQ(w.graph->ranks.size(), 2u);
  const RankGraph& g = w.graph->ranks[1];
  ASSERT_EQ(g.tasks.size(), 2u);
  EXPECT_EQ(g.tasks[0].duration, Time::from_ps(1'234'567));
  EXPECT_EQ(g.tasks[1].bytes, 2000u);  // 1000 per rank in the file, x 2 ranks
  EXPECT_EQ(g.tasks[1].duration, Time::from_ps(99));
  EXPECT_EQ(w.graph->groups.at(static_cast<size_t>(g.tasks[1].group)),
            (std::vector<int64_t>{0, 1}));
}

// A priced compute task keeps its FLOPs and bytes as num_ops and tensor_size beside its duration,
// because other tools read the work from them; read back, the exact duration still decides.
TEST(ChakraEt, PricedComputeCarriesItsWorkAsAttributes) {
  GraphProgram p;
  RankGraph& g = p.ranks.emplace_back();
  GraphTask c;
  c.duration = Time::from_ps(2'500'000);
  c.flop = 5e9;
  c.bytes = 4096;
  g.tasks.push_back(c);
  std::ostringstream out;
  write_chakra_rank(out, p, 0, "w");
  const std::string bytes = out.str();
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  pb::GlobalMetadata m;
  pb::Node n;
  ASSERT_TRUE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&m, &raw, nullptr));
  ASSERT_TRUE(google::protobuf::util::ParseDelimitedFromZeroCopyStream(&n, &raw, nullptr));
  std::map<std::string, int64_t> attrs;
  for (const pb::AttributeProto& a : n.attr())
    if (a.value_case() == pb::AttributeProto::kInt64Val) attrs[a.name()] = a.int64_val();
  EXPECT_EQ(attrs["num_ops"], 5'000'000'000);
  EXPECT_EQ(attrs["tensor_size"], 4096);
  EXPECT_EQ(attrs["orrery_duration_ps"], 2'500'000);
  EXPECT_EQ(n.duration_micros(), 3u);  // 2.5 us rounded to the nearest microsecond
  GraphProgram back;
  const RankGraph r = read(bytes, back);
  EXPECT_EQ(r.tasks.at(0).duration, Time::from_ps(2'500'000));
  EXPECT_FALSE(r.tasks.at(0).has_demand);
}

}  // namespace
}  // namespace orrery
