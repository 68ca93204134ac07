#include "formats/simai_text.h"

#include <gtest/gtest.h>

#include "formats/workload_reader.h"

namespace orrery {
namespace {

constexpr const char* kHeader =
    "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 2 pp: 4 vpp: 2 ga: 2 "
    "all_gpus: 64 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 4096\n";

// One record line with the given name and comm types (sizes 1 MiB, computes 10/20/30 us).
std::string record(const std::string& name, const std::string& fwd = "NONE",
                   const std::string& ig = "NONE", const std::string& wg = "NONE") {
  return name + "\t-1\t10000\t" + fwd + "\t1048576\t20000\t" + ig + "\t1048576\t30000\t" + wg +
         "\t1048576\t100\n";
}

Workload read(const std::string& text, Diagnostics& d) {
  return read_simai_text("w.txt", text, d);
}

std::string error_of(const std::string& text) {
  Diagnostics d;
  try {
    read(text, d);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_warning(const Diagnostics& d, const std::string& fragment) {
  for (const Warning& w : d.warnings())
    if (w.to_string().find(fragment) != std::string::npos) return true;
  return false;
}

TEST(SimaiText, HeaderKeysInAnyOrder) {
  Diagnostics d;
  const Workload w = read(
      "HYBRID_TRANSFORMER pp_comm 512 ga: 3 pp: 2 all_gpus: 32 vpp: 1 ep: 1 "
      "model_parallel_NPU_group: 4\n1\n" +
          record("embedding_layer"),
      d);
  EXPECT_EQ(w.policy, "HYBRID_TRANSFORMER");
  EXPECT_EQ(w.parallelism.tp, 4);
  EXPECT_EQ(w.parallelism.pp, 2);
  EXPECT_EQ(w.parallelism.micro_batches, 3);
  EXPECT_EQ(w.parallelism.world_size, 32);
  EXPECT_EQ(w.parallelism.dp(), 4);
  ASSERT_TRUE(w.stage_boundary_bytes);
  EXPECT_EQ(*w.stage_boundary_bytes, 512u);
}

TEST(SimaiText, RecordFieldsAndUnits) {
  Diagnostics d;
  const Workload w = read(std::string(kHeader) + "1\n" + record("embedding_layer", "ALLREDUCE"), d);
  ASSERT_EQ(w.program.layers.size(), 1u);
  const Layer& l = w.program.layers[0];
  EXPECT_EQ(l.name, "embedding_layer");
  EXPECT_EQ(l.line, 3);
  EXPECT_EQ(l.forward.compute, Time::from_ns(10000));
  EXPECT_EQ(l.input_grad.compute, Time::from_ns(20000));
  EXPECT_EQ(l.weight_grad.compute, Time::from_ns(30000));
  ASSERT_TRUE(l.forward.comm);
  EXPECT_EQ(l.forward.comm->kind, CollectiveKind::AllReduce);
  EXPECT_EQ(l.forward.comm->group, CommGroup::Tensor);
  EXPECT_EQ(l.forward.comm->bytes, 1048576u);
  EXPECT_EQ(l.forward.source_comm_type, "ALLREDUCE");
  EXPECT_FALSE(l.input_grad.comm);
}

TEST(SimaiText, CommTypesMapToGroupsByColumnAndSuffix) {
  Diagnostics d;
  const Workload w = read(std::string(kHeader) + "4\n" +
                              record("embedding_layer", "ALLGATHER", "REDUCESCATTER", "ALLREDUCE") +
                              record("moe", "ALLTOALL_EP", "ALLTOALL", "REDUCESCATTER_DP_EP") +
                              record("odd", "ALLREDUCE_ASYNC", "BROADCAST", "ALLGATHER_EP") +
                              record("zero", "ALLGATHER", "NONE", "NONE"),
                          d);
  const auto& L = w.program.layers;
  EXPECT_EQ(L[0].forward.comm->kind, CollectiveKind::AllGather);
  EXPECT_EQ(L[0].forward.comm->group, CommGroup::Tensor);
  EXPECT_EQ(L[0].input_grad.comm->kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(L[0].weight_grad.comm->group, CommGroup::Data);  // bare wg -> data parallel
  EXPECT_EQ(L[1].forward.comm->group, CommGroup::Expert);
  EXPECT_EQ(L[1].input_grad.comm->kind, CollectiveKind::AllToAll);
  EXPECT_EQ(L[1].input_grad.comm->group, CommGroup::Tensor);  // bare ALLTOALL is a TP all-to-all
  EXPECT_EQ(L[1].weight_grad.comm->group, CommGroup::ExpertData);
  // Unknown suffix: the column's group, with a warning; unknown type: no comm, with a warning.
  EXPECT_EQ(L[2].forward.comm->group, CommGroup::Tensor);
  EXPECT_TRUE(has_warning(d, "w.txt:5: fwd comm type 'ALLREDUCE_ASYNC': unrecognised suffix"));
  EXPECT_FALSE(L[2].input_grad.comm);
  EXPECT_TRUE(has_warning(d, "w.txt:5: ig comm type 'BROADCAST' is not a collective"));
  EXPECT_EQ(L[2].weight_grad.comm->group, CommGroup::Expert);
  EXPECT_TRUE(L[3].forward.comm);
}

TEST(SimaiText, ZeroByteCollectiveIsNoCommunication) {
  Diagnostics d;
  std::string rec = record("embedding_layer", "ALLGATHER");
  rec.replace(rec.find("1048576"), 7, "0");
  const Workload w = read(std::string(kHeader) + "1\n" + rec, d);
  EXPECT_FALSE(w.program.layers[0].forward.comm);
  EXPECT_EQ(w.program.layers[0].forward.source_comm_type, "ALLGATHER");
}

TEST(SimaiText, PassesStartAtEmbeddingRows) {
  Diagnostics d;
  const Workload w =
      read(std::string(kHeader) + "8\n" + record("grad_gather") + record("embedding_layer") +
               record("attention") + record("embedding_layer_2") + record("attention") +
               record("final_column") + record("cross_entropy1") + record("optimizer1"),
           d);
  const Program& p = w.program;
  EXPECT_EQ(p.before.begin, 0u);
  EXPECT_EQ(p.before.end, 1u);
  ASSERT_EQ(p.micro_batches.size(), 2u);
  EXPECT_EQ(p.micro_batches[0].begin, 1u);
  EXPECT_EQ(p.micro_batches[0].end, 3u);
  EXPECT_EQ(p.micro_batches[1].begin, 3u);
  EXPECT_EQ(p.micro_batches[1].end, 6u);
  EXPECT_EQ(p.after.begin, 6u);
  EXPECT_EQ(p.after.end, 8u);
  EXPECT_TRUE(d.warnings().empty());  // ga: 2 matches the two passes
}

TEST(SimaiText, PassCountDisagreeingWithGaIsAWarning) {
  Diagnostics d;
  read(std::string(kHeader) + "1\n" + record("embedding_layer"), d);
  EXPECT_TRUE(has_warning(d, "header says ga: 2 but the listing has 1 micro-batch pass"));
}

TEST(SimaiText, MissingVppDefaultsToOneWithAWarning) {
  Diagnostics d;
  const Workload w = read(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 ga: 1 all_gpus: 2\n"
      "1\n" +
          record("embedding_layer"),
      d);
  EXPECT_EQ(w.parallelism.vpp, 1);
  EXPECT_TRUE(has_warning(d, "w.txt:1: header has no 'vpp:'; using vpp = 1"));
}

TEST(SimaiText, CountLineWinsAndNamesIgnoredRecords) {
  Diagnostics d;
  const Workload w = read(std::string(kHeader) + "1\n" + record("embedding_layer") +
                              record("optimizer3") + record("optimizer4"),
                          d);
  EXPECT_EQ(w.program.layers.size(), 1u);
  EXPECT_TRUE(has_warning(d,
                          "w.txt:4: 2 records after the 1 declared on line 2 ignored (lines "
                          "4-5: optimizer3, optimizer4)"));
}

TEST(SimaiText, SizesBeyond32BitsWarn) {
  Diagnostics d;
  std::string rec = record("embedding_layer", "NONE", "NONE", "REDUCESCATTER");
  rec.replace(rec.rfind("1048576"), 7, "12802064384");
  const Workload w = read(std::string(kHeader) + "1\n" + rec, d);
  EXPECT_EQ(w.program.layers[0].weight_grad.comm->bytes, 12802064384u);
  EXPECT_TRUE(has_warning(d, "does not fit in 32 bits"));
}

TEST(SimaiText, DataPolicyCommunicatesOnlyWeightGradients) {
  Diagnostics d;
  const Workload w =
      read("DATA\n1\n" + record("embedding_layer", "ALLREDUCE", "NONE", "ALLREDUCE"), d);
  EXPECT_FALSE(w.program.layers[0].forward.comm);
  EXPECT_TRUE(w.program.layers[0].weight_grad.comm);
  EXPECT_TRUE(has_warning(d, "the DATA policy communicates only weight gradients"));
}

TEST(SimaiText, CheckpointListsAreParsedWhole) {
  Diagnostics d;
  const Workload w = read(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 "
      "all_gpus: 1 checkpoints: 2 0 1 checkpoint_initiates: 1 2\n3\n" +
          record("embedding_layer") + record("a") + record("b"),
      d);
  EXPECT_EQ(w.recompute.checkpoints, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(w.recompute.triggers, (std::vector<int64_t>{2}));
}

TEST(SimaiText, ErrorsNameFileLineAndExpectation) {
  EXPECT_EQ(error_of("PIPELINE_MAGIC\n0\n"),
            "w.txt:1: policy 'PIPELINE_MAGIC' is not supported; expected "
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER or DATA");
  EXPECT_EQ(error_of(std::string(kHeader) + "two\n"),
            "w.txt:2: expected the number of layer records on line 2, found 'two'");
  EXPECT_EQ(error_of(std::string(kHeader) + "2\n" + record("embedding_layer")),
            "w.txt:4: expected 2 layer records (line 2), found 1");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nlayer -1 10 NONE 0 1 NONE 0 1 NONE 0\n"),
            "w.txt:3: expected 12 fields (name, dependency, fwd compute, fwd comm type, fwd comm "
            "size, ig compute, ig comm type, ig comm size, wg compute, wg comm type, wg comm size, "
            "wg update time), found 11");
  EXPECT_EQ(error_of(std::string(kHeader) + "1\nlayer -1 1.5 NONE 0 1 NONE 0 1 NONE 0 1\n"),
            "w.txt:3: field 3 (fwd compute, ns): expected a non-negative integer, found '1.5'");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER pp: 0\n0\n"),
            "w.txt:1: expected a positive integer after 'pp:', found '0'");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER pp:\n0\n"),
            "w.txt:1: expected a positive integer after 'pp:', found ''");
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER checkpoints: 2 5\n0\n"),
            "w.txt:1: expected 2 layer indices after 'checkpoints: 2', found ''");
}

TEST(SimaiText, DegreesWhoseProductOverflowsAreRefusedOrLeftToAllGpus) {
  // Headers with ep 2^27 and pp 13421774217728 (fuzz_simai_text found them: tp * pp * ep
  // overflowed int64, undefined behaviour, computed even when all_gpus was given) / without
  // all_gpus an error at line 1; with all_gpus the file reads, its world size taken as given
  // (the simulators refuse what does not fit), because the product is needed only for the
  // default.
  const std::string degrees = "model_parallel_NPU_group: 4 ep: 134217728 pp: 13421774217728";
  EXPECT_EQ(error_of("HYBRID_TRANSFORMER_FWD_IN_BCKWD " + degrees + "\n1\n" + record("layer")),
            "w.txt:1: header has no 'all_gpus:' and tp * pp * ep (4 x 13421774217728 x 134217728) "
            "is beyond 64 bits; expected 'all_gpus:' or smaller degrees");
  Diagnostics d;
  const Workload w = read(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD " + degrees + " all_gpus: 64\n1\n" + record("layer"), d);
  EXPECT_EQ(w.parallelism.world_size, 64);
  EXPECT_EQ(w.parallelism.pp, 13421774217728);
}

TEST(WorkloadReader, DetectsSimaiAndRejectsOtherContent) {
  EXPECT_EQ(detect_workload_format(std::string(kHeader) + "0\n"), WorkloadFormat::SimaiText);
  EXPECT_FALSE(detect_workload_format("digraph { a -> b }\n"));
  EXPECT_FALSE(detect_workload_format("name\tforward_compute_time\n"));
}

TEST(WorkloadReader, SeedMoeListingHasTheDocumentedShape) {
  Diagnostics d;
  const Workload w = read_workload_file(
      ORRERY_SOURCE_DIR "/examples/simai/moe_tp8_ep4_pp4_vpp8_128gpus.txt", std::nullopt, d);
  EXPECT_EQ(w.program.layers.size(), 96u);  // the count line says 96 of 98 records
  EXPECT_EQ(w.program.before.size(), 6u);   // grad_gather .. moe_grad_norm2
  ASSERT_EQ(w.program.micro_batches.size(), 2u);
  EXPECT_EQ(w.program.micro_batches[0].size(), 74u);  // embedding + 8 x 9 layers + final_column
  EXPECT_EQ(w.program.micro_batches[1].size(), 11u);
  EXPECT_EQ(w.program.after.size(), 5u);  // cross_entropy1-3, optimizer1-2
  EXPECT_EQ(w.parallelism.ep, 4);
  EXPECT_EQ(w.parallelism.vpp, 8);
  EXPECT_EQ(*w.stage_boundary_bytes, 50331648u);
}

TEST(WorkloadReader, MissingFileIsAnInputError) {
  Diagnostics d;
  EXPECT_THROW(read_workload_file("/nonexistent/w.txt", std::nullopt, d), InputError);
}

}  // namespace
}  // namespace orrery
