#include "training/iteration_plan.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <limits>
#include <memory>
#include <numeric>
#include <set>

#include "network/collective_algorithms.h"
#include "training/gemm_overlap_time.h"
#include "training/group_pricing.h"
#include "training/parallel_axes.h"
#include "training/sm_contention.h"

namespace orrery {
namespace {

// Why the groups of a kind are costed like their most spread one, in the user's terms: "with 20
// servers per leaf, some DP groups of 8 servers straddle two leaves".
std::string placement_warning(CommGroup group, const GroupShape& spread, const Cluster& cluster,
                              const std::vector<std::string>& placement) {
  std::string name(to_string(group));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string order;
  for (const std::string& axis : placement)
    order += (order.empty() ? "" : ",") + axis;
  const std::string costed = "; each is costed like the most spread (placement " + order + ")";
  const auto out = cluster.scale_out();
  if (spread.crosses_leaves && out && cluster.network[*out].servers_per_leaf > 0) {
    const int64_t servers =
        *out < spread.span.size() ? spread.span[*out] : spread.ranks / cluster.gpus_per_server();
    return "with " + std::to_string(cluster.network[*out].servers_per_leaf) +
           " servers per leaf, some " + name + " groups of " + std::to_string(servers) + " server" +
           (servers == 1 ? "" : "s") + " straddle two leaves" + costed;
  }
  return "some " + name + " groups of " + std::to_string(spread.ranks) +
         " GPUs spread over more of the network than others" + costed;
}

// Prices collectives on the cluster for the groups of one parallel layout (group_pricing.h),
// and says what the user should know about it: groups of a kind spread unevenly, an --algo that
// some collective cannot run.
class CommPricer {
 public:
  CommPricer(const Parallelism& par, const Cluster& cluster,
             const std::vector<std::string>& placement, const SimulationOptions& options,
             const std::string& source, Diagnostics& diagnostics)
      : algorithm_(options.algorithm), source_(source), diagnostics_(diagnostics) {
    const std::vector<TrainingAxis> order = rank_order(placement);
    try {
      std::vector<ParallelAxis> axes = parallel_axes(par, order);
      groups_ = options.group_pricing
                    ? options.group_pricing->get(cluster.network, axes, order)
                    : std::make_shared<GroupPricing>(cluster.network, std::move(axes), order);
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string(e.what()) + " (cluster '" + cluster.name + "')");
    }
    for (const CommGroup group : kTrainingGroups) {
      // A group kind the job does not use is not worth a word (expert groups when EP = 1), nor
      // are the iteration tail's groups (one collective an iteration each).
      const bool used =
          ((group != CommGroup::Expert && group != CommGroup::ExpertData) || par.ep > 1) &&
          !joins_stages(group);
      if (!groups_->uniform(group) && used)
        diagnostics.warn({source, 0},
                         placement_warning(group, groups_->shape(group), cluster, placement));
    }
  }

  PlannedComm price(const Communication& comm, CommRole role) {
    const CollectiveCost cost = price(comm.kind, comm.group, comm.bytes);
    return {comm, groups_->shape(comm.group).ranks, cost.time, role, cost.algorithm, cost.channels};
  }

  CollectiveCost price(CollectiveKind kind, CommGroup group, Bytes bytes) {
    const CollectiveCost c = groups_->price(kind, group, bytes, algorithm_);
    if (algorithm_ != Algorithm::Auto && c.algorithm != algorithm_ &&
        warned_.insert({kind, group}).second)
      diagnostics_.warn(
          {source_, 0},
          "--algo " + std::string(to_string(algorithm_)) + ": " +
              unavailable_reason(groups_->topology(), algorithm_, kind, groups_->shape(group)) +
              "; the " + std::string(to_string(group)) + " " + std::string(to_string(kind)) +
              " runs " + std::string(to_string(c.algorithm)) + " instead");
    return c;
  }

  TransferCost transfer(int64_t boundary, Bytes bytes) const {
    return groups_->transfer(boundary, bytes);
  }

