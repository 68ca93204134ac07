// Reader for torchviz autograd graphs (Graphviz DOT from torchviz.make_dot; seed 000),
// parsed with Graphviz's cgraph. It turns the graph into one data-parallel training step:
// - forward: every operator with a kernel, in topological order, layer by layer
//   (formats/torchviz/autograd_graph.h), its FLOPs and bytes from the inferred shapes
//   (shape_inference.h) as compute demands (op_kernels.h); views cost nothing;
// - backward: the same operators in reverse, each with its input-gradient kernels and, for
//   parameterised ones, its weight-gradient kernels; a tensor read by several operators first
//   sums their gradients;
// - gradients: fp32 (4 B per parameter), all-reduced in the data-parallel group in DDP's buckets
//   (reverse registration order, a 1 MiB first bucket, then 25 MiB, unless the graph config says
//   otherwise), each issued asynchronously once its gradients are complete and the bucket before
//   it has been issued, and awaited before the optimizer step; the graph is checked for what
//   torchviz always draws, and refused with the node's line where it is not (autograd_graph.h,
//   shape_inference.h); with ReaderOptions::ep > 1, `experts.*` parameters are sharded
//   over the expert-parallel group: their buckets reduce among expert replicas (dp / ep), and each
//   expert's first and last linear layer exchange their activations by all-to-all;
// - an optimizer step (Adam unless configured) after the backward.
// What the graph cannot say comes from ReaderOptions::graph_config (graph_config.h), each default
// it needs reported as a warning. The graph does not say how many GPUs run it
// (Workload::world_size_from_file is false).
#pragma once

#include <string>
#include <string_view>

#include "core/diagnostics.h"
#include "formats/reader_options.h"
#include "workload/workload.h"

namespace orrery {

// True when the content is a DOT digraph that names autograd functions.
bool looks_like_torchviz_dot(std::string_view content);

// Throws InputError ("path:line: expected ...") on malformed input.
Workload read_torchviz_dot(const std::string& path, std::string_view content,
                           const ReaderOptions& options, Diagnostics& diagnostics);

}  // namespace orrery
