// The space a search enumerates: the values of each plan knob and the cluster choices.
//
// Default plan space for a model (docs/explore.md, "The space"):
//   tp   divisors of the attention heads up to the largest NVLink domain of the cluster choices
//   pp   divisors of the layers
//   vpp  divisors of layers / pp (1 when pp is 1): every interleaving whose chunks hold whole
//   layers cp   {1, 2, 4, 8} when the sequence is at least 8,192 tokens, else {1} ep   divisors of
//   the routed experts ({1} for a dense model) mbs  {1, 2, 4, 8} recompute {none, selective, full},
//   sequence parallelism {off, on} (on is skipped at tp 1, where it changes nothing), optimizer
//   sharding zero {0, 1 (distributed optimizer), 2, 3}, the parameter gather overlapped with the
//   next forward {off} (on is skipped where it cannot run: ZeRO 0 or 3, or dp x cp = 1),
//   Transformer Engine's tensor-parallel overlap {off} (on is skipped without sequence
//   parallelism)
// `--vary KEY=V1,V2,...` with a plan key (tp pp cp ep vpp mbs recompute sequence-parallel
// distributed-optimizer zero overlap-param-gather tp-comm-overlap) replaces that knob's default
// values; with a cluster key (cluster gpus device gpus-per-server nic-busbw nvlink-busbw;
// bandwidths in GB/s) it widens the cluster choices to every combination.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explore/plan_point.h"
#include "models/model_spec.h"

namespace orrery::explore {

// One --vary KEY=V1,V2,... as given.
struct Vary {
  std::string key;
  std::vector<std::string> values;
};

// Parses "KEY=V1,V2,..."; throws InputError for an unknown key or an empty or malformed list.
Vary parse_vary(const std::string& text);

// The explicit values of the plan knobs (nullopt: the default of the header comment).
struct PlanAxes {
  std::optional<std::vector<int64_t>> tp, pp, vpp, cp, ep, mbs, zero;
  std::optional<std::vector<RecomputeMode>> recompute;
  std::optional<std::vector<bool>> sequence_parallel, distributed_optimizer, overlap_param_gather,
      tp_comm_overlap;
};

// What the cluster keys widen, before the choices are built.
struct ClusterAxes {
  std::vector<std::string> clusters;  // presets or files
  std::vector<int64_t> gpus;
  std::vector<std::string> devices;  // "" = the cluster's GPU
  std::vector<std::optional<int64_t>> gpus_per_server;
  std::vector<std::optional<double>> nic_busbw, nvlink_busbw;  // GB/s (10^9 B/s)
};

// Applies the --vary lists to the axes (a key given twice: the later list wins).
void apply_varies(const std::vector<Vary>& varies, PlanAxes& plan, ClusterAxes& clusters);

// Every combination of the cluster axes, each cluster built once. Throws InputError.
std::vector<ClusterChoice> cluster_choices(const ClusterAxes& axes);

// Calls `visit` with every plan of the space on every cluster choice, dp and micro-batches
// resolved (0 micro-batches where the batch does not divide: pruning names it); `base` gives the
// knobs no axis varies (dtype, attention, p2p, seq).
template <typename Visit>
void for_each_point(const ModelSpec& spec, const ParallelPlan& base, int64_t gbs,
                    const PlanAxes& axes, const std::vector<ClusterChoice>& clusters,
                    Visit&& visit);

// The values each knob takes for this spec and cluster choices (defaults filled in); vpp depends on
// pp, so it is given per pp.
struct FilledAxes {
  std::vector<int64_t> tp, pp, cp, ep, mbs, zero;
  std::vector<RecomputeMode> recompute;
  std::vector<bool> sequence_parallel;
  std::vector<bool> overlap_param_gather, tp_comm_overlap;
  std::optional<std::vector<int64_t>> vpp;  // explicit; else divisors of layers / pp
  std::optional<std::vector<bool>> distributed_optimizer;
};
FilledAxes fill_axes(const ModelSpec& spec, int64_t seq, const PlanAxes& axes,
                     const std::vector<ClusterChoice>& clusters);

// Divisors of n, ascending.
std::vector<int64_t> divisors(int64_t n);

template <typename Visit>
void for_each_point(const ModelSpec& spec, const ParallelPlan& base, int64_t gbs,
                    const PlanAxes& axes, const std::vector<ClusterChoice>& clusters,
                    Visit&& visit) {
  const FilledAxes a = fill_axes(spec, base.seq, axes, clusters);
  PlanPoint point;
  ParallelPlan& p = point.plan;
  p = base;
  for (size_t c = 0; c < clusters.size(); ++c) {
    point.cluster = c;
    for (int64_t tp : a.tp)
      for (int64_t pp : a.pp) {
        const std::vector<int64_t> vpps =
            a.vpp ? *a.vpp : (pp == 1 ? std::vector<int64_t>{1} : divisors(spec.layers / pp));
        for (int64_t vpp : vpps)
          for (int64_t cp : a.cp)
            for (int64_t ep : a.ep)
              for (int64_t mbs : a.mbs)
                for (RecomputeMode recompute : a.recompute)
                  for (bool sp : a.sequence_parallel)
                    for (int64_t zero : a.zero) {
                      if (sp && tp == 1) continue;  // sequence parallelism needs tp > 1
                      const bool sharded = zero >= 1;
                      if (a.distributed_optimizer &&
                          std::find(a.distributed_optimizer->begin(),
                                    a.distributed_optimizer->end(),
                                    sharded) == a.distributed_optimizer->end())
                        continue;
                      p.tp = tp;
                      p.pp = pp;
                      p.vpp = vpp;
                      p.cp = cp;
                      p.ep = ep;
                      p.micro_batch = mbs;
                      p.recompute = recompute;
                      p.sequence_parallel = sp;
                      p.zero = static_cast<int>(zero);
                      p.distributed_optimizer = sharded;
                      const int64_t model_parallel = tp * pp * cp;
                      const int64_t gpus = clusters[c].gpus;
                      p.dp = gpus % model_parallel == 0 ? gpus / model_parallel : 0;
                      p.micro_batches =
                          p.dp > 0 && gbs % (mbs * p.dp) == 0 ? gbs / (mbs * p.dp) : 0;
                      for (bool overlap : a.overlap_param_gather) {
                        // it needs a sharded optimizer short of ZeRO-3 and dp x cp > 1
                        if (overlap && (zero < 1 || zero > 2 || p.dp * cp <= 1)) continue;
                        p.overlap_param_gather = overlap;
                        for (bool tp_overlap : a.tp_comm_overlap) {
                          if (tp_overlap && !sp) continue;  // it overlaps sp's collectives
                          p.tp_comm_overlap = tp_overlap;
                          visit(point);
                        }
                      }
                    }
      }
  }
}

}  // namespace orrery::explore
