#include "dataflow/sharding_search.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "dataflow/milp.h"

namespace orrery {
namespace {

enum class Layout : uint8_t { Replicated, ColumnSplit, RowSplit };  // RR, RS, SR
enum class Operand : uint8_t { A, B, BTransposed, Elementwise };

Layout produced(TensorAxis split) {
  switch (split) {
    case TensorAxis::Outer:
    case TensorAxis::M:
      return Layout::RowSplit;
    case TensorAxis::N:
      return Layout::ColumnSplit;
    default:
      return Layout::Replicated;
  }
}

Layout required(TensorAxis split, Operand operand) {
  switch (split) {
    case TensorAxis::Outer:
      return Layout::RowSplit;
    case TensorAxis::M:
      return operand == Operand::A || operand == Operand::Elementwise ? Layout::RowSplit
                                                                      : Layout::Replicated;
    case TensorAxis::K:
      return operand == Operand::B ? Layout::RowSplit : Layout::ColumnSplit;
    case TensorAxis::N:
      if (operand == Operand::A) return Layout::Replicated;
      return operand == Operand::BTransposed ? Layout::RowSplit : Layout::ColumnSplit;
    case TensorAxis::None:
      return Layout::Replicated;
  }
  return Layout::Replicated;
}

double relayout_bytes(Layout from, Layout to, double bytes) {
  return from == Layout::Replicated || from == to ? 0.0 : bytes;
}

struct Mode {
  TensorAxis axis = TensorAxis::None;
  bool swap = false;  // two-input GEMM whose operands the sizes cannot tell apart: a <-> b
};

class ShardingModel {
 public:
  ShardingModel(const DataflowProblem& problem, const DataflowGraph& graph)
      : problem_(problem), graph_(graph) {
    const size_t n = problem.kernels.size();
    modes_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const DataflowKernel& kernel = problem.kernels[k];
      const std::vector<TensorAxis> axes =
          kernel.sharding ? std::vector<TensorAxis>{*kernel.sharding} : allowed_axes(kernel);
      for (const TensorAxis axis : axes)
        for (const bool swap : {false, true})
          if (!swap || swappable(k)) modes_[k].push_back({axis, swap});
    }
  }

  const std::vector<Mode>& modes(size_t k) const { return modes_[k]; }

  double kernel_bytes(size_t k, const Mode& m) const {
    const DataflowKernel& kernel = problem_.kernels[k];
    return m.axis == TensorAxis::K ? kernel.output_bytes : 0.0;
  }

  Layout consumer_layout(size_t edge, const Mode& m) const {
    const size_t d = graph_.edges()[edge].to;
    return required(m.axis, operand(d, edge, m.swap));
  }

  double edge_bytes(size_t edge, const Mode& from, const Mode& to) const {
    return relayout_bytes(produced(from.axis), consumer_layout(edge, to),
                          graph_.edges()[edge].tensor_bytes);
  }

 private:
  std::vector<TensorAxis> allowed_axes(const DataflowKernel& k) const {
    std::vector<TensorAxis> axes;
    const bool elementwise = k.variant == KernelVariant::Elementwise ||
                             k.variant == KernelVariant::ElementwiseInputInput;
    const auto usable = [&](TensorAxis a, int64_t size) {
      if (size <= 1 || a == k.tiling) return;
      if (a == TensorAxis::K &&
          (elementwise || k.collective == DataflowCollective::AllReducePeriodic))
        return;
      axes.push_back(a);
    };
    if (k.outer > 1) {
      usable(TensorAxis::Outer, k.outer);
    } else {
      usable(TensorAxis::M, k.m);
      usable(TensorAxis::K, k.k);
      usable(TensorAxis::N, k.n);
    }
    if (k.variant != KernelVariant::GemmInputWeight || axes.empty())
      axes.push_back(TensorAxis::None);
    return axes;
  }

  // Operand sizes of a two-input GEMM that an edge's tensor matches (compared as float32, the
  // precision of the file's sizes).
  bool matches(double tensor, double operand_bytes) const {
    return static_cast<float>(tensor) == static_cast<float>(operand_bytes);
  }

  // For a two-input GEMM: the operand of each input edge, a and b decided by size where possible.
  std::vector<Operand> gemm_operands(size_t k, bool swap) const {
    const DataflowKernel& kernel = problem_.kernels[k];
    const double w = static_cast<double>(problem_.run.word_bytes);
    const double outer = static_cast<double>(kernel.outer), m = static_cast<double>(kernel.m),
                 kk = static_cast<double>(kernel.k), n = static_cast<double>(kernel.n);
    const double a_bytes = outer * m * kk * w, b_bytes = outer * kk * n * w;
    const Operand b = kernel.tiling == TensorAxis::K ? Operand::BTransposed : Operand::B;
    const auto& in = graph_.in_edges(k);
    std::vector<Operand> result(in.size(), Operand::A);
    std::vector<size_t> ambiguous;
    bool a_taken = false, b_taken = false;
    for (size_t i = 0; i < in.size(); ++i) {
      const double t = graph_.edges()[in[i]].tensor_bytes;
      const bool is_a = matches(t, a_bytes), is_b = matches(t, b_bytes);
      if (is_a != is_b) {
        result[i] = is_a ? Operand::A : b;
        (is_a ? a_taken : b_taken) = true;
      } else {
        ambiguous.push_back(i);
      }
    }
    // The operands no edge claimed by size, in the order the ambiguous edges take them.
    std::array<Operand, 2> pool{Operand::A, b};
    size_t free = 2;
    if (a_taken != b_taken) {
      pool[0] = a_taken ? b : Operand::A;
      free = 1;
    }
    if (swap && free == 2) std::swap(pool[0], pool[1]);
    for (size_t j = 0; j < ambiguous.size(); ++j)
      result[ambiguous[j]] = pool[std::min(j, free - 1)];
    return result;
  }

