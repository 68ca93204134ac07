// The copies and row selections of a beam-search mixture of experts: an expand whose target the
// graph does not keep, and advanced indexing (x[idx]), whose row count is data. Neither operator's
// semantics gives the count, so it comes from the routing the graph config describes: 'beams' (b)
// and 'shared_expert' (the expert that takes the universal beam; r = b - 1 routed beams, or b with
// none), each default warned where a rule needs it (graph_settings.h, docs/formats.md).
#include <algorithm>
#include <vector>

#include "formats/torchviz/shape_rules.h"

namespace orrery::shape_rules {
namespace {

int count_readers(const AutogradGraph& graph, NodeId id, const std::string& op) {
  const auto& readers = graph.nodes[id].consumers;
  return static_cast<int>(std::count_if(readers.begin(), readers.end(),
                                        [&](NodeId c) { return graph.nodes[c].op == op; }));
}

}  // namespace

// Whether the copies an expand makes are then indexed (through clones, views and permutes): the
// candidates a beam index picks from.
bool Inference::replica_is_indexed(NodeId expand_node) const {
  const auto end = chain_end(expand_node, [](const std::string& op) {
    return op == "Clone" || is_reshape(op) || op == "Permute" || op == "Transpose";
  });
  return end && node(*end).op == "Index";
}

// x.unsqueeze(k).expand(...): the new size-1 replica axis becomes one copy per beam, or one per
// routed beam when the copies are indexed (a beam index picks among the routed candidates). A
// batch of 1 (learned tokens expanded to the batch) becomes the batch. Otherwise the graph keeps
// no target and the shape stays.
TensorShape Inference::expand(NodeId id, TensorShape in) {
  if (const int r = in.find(Axis::Replica); r >= 0 && in.dims[r].size == 1) {
    in.dims[r].size = replica_is_indexed(id) ? settings_.routed_beams() : settings_.beams();
    return in;
  }
  if (const int b = in.find(Axis::Batch); b >= 0 && in.dims[b].size == 1)
    in.dims[b].size = settings_.batch();
  return in;
}

// The rows a view gets when it merges `copies` replicas into the batch.
Rows Inference::rows_of_replicas(int64_t copies) {
  return copies == settings_.beams() ? Rows::Beams : Rows::Routed;
}

// Whether `id`'s result is the data operand of an expert's linear layer (through casts and views):
// true for the shared expert, false for a routed one, nullopt for no expert.
std::optional<bool> Inference::feeds_shared_expert(NodeId id) {
  std::vector<NodeId> frontier = {id};
  std::vector<bool> seen(g_.nodes.size(), false);
  while (!frontier.empty()) {
    std::vector<NodeId> next;
    for (const NodeId at : frontier) {
      for (const NodeId c : node(at).consumers) {
        const std::string& op = node(c).op;
        if (op == "Addmm" || op == "Mm") {
          const LinearOperands operands = linear_operands(g_, result_, c);
          const auto p = operands.weight_is_parameter ? parameter_of(g_, result_, *operands.weight)
                                                      : std::nullopt;
          if (const auto e = p ? expert_of(node(*p).name) : std::nullopt)
            return settings_.is_shared_expert(*e);
        } else if ((op == "ToCopy" || is_reshape(op) || op == "Clone") && !seen[c]) {
          seen[c] = true;
          next.push_back(c);
        }
      }
    }
    frontier = std::move(next);
  }
  return std::nullopt;
}

// Every beam (B b) indexed: the routed beams B r when the result feeds a routed expert's linear
// layer or is indexed again, one row per sample when it feeds the shared expert or a sibling index
// exists (the universal beam), else all rows (a reordering). Routed beams indexed: one row per
// sample at the end of a chain of indexes (the best beam), else the routed beams. Any other
// tensor: the rows stay.
TensorShape Inference::index(NodeId id, NodeId input, TensorShape in) {
  const int b = std::max(0, in.find(Axis::Batch));
  if (in.dims.empty() || (in.rows != Rows::Beams && in.rows != Rows::Routed)) return in;
  const bool indexed_again = count_readers(g_, id, "Index") > 0;
  Rows rows = in.rows;
  if (in.rows == Rows::Beams) {
    if (const auto shared = feeds_shared_expert(id))
      rows = *shared ? Rows::Samples : Rows::Routed;
    else if (indexed_again)
      rows = Rows::Routed;
    else if (count_readers(g_, input, "Index") >= 2)
      rows = Rows::Samples;
  } else if (node(input).op == "Index" && !indexed_again) {
    rows = Rows::Samples;
  }
  const int64_t samples = settings_.settings().batch;
  in.dims[b].size = rows == Rows::Samples  ? samples
                    : rows == Rows::Routed ? saturating_mul(samples, settings_.routed_beams())
                                           : saturating_mul(samples, settings_.beams());
  in.rows = rows;
  return in;
}

// The rows of a batch that a concatenation of `parts` parts of single samples joined to `total`.
Rows Inference::rows_for(int64_t total, size_t parts) const {
  const int64_t samples = settings_.settings().batch;
  if (static_cast<int64_t>(parts) != samples) return Rows::Part;
  if (total == saturating_mul(samples, settings_.settings().beams)) return Rows::Beams;
  if (total == saturating_mul(samples, settings_.routed_beams_unwarned())) return Rows::Routed;
  return total == samples ? Rows::Samples : Rows::Part;
}

}  // namespace orrery::shape_rules