 private:
  Algorithm algorithm_;
  std::string source_;
  Diagnostics& diagnostics_;
  std::set<std::pair<CollectiveKind, CommGroup>> warned_;
  std::shared_ptr<GroupPricing> groups_;
};

Time work(const Layer& layer) {
  return layer.forward.compute + layer.input_grad.compute + layer.weight_grad.compute;
}

// Splits a pass into `chunks` contiguous groups of about equal compute: a layer goes to the chunk
// that holds the midpoint of its compute. Passes without compute split by layer count.
std::vector<std::vector<size_t>> split_into_chunks(const Program& program, LayerRange range,
                                                   int64_t chunks) {
  std::vector<std::vector<size_t>> result(static_cast<size_t>(chunks));
  double total = 0;
  for (size_t i = range.begin; i < range.end; ++i)
    total += static_cast<double>(work(program.layers[i]).ps());
  double before = 0;
  int64_t previous = -1;
  const auto layers = static_cast<int64_t>(range.size());
  for (size_t i = range.begin; i < range.end; ++i) {
    const double w = static_cast<double>(work(program.layers[i]).ps());
    const double middle = total > 0 ? (before + w / 2) / total
                                    : (static_cast<double>(i - range.begin) + 0.5) /
                                          static_cast<double>(range.size());
    const auto by_work = std::min<int64_t>(chunks - 1, static_cast<int64_t>(middle * chunks));
    // No chunk is left empty: advance at most one chunk per layer, and no later than the layers
    // still to place allow (a model chunk always holds at least one layer).
    const int64_t layers_left = layers - static_cast<int64_t>(i - range.begin);
    const int64_t chunk =
        std::max({std::min(by_work, previous + 1), previous, chunks - layers_left});
    result[static_cast<size_t>(chunk)].push_back(i);
    previous = chunk;
    before += w;
  }
  return result;
}

bool in_range(LayerRange r, size_t i) {
  return i >= r.begin && i < r.end;
}

// Where messages about the workload as a whole point.
SourceLocation header_of(const Workload& w) {
  return {w.source, w.header_line};
}

Bytes estimate_transfer_bytes(const Workload& w, Diagnostics& diagnostics) {
  const Program& program = w.program;
  const SourceLocation header = header_of(w);
  if (program.micro_batches.empty()) return 0;
  const LayerRange first = program.micro_batches.front();
  std::optional<Bytes> found;
  std::string from;
  if (!first.empty()) {
    const auto& comm = program.layers[first.begin].forward.comm;
    if (comm && comm->group == CommGroup::Tensor && comm->kind == CollectiveKind::AllReduce) {
      found = comm->bytes;
      from = "the forward all-reduce of '" + program.layers[first.begin].name +
             "' (the activation entering the first layer)";
    }
  }
  if (!found) {
    for (size_t i = first.begin; i < first.end; ++i) {
      const auto& comm = program.layers[i].forward.comm;
      if (comm && comm->group == CommGroup::Tensor && (!found || comm->bytes > *found)) {
        found = comm->bytes;
        from = "the largest forward tensor-parallel collective (" + program.layers[i].name + ")";
      }
    }
  }
  if (!found) {
    diagnostics.warn(header,
                     "header has no pp_comm and no forward tensor-parallel collective to "
                     "estimate it from; stage-to-stage transfers cost only latency");
    return 0;
  }
  diagnostics.warn(header, "header has no pp_comm; estimating " + std::to_string(*found) +
                               " B per micro-batch between stages from " + from);
  return *found;
}

// A layer whose parameters a bucket covers, with its share of the bucketed bytes.
struct Producer {
  size_t layer;
  int64_t chunk;  // -1: wherever the layer runs
  double weight;  // its weight-gradient compute (ps): its share of the bytes
};

// The producers of the iteration-level row `row` in `pass`: the layers with weight-gradient
// compute that run on a stage of the row (in each model chunk that runs them, when a pass lists
// one chunk), in forward order, model chunk by model chunk.
std::vector<Producer> producers_of(const IterationPlan& plan, const Program& program,
                                   LayerRange pass, size_t row) {
  const int64_t pp = plan.parallelism.pp;
  const int64_t chunks = plan.pass_per_model_chunk ? plan.chunks : 1;
  std::vector<Producer> producers;
  for (int64_t c = 0; c < chunks; ++c) {
    for (size_t k = pass.begin; k < pass.end; ++k) {
      const Time w = program.layers[k].weight_grad.compute;
      if (w <= Time::zero()) continue;
      bool shared = plan.stage_sets.empty();
      for (int64_t s = 0; s < pp && !shared; ++s)
        shared = plan.runs_row(row, s) &&
                 (plan.pass_per_model_chunk ? plan.runs(k, s, c) : plan.runs_row(k, s));
      if (!shared) continue;
      producers.push_back({k, plan.pass_per_model_chunk ? c : -1, static_cast<double>(w.ps())});
    }
  }
  return producers;
}

// Splits `bytes` of the row's collective `comm` over `producers` (forward order) into buckets,
// appended to `out` in backward order. Without a bucket size every producer issues its share;
// with one, the shares are gathered in backward order until a bucket holds at least that many
// bytes (Megatron's rule), and the last bucket takes what is left. A bucket is tied to the
// producer that closes it: the last of its layers in backward order, the first in forward order.
void split_into_buckets(std::vector<Producer> producers, const PlannedComm& comm, Bytes bytes,
                        size_t row, std::optional<Bytes> bucket_bytes, CommPricer& pricer,
                        std::vector<CommBucket>& out) {
  double total = 0;
  for (const Producer& p : producers)
    total += p.weight;
  if (total <= 0) return;
  if (bucket_bytes) std::reverse(producers.begin(), producers.end());  // backward order
  Bytes assigned = 0, open = 0;
  double before = 0;
  for (size_t i = 0; i < producers.size(); ++i) {
    const bool final = i + 1 == producers.size();
    before += producers[i].weight;
    const Bytes upto =
        final ? bytes : static_cast<Bytes>(static_cast<double>(bytes) * (before / total));
    open += upto - assigned;
    assigned = upto;
    if (!final && bucket_bytes && open < *bucket_bytes) continue;
    const CollectiveCost cost = pricer.price(comm.comm.kind, comm.comm.group, open);
    out.push_back({producers[i].layer, row, producers[i].chunk, comm.comm.group, comm.comm.kind,
                   open, cost.time, cost.algorithm, cost.channels});
    open = 0;
  }
}

// Splits `bytes` of the row's collective over `producers` model chunk by model chunk, each chunk
// taking its producers' share of the weight: Megatron wraps each chunk in its own data-parallel
// module and buckets only the first (later chunks are one bucket each, bucketing disabled). The
// buckets are appended in backward order, or in forward order with `forward_order`.
void split_by_chunk(const std::vector<Producer>& producers, const PlannedComm& comm, Bytes bytes,
                    size_t row, std::optional<Bytes> bucket_bytes, bool forward_order,
                    CommPricer& pricer, std::vector<CommBucket>& out) {
  double total = 0;
  for (const Producer& p : producers)
    total += p.weight;
  if (total <= 0) return;
  Bytes assigned = 0;
  double before = 0;
  for (size_t i = 0, j = 0; i < producers.size(); i = j) {
    double weight = 0;
    for (j = i; j < producers.size() && producers[j].chunk == producers[i].chunk; ++j)
      weight += producers[j].weight;
    before += weight;
    const Bytes upto = j == producers.size()
                           ? bytes
                           : static_cast<Bytes>(static_cast<double>(bytes) * (before / total));
    const std::optional<Bytes> size = producers[i].chunk > 0 && bucket_bytes
                                          ? std::optional(std::numeric_limits<Bytes>::max())
                                          : bucket_bytes;
    const auto first = static_cast<std::ptrdiff_t>(out.size());
    split_into_buckets({producers.begin() + static_cast<std::ptrdiff_t>(i),
                        producers.begin() + static_cast<std::ptrdiff_t>(j)},
                       comm, upto - assigned, row, size, pricer, out);
    if (forward_order) std::reverse(out.begin() + first, out.end());
    assigned = upto;
  }
}

// Splits each overlapped gradient reduction (an iteration-level row) into buckets issued during
// the last micro-batch's backward.
void plan_buckets(IterationPlan& plan, const Program& program, std::optional<Bytes> bucket_bytes,
                  CommPricer& pricer) {
  for (const size_t row : plan.iteration_layers) {
    const auto& comm = plan.layers[row].weight_grad.comm;
    if (!comm || comm->role != CommRole::GradientReduction) continue;
    split_by_chunk(producers_of(plan, program, program.micro_batches.back(), row), *comm,
                   comm->comm.bytes, row, bucket_bytes, false, pricer, plan.buckets);
  }
}

// Splits each parameter gather (an iteration-level row) into the buckets Megatron's
// overlap_param_gather gathers during the first micro-batch's forward, and marks the row
// ParameterPrefetch. Each model chunk has buckets of its own (split_by_chunk), listed in forward
// order: the chain its first forward awaits.
void plan_gather_buckets(IterationPlan& plan, const Program& program, Bytes bucket_bytes,
                         CommPricer& pricer) {
  for (const size_t row : plan.iteration_layers) {
    auto& comm = plan.layers[row].weight_grad.comm;
    if (!comm || comm->role != CommRole::ParameterGather) continue;
    const size_t before = plan.gather_buckets.size();
    split_by_chunk(producers_of(plan, program, program.micro_batches.front(), row), *comm,
                   comm->comm.bytes, row, bucket_bytes, true, pricer, plan.gather_buckets);
    if (plan.gather_buckets.size() > before) comm->role = CommRole::ParameterPrefetch;
  }
}

// The schedule that runs: --schedule, or Megatron's choice (interleaved when vpp > 1 and every
// stage has a micro-batch for each chunk step), falling back to 1f1b with a warning where the
// interleaved schedule cannot run; and the model chunks per stage it runs.
void choose_schedule(IterationPlan& plan, int64_t m, const SourceLocation& header,
                     Diagnostics& diagnostics) {
  const Parallelism& par = plan.parallelism;
  const std::string vs_stages =
      " (" + std::to_string(m) + " micro-batches, pp " + std::to_string(par.pp) + ")";
  if (plan.schedule == ScheduleKind::Auto) {
    // Megatron interleaves only when every stage has a micro-batch for each chunk step.
    plan.schedule = par.vpp > 1 && m >= par.pp ? ScheduleKind::Interleaved : ScheduleKind::OneFOneB;
    if (par.vpp > 1 && m < par.pp)
      diagnostics.warn(header, "vpp " + std::to_string(par.vpp) +
                                   " asks for the interleaved schedule, which needs at least pp "
                                   "micro-batches" +
                                   vs_stages +
                                   "; running 1f1b with each stage's chunks as one (--schedule "
                                   "interleaved forces it)");
  } else if (plan.schedule == ScheduleKind::Interleaved && par.vpp == 1) {
    diagnostics.warn(header, "the interleaved schedule needs vpp > 1; running 1f1b");
    plan.schedule = ScheduleKind::OneFOneB;
  } else if (plan.schedule == ScheduleKind::Interleaved && m < par.pp) {
    diagnostics.warn(header, "interleaving with fewer micro-batches than stages" + vs_stages +
                                 " idles each stage for pp - m chunk steps per chunk round "
                                 "(Megatron refuses it)");
  } else if (plan.schedule == ScheduleKind::OneFOneB && par.vpp > 1) {
    diagnostics.warn(header, "1f1b runs the " + std::to_string(par.vpp) +
                                 " model chunks of a stage as one (vpp ignored)");
  }
  plan.chunks = plan.schedule == ScheduleKind::OneFOneB ? 1 : par.vpp;
}

// Each layer's phases with their collectives priced, and the iteration-level rows. A collective
// overlapped with a phase's GEMM (Phase::overlapped) is folded into the phase's compute as
// gemm_overlap_time says (run after the compute with --no-overlap). A
// weight-gradient collective of a data-parallel group is asynchronous inside a pass (with
// overlap), and, in an iteration-level row, a parameter gather or a gradient reduction.
void plan_layers(IterationPlan& plan, const Program& program, const SimulationOptions& options,
                 CommPricer& pricer) {
  const auto iteration_level = [&](size_t i) {
    return in_range(program.before, i) || in_range(program.after, i);
  };
  plan.layers.resize(program.layers.size());
  for (size_t i = 0; i < program.layers.size(); ++i) {
    const Layer& layer = program.layers[i];
    PlannedLayer& planned = plan.layers[i];
    const auto phase = [&](const Phase& p, bool weight_grad) {
      PlannedPhase result{p.compute, Time::zero(), std::nullopt, std::nullopt};
      if (const auto& o = p.overlapped) {  // folded into the phase's compute
        result.overlapped = pricer.price(o->comm, CommRole::Blocking);
        const Time comm = result.overlapped->cost;
        if (options.overlap) {
          const GemmOverlapTime t =
              gemm_overlap_time(*o, comm, plan.compute_units, plan.contention_overhead);
          result.compute += t.total - o->gemm;
          result.exposed_overlap = t.total - t.gemm;
        } else {
          result.compute += comm;
          result.exposed_overlap = comm;
        }
      }
      if (!p.comm) return result;
      CommRole role = CommRole::Blocking;
      if (weight_grad && is_data_parallel(p.comm->group)) {
        if (!iteration_level(i))
          role = options.overlap ? CommRole::Async : CommRole::Blocking;
        else if (p.comm->kind == CollectiveKind::AllGather ||
                 p.comm->kind == CollectiveKind::Broadcast)
          role = CommRole::ParameterGather;
        else if (p.comm->kind == CollectiveKind::AllReduce ||
                 p.comm->kind == CollectiveKind::ReduceScatter ||
                 p.comm->kind == CollectiveKind::Reduce)
          role = CommRole::GradientReduction;
      }
      result.comm = pricer.price(*p.comm, role);
      return result;
    };
    planned.forward = phase(layer.forward, false);
    planned.input_grad = phase(layer.input_grad, false);
    planned.weight_grad = phase(layer.weight_grad, true);
    // SM contention: the input-gradient collective runs beside the weight-gradient compute.
    if (const auto& c = planned.input_grad.comm; c && options.overlap) {
      Time& w = planned.weight_grad.compute;
      w += contention_delay(
          w, c->cost,
          sm_contention_share(c->channels, plan.compute_units, plan.contention_overhead));
    }
    if (iteration_level(i)) plan.iteration_layers.push_back(i);
  }
}

// The stage sets and each pass's layers per model chunk: as listed when a pass lists one chunk,
// else split by work (every chunk holding at least one layer).
void plan_chunks(IterationPlan& plan, const Program& program, const SourceLocation& header) {
  const Parallelism& par = plan.parallelism;
  plan.pass_per_model_chunk = program.pass_per_model_chunk;
  plan.stage_sets = program.stage_sets;
  for (const auto& set : plan.stage_sets)
    if (static_cast<int64_t>(set.size()) != par.pp * par.vpp)
      throw InputError(header, "expected a stage set for each of the pp x vpp virtual stages");
  if (plan.pass_per_model_chunk && plan.chunks != par.vpp)
    throw InputError(header, "a program listing model chunks runs with its " +
                                 std::to_string(par.vpp) + " chunks per stage only (schedule " +
                                 std::string(to_string(plan.schedule)) + ")");
  for (size_t i = 0; i < program.layers.size(); ++i)
    plan.layers[i].stage_set = program.layers[i].stage_set;
  for (size_t mb = 0; mb < program.micro_batches.size(); ++mb) {
    const LayerRange pass = program.micro_batches[mb];
    if (mb > 0 && pass.begin == program.micro_batches[mb - 1].begin &&
        pass.end == program.micro_batches[mb - 1].end) {
      plan.pass_of.push_back(plan.pass_of.back());
      continue;
    }
    plan.pass_of.push_back(plan.passes.size());
    if (plan.pass_per_model_chunk) {
      std::vector<size_t> layers(pass.size());
      std::iota(layers.begin(), layers.end(), pass.begin);
      plan.passes.emplace_back(static_cast<size_t>(plan.chunks), layers);
      continue;
    }
    if (static_cast<int64_t>(pass.size()) < plan.chunks)
      throw InputError(header, "expected vpp (" + std::to_string(plan.chunks) +
                                   ") at most the layers of a micro-batch pass (" +
                                   std::to_string(pass.size()) +
                                   "): every model chunk holds at least one layer");
    plan.passes.push_back(split_into_chunks(program, pass, plan.chunks));
  }
}

// Activation recompute: the forward re-runs from the nearest checkpoint up to the trigger.
void plan_recompute(IterationPlan& plan, const Workload& workload, const SourceLocation& header,
                    Diagnostics& diagnostics) {
  const Program& program = workload.program;
  for (const int64_t trigger : workload.recompute.triggers) {
    const auto t = static_cast<size_t>(trigger);
    const auto pass = std::find_if(program.micro_batches.begin(), program.micro_batches.end(),
                                   [&](LayerRange r) { return in_range(r, t); });
    std::optional<size_t> checkpoint;
    for (const int64_t c : workload.recompute.checkpoints)
      if (c <= trigger && (!checkpoint || static_cast<size_t>(c) > *checkpoint))
        checkpoint = static_cast<size_t>(c);
    if (pass == program.micro_batches.end() || !checkpoint || *checkpoint < pass->begin) {
      diagnostics.warn(header, "recompute trigger layer " + std::to_string(trigger) +
                                   " has no checkpoint before it in its micro-batch pass; "
                                   "no recompute modelled for it");
      continue;
    }
    for (size_t k = *checkpoint; k < t; ++k)
      plan.layers[t].recompute.push_back(k);
  }
}

// The stage programs hold a task per phase and collective of every layer run, per stage; past
// kMaxStageTasks they would take gigabytes and minutes, which the closed form avoids.
void check_stage_tasks(const IterationPlan& plan, int64_t m, const SourceLocation& header) {
  const int64_t pp = plan.parallelism.pp;
  std::vector<double> pass_tasks(plan.passes.size(), 0);
  for (size_t k = 0; k < plan.passes.size(); ++k)
    for (const auto& chunk : plan.passes[k])
      for (const size_t l : chunk)
        pass_tasks[k] +=
            kTasksPerLayerRun + 2.0 * static_cast<double>(plan.layers[l].recompute.size());
  double tasks = 0;
  for (const size_t k : plan.pass_of)
    tasks += pass_tasks[k];
  tasks = (tasks + 2.0 * static_cast<double>(m * plan.chunks)) * static_cast<double>(pp);
  if (tasks > static_cast<double>(kMaxStageTasks))
    throw InputError(header, "expected a workload the pipeline simulation can hold: about " +
                                 std::to_string(static_cast<int64_t>(tasks / 1e6)) +
                                 " million tasks (pp " + std::to_string(pp) + " x " +
                                 std::to_string(m) +
                                 " micro-batches x the layers of a pass) exceed the " +
                                 std::to_string(kMaxStageTasks / 1'000'000) +
                                 " million it takes; --mode analytical takes any size");
}

// Stage-to-stage transfers (pp > 1): the file's bytes or an estimate, priced per boundary on its
// own pair of ranks on NCCL's point-to-point path (GroupPricing::transfer), plus the receiving
// tensor group's all-gather when stages exchange 1/tp shares.
void plan_transfers(IterationPlan& plan, const Workload& workload, CommPricer& pricer,
                    Diagnostics& diagnostics) {
  const Parallelism& par = plan.parallelism;
  plan.transfer_bytes = workload.stage_boundary_bytes.value_or(0);
  if (plan.transfer_bytes == 0)
    plan.transfer_bytes = estimate_transfer_bytes(workload, diagnostics);
  const Time gather =
      workload.stage_boundary_gathered && par.tp > 1
          ? pricer.price(CollectiveKind::AllGather, CommGroup::Tensor, plan.transfer_bytes * par.tp)
                .time
          : Time::zero();
  for (int64_t k = 0; k < par.pp; ++k) {
    plan.transfers.push_back(pricer.transfer(k, plan.transfer_bytes));
    plan.transfers.back().time += gather;
  }
  plan.blocking_p2p = workload.blocking_p2p;
}

}  // namespace