  bool swappable(size_t k) const {
    if (problem_.kernels[k].variant != KernelVariant::GemmInputInput) return false;
    return gemm_operands(k, false) != gemm_operands(k, true);
  }

  Operand operand(size_t k, size_t edge, bool swap) const {
    const DataflowKernel& kernel = problem_.kernels[k];
    switch (kernel.variant) {
      case KernelVariant::GemmInputWeight:
        return kernel.tiling == TensorAxis::K ? Operand::BTransposed : Operand::B;
      case KernelVariant::GemmInputInput: {
        const auto& in = graph_.in_edges(k);
        const auto ops = gemm_operands(k, swap);
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i] == edge) return ops[i];
        return Operand::A;
      }
      default:
        return Operand::Elementwise;
    }
  }

  const DataflowProblem& problem_;
  const DataflowGraph& graph_;
  std::vector<std::vector<Mode>> modes_;
};

}  // namespace

ShardingPlan choose_sharding(const DataflowProblem& problem, const DataflowGraph& graph,
                             double time_limit_s) {
  const ShardingModel model(problem, graph);
  const size_t n = problem.kernels.size();
  constexpr double kScale = 1e-9;  // objective in GB keeps CBC's tolerances meaningful

  Milp milp;
  std::vector<std::vector<size_t>> x(n);
  for (size_t k = 0; k < n; ++k) {
    std::vector<std::pair<size_t, double>> one_hot;
    for (const Mode& m : model.modes(k)) {
      x[k].push_back(milp.add_binary(kScale * model.kernel_bytes(k, m)));
      one_hot.push_back({x[k].back(), 1.0});
    }
    milp.add_row(one_hot, 1, 1);
  }
  for (size_t e = 0; e < graph.edges().size(); ++e) {
    const size_t s = graph.edges()[e].from, d = graph.edges()[e].to;
    for (size_t a = 0; a < model.modes(s).size(); ++a)
      for (size_t b = 0; b < model.modes(d).size(); ++b) {
        const double bytes = model.edge_bytes(e, model.modes(s)[a], model.modes(d)[b]);
        if (bytes <= 0) continue;
        // y >= x_s,a + x_d,b - 1: paid when both modes are chosen.
        const size_t y = milp.add_continuous(0, 1, kScale * bytes);
        milp.add_row({{y, 1.0}, {x[s][a], -1.0}, {x[d][b], -1.0}}, -1, Milp::kInfinity);
      }
  }
  const MilpSolution solution = milp.solve(time_limit_s, 0);
  if (!solution.found)
    throw std::runtime_error("the tensor-parallel sharding search found no plan");

  std::vector<Mode> chosen(n);
  for (size_t k = 0; k < n; ++k) {
    size_t best = 0;
    for (size_t i = 0; i < x[k].size(); ++i)
      if (solution.values[x[k][i]] > solution.values[x[k][best]]) best = i;
    chosen[k] = model.modes(k)[best];
  }

  ShardingPlan plan;
  plan.chosen = true;
  plan.proven_optimal = solution.proven_optimal;
  for (size_t k = 0; k < n; ++k) {
    const DataflowKernel& kernel = problem.kernels[k];
    plan.axis.push_back(chosen[k].axis);
    DataflowCollective c = kernel.collective;
    if (!kernel.sharding && c != DataflowCollective::AllReducePeriodic)
      c = chosen[k].axis == TensorAxis::K ? DataflowCollective::AllReduce
                                          : DataflowCollective::None;
    plan.collective.push_back(c);
    plan.communicated_bytes += model.kernel_bytes(k, chosen[k]);
  }
  for (size_t e = 0; e < graph.edges().size(); ++e) {
    const size_t s = graph.edges()[e].from, d = graph.edges()[e].to;
    const double bytes = model.edge_bytes(e, chosen[s], chosen[d]);
    plan.communicated_bytes += bytes;
    DataflowCollective c = DataflowCollective::None;
    if (bytes > 0)
      c = model.consumer_layout(e, chosen[d]) == Layout::Replicated ? DataflowCollective::AllGather
                                                                    : DataflowCollective::AllToAll;
    plan.edge_collective.push_back(c);
  }
  return plan;
}

}  // namespace orrery
