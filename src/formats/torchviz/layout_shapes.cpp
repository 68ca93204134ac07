// Views, permutes, transposes, unsqueezes, slices and concatenations: the layout of a tensor.
#include <algorithm>

#include "formats/torchviz/shape_rules.h"

namespace orrery::shape_rules {

// transpose(d0, d1) keeps no dimensions in the graph. Attention code transposes in two idioms:
// the key before a matmul (k.transpose(-2, -1): the last two dimensions) and heads against tokens
// ([b, t, h, d] <-> [b, h, t, d], q.view(b, t, h, d).transpose(1, 2) and back). A transpose of a
// tensor with heads next to its tokens that does not lead to a batched matmul is the second.
TensorShape Inference::transpose(NodeId id, TensorShape in) const {
  const int h = in.find(Axis::Head), t = in.find(Axis::Token);
  if (h >= 0 && t >= 0 && (h == t + 1 || t == h + 1) && !reaches_batched_matmul(id)) {
    std::swap(in.dims[h], in.dims[t]);
  } else if (in.dims.size() >= 2) {
    std::swap(in.dims[in.dims.size() - 1], in.dims[in.dims.size() - 2]);
  }
  return in;
}

// Whether `id`'s result reaches a Bmm through expands, copies and views only (torch.matmul of
// batched operands: expand, reshape, bmm).
bool Inference::reaches_batched_matmul(NodeId id) const {
  const auto end = chain_end(id, [](const std::string& op) {
    return op == "Expand" || op == "Clone" || op == "ToCopy" || is_reshape(op);
  });
  return end && node(*end).op == "Bmm";
}

TensorShape Inference::reshape(NodeId id, TensorShape in) {
  // (a) merge a replica axis into the batch: copies become rows.
  if (const int r = in.find(Axis::Replica); r >= 0) {
    const int64_t copies = in.dims[r].size;
    in.dims.erase(in.dims.begin() + r);
    if (const int b = in.find(Axis::Batch); b >= 0) {
      in.dims[b].size = saturating_mul(in.dims[b].size, copies);
    } else {
      in.dims.insert(in.dims.begin(), Dim{Axis::Batch, copies});
    }
    if (in.rows == Rows::Samples) in.rows = rows_of_replicas(copies);
    return in;
  }
  // (b) merge heads back into features: [.., token, head, head_dim] -> [.., token, features].
  const int h = in.find(Axis::Head);
  if (h >= 1 && h + 1 < static_cast<int>(in.dims.size()) && in.dims[h + 1].axis == Axis::HeadDim &&
      in.dims[h - 1].axis == Axis::Token) {
    in.dims[h] = {Axis::Feature, saturating_mul(in.dims[h].size, in.dims[h + 1].size)};
    in.dims.erase(in.dims.begin() + h + 1);
    return in;
  }
  // (c) a view before a permute splits the features into heads.
  const std::string next = first_consumer_op(id);
  if ((next == "Permute" || next == "Transpose") && h < 0 && !in.dims.empty() &&
      in.dims.back().axis == Axis::Feature) {
    const int64_t features = in.dims.back().size;
    const int64_t heads_count = settings_.heads(features);
    in.dims.back() = {Axis::Head, heads_count};
    in.dims.push_back({Axis::HeadDim, features / heads_count});
  }
  return in;  // (d) otherwise the view keeps the logical shape
}

TensorShape Inference::permute(TensorShape in) {
  const int h = in.find(Axis::Head);
  const auto swap = [&](int a, int b) { std::swap(in.dims[a], in.dims[b]); };
  if (h >= 2 && in.dims[h - 1].axis == Axis::Token) {
    swap(h - 1, h);  // [b, t, h, d] -> [b, h, t, d]
  } else if (h >= 1 && h + 1 < static_cast<int>(in.dims.size()) &&
             in.dims[h + 1].axis == Axis::Token) {
    swap(h, h + 1);  // [b, h, t, d] -> [b, t, h, d]
  } else if (in.find(Axis::Stack) == 0 && in.dims.size() >= 2) {
    swap(0, 1);  // stacked outputs: [stack, batch, ...] -> [batch, stack, ...]
  }
  return in;
}

TensorShape Inference::unsqueeze(NodeId id, TensorShape in) {
  const std::string next = first_consumer_op(id);
  const int b = in.find(Axis::Batch);
  if (next == "Expand") {
    in.dims.insert(in.dims.begin() + (b >= 0 ? b + 1 : 0), Dim{Axis::Replica, 1});
  } else if (next == "Cat" || next == "Stack") {
    if (b >= 0) {
      in.dims.insert(in.dims.begin(), Dim{Axis::Stack, 1});
    } else {
      in.dims.insert(in.dims.begin(), Dim{Axis::Batch, 1});  // a selected row, one of a sample's
      in.rows = Rows::Part;
    }
  } else {
    in.dims.push_back({Axis::Unit, 1});
  }
  return in;
}

TensorShape Inference::slice(NodeId id, NodeId input, TensorShape in) {
  // The slices of one tensor, in file order.
  std::vector<NodeId> siblings;
  for (const NodeId c : node(input).consumers)
    if (node(c).op == "Slice") siblings.push_back(c);
  std::sort(siblings.begin(), siblings.end());
  const int t = in.find(Axis::Token);
  int64_t joined = 0;
  for (const int64_t part : in.segments)
    joined += part;
  if (in.segments.size() >= 2 && t >= 0 && joined == in.dims[t].size) {
    // Concatenated tokens: each slice takes back its part, in the concatenation's order.
    const size_t k =
        static_cast<size_t>(std::find(siblings.begin(), siblings.end(), id) - siblings.begin());
    in.dims[t].size = in.segments[std::min(k, in.segments.size() - 1)];
    in.segments.clear();
    return in;
  }
  const int b = in.find(Axis::Batch);
  const auto parts = static_cast<int64_t>(siblings.size());
  if (parts >= 2 && b >= 0 && in.dims[b].size % parts == 0) {
    in.dims[b].size /= parts;  // sibling slices tile the rows: one sample's each
    in.rows = Rows::Part;
    return in;
  }
  // x[:, a:b, :] makes one Slice per dimension it names; after the one a rule above sized, the
  // others are the full slices of the same expression.
  if (node(input).op == "Slice" &&
      std::none_of(in.dims.begin(), in.dims.end(), [](const Dim& d) { return d.bound; }))
    return in;
  // The bounds are lost: every size is an upper bound until an operator needs less of it.
  for (Dim& d : in.dims)
    d.bound = d.size > 1;
  return in;
}

TensorShape Inference::cat(NodeId id) {
  const GraphNode& n = node(id);
  if (n.inputs.empty()) return {};
  std::vector<const TensorShape*> parts;
  for (const NodeId i : n.inputs)
    parts.push_back(&shape(i));
  TensorShape out = *parts.front();
  const size_t rank = out.dims.size();
  if (rank == 0) return out;
  int axis = -1;
  for (size_t i = 0; i < rank && axis < 0; ++i)
    for (const TensorShape* p : parts)
      if (p->dims.size() == rank && p->dims[i].size != out.dims[i].size) axis = static_cast<int>(i);
  const bool all_parts = std::all_of(parts.begin(), parts.end(),
                                     [](const TensorShape* p) { return p->rows == Rows::Part; });
  if (axis < 0) {
    // Equal shapes: along the first size-1 axis (stacking); rows of one sample's parts join
    // along the batch; otherwise along the tokens.
    for (size_t i = 0; i < rank && axis < 0; ++i)
      if (out.dims[i].size == 1) axis = static_cast<int>(i);
    if (axis < 0 && !all_parts) axis = out.find(Axis::Token);
    if (axis < 0) axis = std::max(0, out.find(Axis::Batch));
  }
  int64_t total = 0;
  std::vector<int64_t> segments;
  for (const TensorShape* p : parts) {
    const int64_t size = p->dims.size() == rank ? p->dims[axis].size : 0;
    total = saturating_add(total, size);
    if (!p->segments.empty())
      segments.insert(segments.end(), p->segments.begin(), p->segments.end());
    else
      segments.push_back(size);
  }
  out.dims[axis].size = total;
  if (out.dims[axis].axis == Axis::Unit) out.dims[axis].axis = Axis::Other;
  if (out.dims[axis].axis == Axis::Token) out.segments = segments;
  if (out.dims[axis].axis == Axis::Batch && all_parts) out.rows = rows_for(total, parts.size());
  return out;
}

// Learned tokens that the graph concatenates with the sequence (a Q-Former's query tokens, a ViT's
// class token): 3-D parameters (1, X, C) that reach a Cat through their AccumulateGrad, casts,
// views and an Expand to the batch, however many. A (1, X, C) parameter used otherwise (minGPT's
// position embedding, sliced and added) adds no tokens.
int64_t concatenated_learned_tokens(const AutogradGraph& graph) {
  int64_t tokens = 0;
  for (NodeId id = 0; id < graph.nodes.size(); ++id) {
    const GraphNode& n = graph.nodes[id];
    if (n.kind != NodeKind::Parameter || n.shape.size() != 3 || n.shape[0] != 1) continue;
    std::vector<NodeId> frontier = {id};
    std::vector<bool> seen(graph.nodes.size(), false);
    bool joined = false;
    while (!frontier.empty() && !joined) {
      std::vector<NodeId> next;
      for (const NodeId at : frontier) {
        for (const NodeId c : graph.nodes[at].consumers) {
          const GraphNode& consumer = graph.nodes[c];
          if (consumer.op == "Cat") joined = true;
          if ((consumer.kind == NodeKind::AccumulateGrad || consumer.op == "Expand" ||
               consumer.op == "ToCopy" || consumer.op == "Clone" || is_reshape(consumer.op)) &&
              !seen[c]) {
            seen[c] = true;
            next.push_back(c);
          }
        }
      }
      frontier = std::move(next);
    }
    if (joined) tokens = saturating_add(tokens, n.shape[1]);
  }
  return tokens;
}

}  // namespace orrery::shape_rules
