// The values a torchviz graph does not give, resolved once: from the graph config
// (--graph-config, graph_config.h) where it names them, else from what the graph shows (the
// output's sizes, the learned tokens), else a documented default. Each default is warned the first
// time shape inference needs it, never before, so that a graph that does not need a value is not
// warned about it (docs/formats.md, "The graph config").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/diagnostics.h"
#include "core/dtype.h"
#include "formats/torchviz/autograd_graph.h"
#include "formats/torchviz/graph_config.h"

namespace orrery {

// The values after the config and the defaults.
struct GraphSettings {
  int64_t batch = 1;
  int64_t text_tokens = 1;
  int64_t beams = 2;
  DType autocast = DType::FP16;  // what the graph's casts convert fp32 tensors to (torch.autocast's
                                 // default on CUDA)
};

class GraphSettingsResolver {
 public:
  // `learned_tokens`: tokens of learned parameters that the graph concatenates with the sequence;
  // `autocast`: whether the graph casts tensors.
  GraphSettingsResolver(const AutogradGraph& graph, const GraphConfig& config,
                        Diagnostics& diagnostics, int64_t learned_tokens, bool autocast);

  const GraphSettings& settings() const { return settings_; }
  const GraphConfig& config() const { return config_; }

  int64_t batch();
  int64_t text_tokens();
  // Tokens of an input of node `id` that needs no gradient and whose rows the graph does not
  // state: the graph config's, else as many as the output has (none: the input is
  // [batch, features]).
  std::optional<int64_t> external_tokens(NodeId id);
  // The graph states the size of node `id`'s external input: a configured 'external_tokens' is not
  // used there (warned once).
  void external_tokens_unused(NodeId id, const std::string& shape);
  int64_t heads(int64_t features);

  // Beam-search mixture of experts: b beams, of which the routed ones are r = b - 1 when one is
  // the universal beam (a shared expert takes it), else r = b.
  int64_t beams();
  int64_t routed_beams();
  // The same without warning: to recognise rows, not to make them.
  int64_t routed_beams_unwarned() const;
  // Whether expert `expert` is the one of its list that takes the universal beam.
  bool is_shared_expert(const ExpertId& expert);

  // "batch 4 (the output's first size), beams 2 (default), ..." of the settings used so far.
  std::string summary() const;

 private:
  void warn(const std::string& message) { diagnostics_.warn({graph_.path, 0}, message); }
  void warn(NodeId id, const std::string& message) {
    diagnostics_.warn(graph_.where(id), graph_.describe(id) + ": " + message);
  }
  SharedExpert shared_expert();
  void check_shared_expert_number() const;

  const AutogradGraph& graph_;
  const GraphConfig& config_;
  Diagnostics& diagnostics_;
  const GraphNode* output_ = nullptr;
  GraphSettings settings_;
  std::map<std::string, std::pair<int64_t, int64_t>> expert_range_;  // list -> (first, last)
  std::string batch_source_, text_tokens_source_, text_tokens_reason_;
  std::set<std::string> used_;      // settings shape inference asked for
  std::set<std::string> defaults_;  // settings still at an unreported default
  std::set<std::string> warned_;
};

}  // namespace orrery
