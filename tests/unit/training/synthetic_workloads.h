// Workloads and clusters built in code for the training tests, so every expected figure can be
// derived by hand from the numbers written here.
#pragma once

#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "workload/workload.h"

namespace orrery::testing {

inline Time ms(double v) {
  return Time::from_seconds(v * 1e-3);
}
inline Time us(double v) {
  return Time::from_seconds(v * 1e-6);
}

// Servers of 8 GPUs: 100 GB/s inside, 8 NICs of 25 GB/s (25 GB/s per GPU) between, no latency.
// Ring collectives are forced where a test derives a ring's time by hand.
inline Cluster test_cluster() {
  Cluster c;
  c.name = "test";
  Dimension inside, between;
  inside.name = "nvlink";
  inside.size = 8;
  inside.link_bandwidth = Bandwidth::gb_per_second(100);
  between.name = "fabric";
  between.kind = DimensionKind::FatTree;
  between.size = 0;
  between.rails = 8;
  between.link_bandwidth = Bandwidth::gb_per_second(25);
  c.network = Topology({inside, between});
  c.network.set_ideal_links(true);  // collectives at the links' rates: times derivable by hand
  return c;
}

inline Layer layer(const std::string& name, Time fwd, Time ig, Time wg) {
  Layer l;
  l.name = name;
  l.forward.compute = fwd;
  l.input_grad.compute = ig;
  l.weight_grad.compute = wg;
  return l;
}

// `micro_batches` identical passes of `layers_per_pass` copies of `body`, on `pp` stages with
// `vpp` chunks, tp = 1 and dp = 1 unless `world` says otherwise.
inline Workload uniform_workload(int64_t pp, int64_t micro_batches, int64_t layers_per_pass,
                                 const Layer& body, int64_t vpp = 1, int64_t tp = 1,
                                 int64_t world = 0) {
  Workload w;
  w.name = "synthetic";
  w.source = "synthetic.txt";
  w.parallelism = {tp, pp, 1, vpp, micro_batches, world > 0 ? world : tp * pp};
  w.stage_boundary_bytes = 0;
  for (int64_t mb = 0; mb < micro_batches; ++mb) {
    const size_t begin = w.program.layers.size();
    for (int64_t k = 0; k < layers_per_pass; ++k)
      w.program.layers.push_back(body);
    w.program.micro_batches.push_back({begin, w.program.layers.size()});
  }
  w.program.before = {0, 0};
  w.program.after = {w.program.layers.size(), w.program.layers.size()};
  return w;
}

// Appends an iteration-level row after the passes.
inline void add_iteration_row(Workload& w, const Layer& row) {
  w.program.layers.push_back(row);
  w.program.after.end = w.program.layers.size();
}

inline Communication comm(CollectiveKind kind, CommGroup group, Bytes bytes) {
  return {kind, group, bytes};
}

// The distributed optimizer's parameter all-gather of `bytes` over the data-parallel group, as
// an iteration-level row.
inline Layer parameter_gather_row(Bytes bytes) {
  Layer row = layer("parameter all-gather", Time::zero(), Time::zero(), Time::zero());
  row.weight_grad.comm = comm(CollectiveKind::AllGather, CommGroup::Data, bytes);
  return row;
}

// One stage running three model chunks (vpp 3) of one layer each (F = I = W = 1 ms), one
// micro-batch, dp = 2 across servers (tp 8 on 16 GPUs): each chunk's first forward is the one
// that awaits its parameter gather.
inline Workload three_chunk_workload() {
  Workload w = uniform_workload(1, 1, 3, layer("l", ms(1), ms(1), ms(1)), 3, 8, 16);
  w.program.pass_per_model_chunk = true;
  for (size_t c = 0; c < 3; ++c) {
    std::vector<bool> set(3, false);
    set[c] = true;
    w.program.stage_sets.push_back(set);
    w.program.layers[c].stage_set = static_cast<int32_t>(c);
  }
  return w;
}

// Appends an iteration-level row that only stage `stage` runs (vpp 1).
inline void add_stage_row(Workload& w, Layer row, int64_t stage) {
  std::vector<bool> set(static_cast<size_t>(w.parallelism.pp), false);
  set[static_cast<size_t>(stage)] = true;
  row.stage_set = static_cast<int32_t>(w.program.stage_sets.size());
  w.program.stage_sets.push_back(set);
  add_iteration_row(w, row);
}

// Two stages of one micro-batch on two servers (tp 8): F = 1 ms, B = 1 ms per stage, free
// transfers, so stage 1 ends its backward at 3 ms and stage 0 at 4 ms; then each stage
// all-reduces 8 MB with the other over the embedding group (ring of 2 across servers on each
// GPU's own 25 GB/s NIC: 2 x 1/2 x 8 MB / 25 GB/s = 320 us) and runs a 1 ms optimizer.
inline Workload end_stages_workload() {
  Workload w = uniform_workload(2, 1, 1, layer("l", ms(1), ms(0.5), ms(0.5)), 1, 8, 16);
  for (int64_t s = 0; s < 2; ++s) {
    Layer row = layer("embedding gradient all-reduce", Time::zero(), Time::zero(), Time::zero());
    row.forward.comm = comm(CollectiveKind::AllReduce, CommGroup::Embedding, 8'000'000);
    add_stage_row(w, row, s);
  }
  add_iteration_row(w, layer("optimizer", ms(1), Time::zero(), Time::zero()));
  return w;
}

// One stage of tp 8 (one server), one micro-batch of two layers whose phases each run a GEMM
// beside an 8 MB tensor-parallel collective (70 us as a ring: 7/8 x 8 MB / 100 GB/s), as
// Transformer Engine's overlap (--tp-comm-overlap): forward 100 us of which a 60 us GEMM beside
// a ring-exchange all-gather; input gradient 50 us of which a 40 us GEMM beside a reduce-scatter
// pipelined in 4 chunks; weight gradient an 80 us GEMM beside a bulk all-gather.
inline Workload gemm_overlap_workload() {
  Layer body = layer("l", us(100), us(50), us(80));
  body.forward.overlapped = {comm(CollectiveKind::AllGather, CommGroup::Tensor, 8'000'000),
                             GemmOverlapMethod::RingExchange,
                             8,
                             1,
                             false,
                             us(60)};
  body.input_grad.overlapped = {comm(CollectiveKind::ReduceScatter, CommGroup::Tensor, 8'000'000),
                                GemmOverlapMethod::Pipelined,
                                4,
                                24,
                                true,
                                us(40)};
  body.weight_grad.overlapped = {comm(CollectiveKind::AllGather, CommGroup::Tensor, 8'000'000),
                                 GemmOverlapMethod::Bulk,
                                 1,
                                 4,
                                 false,
                                 us(80)};
  return uniform_workload(1, 1, 2, body, 1, 8);
}

}  // namespace orrery::testing