IterationPlan plan_iteration(const Workload& workload, const Cluster& cluster,
                             const SimulationOptions& options, Diagnostics& diagnostics,
                             bool for_closed_form) {
  const SourceLocation header = header_of(workload);
  IterationPlan plan;
  Parallelism& par = plan.parallelism;
  par = workload.parallelism;
  if (options.world_size) par.world_size = *options.world_size;
  if (const std::string error = par.validation_error(); !error.empty())
    throw InputError(header, "expected parallel degrees that fit together: " + error);
  plan.overlap = options.overlap;
  plan.compute_units = options.sm_contention ? cluster.gpu_compute_units : 0;
  plan.contention_overhead = cluster.gpu_contention_overhead;

  plan.schedule = options.schedule;
  // The passes the program lists are what runs (the reader warns where ga says otherwise).
  const int64_t m = static_cast<int64_t>(workload.program.micro_batches.size());
  if (m > 0) par.micro_batches = m;
  choose_schedule(plan, m, header, diagnostics);

  CommPricer pricer(par, cluster, options.placement.value_or(cluster.placement), options,
                    workload.source, diagnostics);
  const Program& program = workload.program;
  plan_layers(plan, program, options, pricer);
  plan_chunks(plan, program, header);
  plan_recompute(plan, workload, header, diagnostics);
  if (!for_closed_form) check_stage_tasks(plan, m, header);

  // Gradient buckets over the last micro-batch's backward, by weight-gradient compute.
  if (!for_closed_form && options.overlap && !program.micro_batches.empty())
    plan_buckets(plan, program, workload.gradient_bucket_bytes, pricer);
  // Parameter gathers over the first micro-batch's forward (overlap_param_gather).
  if (workload.param_gather_bucket_bytes && options.overlap && !program.micro_batches.empty())
    plan_gather_buckets(plan, program, *workload.param_gather_bucket_bytes, pricer);
  plan.aligned_gathers = workload.align_param_gather && !plan.gather_buckets.empty() &&
                         plan.schedule == ScheduleKind::Interleaved;

  if (par.pp > 1) plan_transfers(plan, workload, pricer, diagnostics);
  return plan;
}

