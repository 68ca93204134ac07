#include "formats/dfmodel_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "formats/workload_reader.h"

namespace orrery {
namespace {

const std::string kSeed = ORRERY_SOURCE_DIR "/examples/dfmodel/gpt1t_pp128_dp32_4096chips.txt";

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A minimal protobuf wire-format encoder, written from the wire format's definition and
// DFModel's field numbers, independent of Orrery's .proto: it checks that binary files written
// by DFModel read field by field.
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  s += static_cast<char>(v);
  return s;
}
std::string int_field(int field, int64_t v) {
  return varint(static_cast<uint64_t>(field) << 3) + varint(static_cast<uint64_t>(v));
}
std::string float_field(int field, float v) {
  char bytes[4];
  std::memcpy(bytes, &v, 4);  // little-endian on the machines Orrery builds for
  return varint((static_cast<uint64_t>(field) << 3) | 5) + std::string(bytes, 4);
}
std::string message_field(int field, const std::string& body) {
  return varint((static_cast<uint64_t>(field) << 3) | 2) + varint(body.size()) + body;
}

std::string binary_dse() {
  const std::string simd = int_field(1, 1) + int_field(2, 64) + int_field(4, 32) +
                           float_field(6, 4096) + float_field(9, 4096) + int_field(12, 5) +
                           int_field(20, 4) + float_field(100, 128);
  const std::string kernel_a = message_field(1, "A") + int_field(2, 1) + int_field(5, 1) +
                               int_field(6, 2) + message_field(9, simd);
  const std::string gemm = int_field(1, 1) + int_field(2, 16) + int_field(3, 64) +
                           int_field(4, 32) + float_field(6, 4096) + float_field(8, 2048) +
                           float_field(9, 1024) + int_field(12, 3) + int_field(13, 1) +
                           float_field(14, 1024) + int_field(16, 16) + int_field(17, 32) +
                           int_field(18, 8) + int_field(20, 4);
  const std::string kernel_b = message_field(1, "B") + int_field(2, 2) + int_field(3, 1) +
                               int_field(4, 1) + int_field(5, 2) + int_field(6, 1) +
                               message_field(7, gemm);
  const std::string edge = int_field(1, 1) + int_field(2, 2) + int_field(6, 2) +
                           float_field(7, 4096) + int_field(10, 7) + message_field(11, "A") +
                           message_field(12, "B");
  const std::string graph =
      message_field(1, kernel_a) + message_field(1, kernel_b) + message_field(2, edge);
  const std::string accelerator = int_field(2, 8) + int_field(3, 4) + int_field(4, 2) +
                                  float_field(5, 1e6f) + float_field(10, 1.41f);
  const std::string torus = int_field(100, 2) + int_field(101, 2) + float_field(102, 10) +
                            float_field(103, 20) + message_field(104, "PP") +
                            message_field(105, "DP");
  const std::string memory = float_field(1, 100) + float_field(2, 1e9f);
  const std::string system = int_field(1, 4) + message_field(2, accelerator) +
                             message_field(7, torus) + message_field(100, memory);
  std::string cost;
  for (int f = 1; f <= 10; ++f)
    cost += float_field(f, static_cast<float>(f) + 0.5f);
  const std::string llm = int_field(1, 64) + int_field(2, 16) + int_field(3, 4) + int_field(4, 32) +
                          int_field(5, 2) + int_field(11, 8) + int_field(12, 1) + int_field(13, 4);
  // Field 16 = 1: the earlier `perfect_overlap: true` (bool) and the later PERFECT_OVERLAP.
  const std::string execution = message_field(7, llm) + int_field(14, 2) + int_field(15, 3) +
                                int_field(16, 1) + float_field(17, 0.9f) + int_field(18, 2);
  const std::string gurobi = int_field(1, 3) + float_field(2, 0.001f) + int_field(3, 60);
  return message_field(1, graph) + message_field(2, system) + message_field(3, cost) +
         message_field(4, execution) + message_field(5, gurobi);
}

std::string error_of(const std::string& text) {
  Diagnostics d;
  try {
    read_dfmodel("d.txt", text, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

constexpr const char* kMinimal = R"(dataflow_graph {
  kernels {
    name: "A"
    id: 1
    fwd_bwd: FWD
    type: SIMD
    elementwise_input1 { outer: 1 M: 8 N: 4 output_tensor_size: 64.0 tiling: N_TILING }
  }
}
system {
  num_chip: 2
  accelerator { core: 1 systolic_width: 1 systolic_height: 1 sram_cap: 1000.0 freq: 1.0 }
  r { x: 2 link_bw_x: 10.0 par_x: "DP" }
  memory { dram_bw: 100.0 dram_cap: 1000000.0 }
}
cost { link_unit_price: 1.0 }
)";

TEST(DfmodelReader, SeedTextKernelsConnectionsAndFloat32Values) {
  Diagnostics d;
  const DataflowProblem p = read_dfmodel(kSeed, slurp(kSeed), d);
  ASSERT_EQ(p.kernels.size(), 41u);
  ASSERT_EQ(p.edges.size(), 53u);
  EXPECT_EQ(p.name, "gpt1t_pp128_dp32_4096chips");

  const DataflowKernel& q = p.kernels[2];
  EXPECT_EQ(q.name, "Q");
  EXPECT_EQ(q.id, 3);
  EXPECT_EQ(q.line, 38);  // the line of its `kernels {`
  EXPECT_EQ(q.variant, KernelVariant::GemmInputWeight);
  EXPECT_EQ(q.unit, KernelUnit::Systolic);
  EXPECT_FALSE(q.backward);
  EXPECT_EQ(q.outer, 160);
  EXPECT_EQ(q.m, 160);
  EXPECT_EQ(q.k, 25600);
  EXPECT_EQ(q.n, 2048);
  EXPECT_EQ(q.sharding, TensorAxis::Outer);
  EXPECT_EQ(q.tiling, TensorAxis::N);
  EXPECT_EQ(q.weight_bytes, 1310720000.0);
  EXPECT_EQ(q.shard_outer_m, 25600);

  // 160 * 2048 * 2048 * 2 = 1,342,177,280 is stored as the float32 1342177280 (printed
  // 1342177300.0 by DFModel's Python).
  EXPECT_EQ(p.kernels[5].output_bytes, static_cast<double>(1342177280.0f));
  const DataflowKernel& wu = p.kernels[35];
  EXPECT_EQ(wu.name, "FFN1_bwd_weight_update");
  EXPECT_TRUE(wu.backward);
  EXPECT_EQ(wu.variant, KernelVariant::GemmInputInput);
  EXPECT_EQ(wu.tiling, TensorAxis::K);
  EXPECT_EQ(wu.collective, DataflowCollective::AllReducePeriodic);
  EXPECT_EQ(wu.collective_bytes, 5242880000.0);
  EXPECT_EQ(p.kernels[11].variant, KernelVariant::ElementwiseInputInput);  // Add_1
  EXPECT_EQ(p.kernels[0].config, 0);  // omitted by proto3 printing: 0

  const DataflowEdge& residual = p.edges[13];
  EXPECT_EQ(residual.id, 14);
  EXPECT_EQ(residual.from_id, 1);
  EXPECT_EQ(residual.to_id, 12);
  EXPECT_EQ(residual.buffer_depth, 10);
  EXPECT_EQ(residual.from_name, "Add_Prev_Layer");

  const DataflowSystem& s = p.system;
  EXPECT_EQ(s.chips, 4096);
  EXPECT_EQ(s.cores, 432);
  EXPECT_EQ(s.freq_ghz, static_cast<double>(1.41f));  // 1.40999996662..., not 1.41
  EXPECT_EQ(s.sram_bytes, static_cast<double>(88080384.0f));
  EXPECT_EQ(s.topology, "r_r");
  ASSERT_EQ(s.dimensions.size(), 2u);
  EXPECT_EQ(s.dimensions[0].size, 128);
  EXPECT_EQ(s.dimensions[0].role, ParallelRole::Pipeline);
  EXPECT_EQ(s.dimensions[1].role, ParallelRole::Data);
  EXPECT_EQ(s.dimensions[1].link_gbps, 25.0);
  EXPECT_EQ(s.dram_gbps, 2039.0);
  EXPECT_EQ(p.cost.chip_price, 16522.25);
  EXPECT_EQ(p.cost.dram_power, static_cast<double>(0.16248f));
  EXPECT_EQ(p.cost.link_power[2], static_cast<double>(0.052f));

  EXPECT_EQ(p.run.style, ExecutionStyle::KernelByKernel);
  EXPECT_EQ(p.run.overlap, OverlapStyle::None);
  EXPECT_EQ(p.run.compute_util, static_cast<double>(0.9f));
  EXPECT_EQ(p.run.word_bytes, 2);
  ASSERT_TRUE(p.run.llm);
  EXPECT_EQ(p.run.llm->hidden, 25600);
  EXPECT_EQ(p.run.llm->layers, 128);
  EXPECT_EQ(p.run.llm->global_batch, 3072);
  EXPECT_EQ(p.run.llm->micro_batch, 1);
  EXPECT_EQ(p.run.llm->tile_size, 0);
  EXPECT_EQ(p.limits.threads, 144);
  EXPECT_EQ(p.limits.time_limit_s, 1200);
  EXPECT_TRUE(d.warnings().empty());
}

TEST(DfmodelReader, BinaryFilesUseDfmodelFieldNumbers) {
  const std::string bytes = binary_dse();
  EXPECT_TRUE(looks_like_dfmodel_binary(bytes));
  EXPECT_FALSE(looks_like_dfmodel_text(bytes));
  Diagnostics d;
  const DataflowProblem p = read_dfmodel("d.pb", bytes, d);
  ASSERT_EQ(p.kernels.size(), 2u);
  const DataflowKernel& a = p.kernels[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.variant, KernelVariant::Elementwise);
  EXPECT_EQ(a.unit, KernelUnit::Simd);
  EXPECT_EQ(a.m, 64);
  EXPECT_EQ(a.n, 32);
  EXPECT_EQ(a.sharding, TensorAxis::None);
  EXPECT_EQ(a.tiling, TensorAxis::N);
  EXPECT_EQ(a.memory_bytes, 128.0);
  EXPECT_EQ(a.line, 0);  // binary files have no lines
  const DataflowKernel& b = p.kernels[1];
  EXPECT_EQ(b.topological_number, 1);
  EXPECT_EQ(b.config, 1);
  EXPECT_TRUE(b.backward);
  EXPECT_EQ(b.variant, KernelVariant::GemmInputWeight);
  EXPECT_EQ(b.k, 64);
  EXPECT_EQ(b.weight_bytes, 2048.0);
  EXPECT_EQ(b.sharding, TensorAxis::K);
  EXPECT_EQ(b.collective, DataflowCollective::AllReduce);
  EXPECT_EQ(b.shard_outer_m, 16);
  EXPECT_EQ(b.shard_k, 32);
  EXPECT_EQ(b.shard_n, 8);
  ASSERT_EQ(p.edges.size(), 1u);
  EXPECT_EQ(p.edges[0].id, 7);
  EXPECT_EQ(p.edges[0].buffer_depth, 2);
  EXPECT_EQ(p.edges[0].to_name, "B");
  EXPECT_EQ(p.system.topology, "r_r");
  EXPECT_EQ(p.system.systolic_height, 2);
  EXPECT_EQ(p.system.freq_ghz, static_cast<double>(1.41f));
  EXPECT_EQ(p.system.dimensions[1].link_gbps, 20.0);
  EXPECT_EQ(p.system.dimensions[0].role, ParallelRole::Pipeline);
  EXPECT_EQ(p.system.dram_bytes, static_cast<double>(1e9f));
  EXPECT_EQ(p.cost.link_price, 1.5);
  EXPECT_EQ(p.cost.chip_power, 10.5);
  EXPECT_EQ(p.run.style, ExecutionStyle::KernelByKernel);
  EXPECT_EQ(p.run.num_config, 3);
  EXPECT_EQ(p.run.overlap, OverlapStyle::Perfect);
  EXPECT_EQ(p.run.llm->tile_size, 4);
  EXPECT_EQ(p.limits.threads, 3);
  EXPECT_EQ(p.limits.time_limit_s, 60);
}

TEST(DfmodelReader, BothSpellingsOfRunBlockAndOverlap) {
  const std::string early = std::string(kMinimal) +
                            "miscellany { llm { hidden_dim: 8 seq_len: 4 num_layer: 1 "
                            "global_batch_size: 2 } execution_style: DATAFLOW "
                            "perfect_overlap: true word: 2 }\n";
  const std::string late =
      std::string(kMinimal) +
      "execution { llm { hidden_dim: 8 seq_len: 4 num_layer: 1 "
      "global_batch_size: 2 } execution_style: KERNEL_BY_KERNEL "
      "overlap: OVERLAP_COMPUTE_MEMORY word: 2 separate_rs_ag_for_ar: true }\n";
  Diagnostics d;
  const DataflowProblem a = read_dfmodel("a.txt", early, d);
  EXPECT_EQ(a.run.style, ExecutionStyle::Dataflow);
  EXPECT_EQ(a.run.overlap, OverlapStyle::Perfect);
  EXPECT_EQ(a.run.line, 17);
  const DataflowProblem b = read_dfmodel("b.txt", late, d);
  EXPECT_EQ(b.run.style, ExecutionStyle::KernelByKernel);
  EXPECT_EQ(b.run.overlap, OverlapStyle::ComputeMemory);
  EXPECT_TRUE(b.run.separate_rs_ag_for_ar);

  const std::string both = std::string(kMinimal) +
                           "execution { llm { hidden_dim: 8 } execution_style: DATAFLOW }\n"
                           "miscellany { llm { hidden_dim: 8 } execution_style: DATAFLOW }\n";
  EXPECT_EQ(error_of(both),
            "d.txt:18: expected one run block, found both execution and miscellany");
}

TEST(DfmodelReader, AllElevenTopologies) {
  const std::vector<std::pair<std::string, std::vector<LinkKind>>> topologies = {
      {"r", {LinkKind::Ring}},
      {"sw", {LinkKind::Switch}},
      {"fc", {LinkKind::FullMesh}},
      {"r_r", {LinkKind::Ring, LinkKind::Ring}},
      {"r_fc", {LinkKind::Ring, LinkKind::FullMesh}},
      {"r_sw", {LinkKind::Ring, LinkKind::Switch}},
      {"sw_sw", {LinkKind::Switch, LinkKind::Switch}},
      {"fc_fc", {LinkKind::FullMesh, LinkKind::FullMesh}},
      {"r_r_r", {LinkKind::Ring, LinkKind::Ring, LinkKind::Ring}},
      {"r_sw_sw", {LinkKind::Ring, LinkKind::Switch, LinkKind::Switch}},
      {"sw_sw_sw", {LinkKind::Switch, LinkKind::Switch, LinkKind::Switch}},
  };
  for (const auto& [name, kinds] : topologies) {
    std::string fields = " x: 2 link_bw_x: 5.0 par_x: \"TP\"";
    if (kinds.size() >= 2) fields += " y: 3 link_bw_y: 6.0 par_y: \"PP\"";
    if (kinds.size() == 3) fields += " z: 0 link_bw_z: 7.0";
    std::string text = kMinimal;
    const auto at = text.find("  r { x: 2 link_bw_x: 10.0 par_x: \"DP\" }");
    text.replace(at, std::string("  r { x: 2 link_bw_x: 10.0 par_x: \"DP\" }").size(),
                 "  " + name + " {" + fields + " }");
    text += "execution { llm { hidden_dim: 8 } execution_style: KERNEL_BY_KERNEL word: 2 }\n";
    Diagnostics d;
    const DataflowProblem p = read_dfmodel("t.txt", text, d);
    EXPECT_EQ(p.system.topology, name);
    ASSERT_EQ(p.system.dimensions.size(), kinds.size()) << name;
    for (size_t i = 0; i < kinds.size(); ++i) {
      EXPECT_EQ(p.system.dimensions[i].kind, kinds[i]) << name << " dimension " << i;
      EXPECT_EQ(p.system.dimensions[i].link_gbps, 5.0 + static_cast<double>(i)) << name;
    }
    EXPECT_EQ(p.system.dimensions[0].role, ParallelRole::Tensor);
    if (kinds.size() == 3) {
      EXPECT_EQ(p.system.dimensions[1].size, 3);
      EXPECT_EQ(p.system.dimensions[2].size, 0);  // free
      EXPECT_EQ(p.system.dimensions[2].role, ParallelRole::Unassigned);
    }
  }
}

TEST(DfmodelReader, ErrorsNameFileAndLine) {
  const std::string run =
      "execution { llm { hidden_dim: 8 } execution_style: KERNEL_BY_KERNEL word: 2 }\n";
  std::string text = std::string(kMinimal) + run;
  text.replace(text.find("type: SIMD"), 10, "type: VECTOR");
  EXPECT_EQ(error_of(text).rfind("d.txt:6: expected DFModel DSE text", 0), 0u) << error_of(text);

  text = std::string(kMinimal) + run;
  text.replace(text.find("num_chip: 2"), 11, "num_chips: 2");
  EXPECT_EQ(error_of(text).rfind("d.txt:11: expected DFModel DSE text", 0), 0u) << error_of(text);

  text = std::string(kMinimal) + run;
  text.replace(text.find("par_x: \"DP\""), 11, "par_x: \"EP\"");
  EXPECT_EQ(error_of(text),
            "d.txt:13: expected a parallelism \"TP\", \"PP\" or \"DP\", found \"EP\"");

  text = std::string(kMinimal) + run;
  text.replace(text.find(" tiling: N_TILING"), 17, "");
  EXPECT_EQ(error_of(text),
            "d.txt:2: kernel 'A' (id 1): expected a tiling (N_TILING, K_TILING, M_TILING, "
            "OUTER_TILING or NO_TILING)");

  text = std::string(kMinimal) + run;
  text.replace(text.find("elementwise_input1 {"), 20, "elementwise_inputX {");
  EXPECT_NE(error_of(text).find("d.txt:7:"), std::string::npos) << error_of(text);

  text = std::string(kMinimal) + run;
  text.replace(text.find("    fwd_bwd: FWD\n"), 17, "");
  EXPECT_EQ(error_of(text), "d.txt:2: kernel 'A' (id 1): expected fwd_bwd: FWD or BWD");

  EXPECT_EQ(error_of(kMinimal), "d.txt:1: expected an execution (or miscellany) block");
  text = std::string(kMinimal) + "execution { execution_style: DATAFLOW }\n";
  EXPECT_EQ(error_of(text), "d.txt:17: execution: expected a workload (llm, dlrm, hpl, fft, ...)");
}

TEST(DfmodelReader, MissingCostAndWordAreWarnings) {
  std::string text = kMinimal;
  const std::string cost = "cost { link_unit_price: 1.0 }\n";
  text.replace(text.find(cost), cost.size(), "");
  text += "execution { llm { hidden_dim: 8 } execution_style: KERNEL_BY_KERNEL }\n";
  Diagnostics d;
  const DataflowProblem p = read_dfmodel("w.txt", text, d);
  EXPECT_EQ(p.run.word_bytes, 2);
  ASSERT_EQ(d.warnings().size(), 2u);
  EXPECT_EQ(d.warnings()[0].to_string(), "w.txt: no cost block; cost and power are reported as 0");
  EXPECT_EQ(d.warnings()[1].to_string(),
            "w.txt:16: execution: no word size; taking 2 bytes per element");
}

// The seed with `from` replaced by `to` (which must occur).
std::string seed_with(const std::string& from, const std::string& to) {
  std::string text = slurp(kSeed);
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// 1-based line of the first occurrence of `needle` in `text`.
int64_t line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
}

// Every numeric field is checked where it is read: finite, in range, located at its own line.
TEST(DfmodelReader, NumericFieldsAreFiniteAndInRangeAtTheirLine) {
  struct Case {
    std::string from, to, message;
  };
  const std::vector<Case> cases = {
      {"    x: 128\n", "    x: 4294967296\n",
       "r_r: expected x between 0 and 2147483647 (0: free), found 4294967296"},
      {"num_chip: 4096", "num_chip: 9223372036854775807",
       "system: expected num_chip between 1 and 2147483647, found 9223372036854775807"},
      {"core: 432", "core: 9223372036854775807",
       "accelerator: expected core between 1 and 2147483647, found 9223372036854775807"},
      {"compute_util: 0.9", "compute_util: nan",
       "miscellany: expected compute_util to be a finite number >= 0, found nan"},
      {"compute_util: 0.9", "compute_util: 1.5",
       "miscellany: expected compute_util between 0 (cycle model) and 1, found 1.5"},
      {"link_bw_x: 25.0", "link_bw_x: inf",
       "r_r: expected link_bw_x to be a finite number > 0, found inf (a 32-bit float: values "
       "beyond 3.4e38 read as inf)"},
      {"dram_bw: 2039.0", "dram_bw: inf",
       "memory: expected dram_bw to be a finite number > 0, found inf (a 32-bit float: values "
       "beyond 3.4e38 read as inf)"},
      {"dram_cap: 4294967300000.0", "dram_cap: nan",
       "memory: expected dram_cap to be a finite number > 0, found nan"},
      {"freq: 1.41", "freq: inf",
       "accelerator: expected freq to be a finite number > 0, found inf (a 32-bit float: values "
       "beyond 3.4e38 read as inf)"},
      {"freq: 1.41", "freq: 1e308",
       "accelerator: expected freq to be a finite number > 0, found inf (a 32-bit float: values "
       "beyond 3.4e38 read as inf)"},
      {"link_bw_x: 25.0", "link_bw_x: 1e-300",
       "r_r: expected link_bw_x to be a finite number > 0, found 0 (a 32-bit float: values below "
       "1.2e-38 read as 0)"},
      {"accelerator_price: 16522.25", "accelerator_price: nan",
       "cost: expected accelerator_price to be a finite number >= 0, found nan"},
      {"accelerator_price: 16522.25", "accelerator_price: -16522.25",
       "cost: expected accelerator_price to be a finite number >= 0, found -16522.25"},
      {"word: 2", "word: -2",
       "miscellany: expected word between 0 and 2147483647 (0: 2 bytes), "
       "found -2"},
      {"      output_tensor_size: 104857600.0\n", "      output_tensor_size: -104857600.0\n",
       "kernel 'Add_Prev_Layer' (id 1): expected output_tensor_size to be a finite number >= 0, "
       "found -104857600"},
      {"time: 1200", "time: -5", "gurobi: expected time >= 0 (seconds; 0: no limit), found -5"},
      {"gap: 0.001", "gap: nan", "gurobi: expected gap to be a finite number >= 0, found nan"},
      {"    shard_tensor_size: 51200.0\n", "    shard_tensor_size: nan\n",
       "connection 1: expected shard_tensor_size to be a finite number >= 0, found nan"},
      {"    config: 1\n", "    config: -2\n",
       "kernel 'LayerNorm_1' (id 2): expected config between -1 (free) and 2147483647, found -2"},
  };
  for (const Case& c : cases) {
    const std::string text = seed_with(c.from, c.to);
    EXPECT_EQ(error_of(text), "d.txt:" + std::to_string(line_of(text, c.to)) + ": " + c.message);
  }
}

// A binary file has no lines: its errors name the block and field only.
TEST(DfmodelReader, BinaryNumericErrorsNameTheBlock) {
  std::string binary = binary_dse();
  const std::string util = float_field(17, 0.9f);
  ASSERT_NE(binary.find(util), std::string::npos);
  binary.replace(binary.find(util), util.size(),
                 float_field(17, std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(error_of(binary),
            "d.txt: execution: expected compute_util to be a finite number >= 0, found nan");
}

// `dataflow_graph { }` used to stop in protobuf asking a repeated field for one line.
TEST(DfmodelReader, EmptyGraphIsAnError) {
  std::string text = slurp(kSeed);
  text.erase(text.find("  kernels {"), text.find("system {") - text.find("  kernels {") - 2);
  ASSERT_EQ(text.rfind("dataflow_graph {\n}\nsystem {", 0), 0u) << text.substr(0, 40);
  EXPECT_EQ(error_of(text), "d.txt:1: dataflow_graph: expected at least one kernel");
}

// A binary file cut short says where, instead of "a workload in a known format".
TEST(DfmodelReader, TruncatedBinaryNamesWhereItEnds) {
  // binary_dse() starts with dataflow_graph (tag, 1-byte length: 122 bytes), then kernel A
  // (tag, length 38) at byte 4: name 3 bytes, id, fwd_bwd, type 2 each, the element-wise
  // variant's tag and length, and from byte 15 its fields: outer, M, N (2 each), two sizes (5
  // each), sharding (2), tiling (3), so memory_size's tag is at byte 36 and its 4-byte value at
  // 38: cut after 40 bytes, 2 of them remain.
  const std::string cut = binary_dse().substr(0, 40);
  EXPECT_TRUE(looks_like_dfmodel_binary(cut));
  EXPECT_EQ(detect_workload_format(cut), WorkloadFormat::Dfmodel);
  EXPECT_EQ(error_of(cut),
            "d.txt: expected a DFModel DSE file (protobuf text or binary); as binary, at byte 36 "
            "of 40: dataflow_graph.kernels[0].elementwise_input1.memory_size needs 4 bytes, 2 "
            "remain (the file is cut off?)");
  // Bytes that are not a DSE file at all are not taken for one.
  std::string garbage;
  for (int i = 0; i < 1024; ++i)
    garbage += static_cast<char>(i % 256);
  EXPECT_FALSE(looks_like_dfmodel_binary(garbage));
}

TEST(DfmodelReader, DetectedFromContent) {
  EXPECT_TRUE(looks_like_dfmodel_text(slurp(kSeed)));
  EXPECT_TRUE(looks_like_dfmodel_text("# comment\n\nsystem {\n num_chip: 1 }"));
  EXPECT_TRUE(looks_like_dfmodel_text("miscellany: <\n>"));
  EXPECT_FALSE(looks_like_dfmodel_text("systems { }"));
  EXPECT_FALSE(looks_like_dfmodel_text("HYBRID_TRANSFORMER model_parallel_NPU_group: 8\n1\n"));
  EXPECT_FALSE(looks_like_dfmodel_binary("HYBRID_TRANSFORMER model_parallel_NPU_group: 8\n1\n"));
  EXPECT_EQ(detect_workload_format(slurp(kSeed)), WorkloadFormat::Dfmodel);
  EXPECT_EQ(detect_workload_format(binary_dse()), WorkloadFormat::Dfmodel);
  EXPECT_EQ(parse_workload_format("dfmodel"), WorkloadFormat::Dfmodel);
  Diagnostics d;
  try {
    read_workload_file(kSeed, std::nullopt, d);
    ADD_FAILURE() << "a DFModel file is not a layer-wise workload";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dataflow problem"), std::string::npos);
  }
}

}  // namespace
}  // namespace orrery