std::vector<LayerTiming> layer_timings(const Workload& workload, const IterationPlan& plan) {
  std::vector<LayerTiming> rows;
  rows.reserve(plan.layers.size());
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const Layer& layer = workload.program.layers[i];
    const PlannedLayer& p = plan.layers[i];
    // A collective folded into a phase (Transformer Engine's overlap) is shown as the phase's
    // collective where it has none of its own, its exposed part taken out of the compute.
    const auto phase = [](const PlannedPhase& planned) {
      PhaseTiming t{planned.compute - planned.exposed_overlap, std::nullopt};
      const std::optional<PlannedComm>& c = planned.comm ? planned.comm : planned.overlapped;
      if (c) t.comm = CommTiming{c->comm, c->ranks, c->cost};
      return t;
    };
    rows.push_back({layer.name, layer.line, 1, 0, phase(p.forward), phase(p.input_grad),
                    phase(p.weight_grad)});
  }
  // A pass that several micro-batches list (generated programs) runs once for each of them.
  const auto& passes = workload.program.micro_batches;
  for (size_t k = 1; k < passes.size(); ++k)
    if (passes[k].begin == passes[0].begin && passes[k].end == passes[0].end)
      for (size_t i = passes[k].begin; i < passes[k].end && i < rows.size(); ++i)
        ++rows[i].executions;
  for (size_t t = 0; t < plan.layers.size(); ++t)
    for (const size_t k : plan.layers[t].recompute)
      rows[k].recomputes += rows[t].executions;
  return rows;
}

Result plan_result(std::string mode, const Workload& workload, const Cluster& cluster,
                   const IterationPlan& plan, std::vector<StageTiming> stages, bool layer_rows) {
  Result result;
  result.mode = std::move(mode);
  result.schedule = std::string(to_string(plan.schedule));
  result.workload = workload.name;
  result.cluster = cluster.name;
  result.parallelism = plan.parallelism;
  result.stages = std::move(stages);
  for (const StageTiming& s : result.stages)
    if (s.finish > result.iteration_time) {
      result.iteration_time = s.finish;
      result.critical_stage = s.stage;
    }
  for (const StageTiming& s : result.stages)
    if (s.stage == result.critical_stage) result.breakdown = s.breakdown;
  if (layer_rows) result.layers = layer_timings(workload, plan);
  return result;
}

}  // namespace orrery
