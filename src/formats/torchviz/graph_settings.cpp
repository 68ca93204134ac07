#include "formats/torchviz/graph_settings.h"

#include <algorithm>
#include <set>
#include <string>

#include "formats/torchviz/tensor_shape.h"

namespace orrery {

GraphSettingsResolver::GraphSettingsResolver(const AutogradGraph& graph, const GraphConfig& config,
                                             Diagnostics& diagnostics, int64_t learned_tokens,
                                             bool autocast)
    : graph_(graph), config_(config), diagnostics_(diagnostics) {
  for (const GraphNode& n : graph.nodes) {
    if (n.kind == NodeKind::Output && !output_) output_ = &n;
    if (n.kind != NodeKind::Parameter) continue;
    if (const auto e = expert_of(n.name)) {
      const auto [it, added] = expert_range_.try_emplace(e->module, e->index, e->index);
      if (!added) {
        it->second.first = std::min(it->second.first, e->index);
        it->second.second = std::max(it->second.second, e->index);
      }
    }
  }
  check_shared_expert_number();
  GraphSettings& s = settings_;
  const bool output_has_batch = output_ && !output_->shape.empty();
  if (config_.batch) {
    s.batch = *config_.batch;
    batch_source_ = "graph config";
  } else if (output_has_batch) {
    s.batch = output_->shape[0];
    batch_source_ = "the output's first size";
  } else {
    defaults_.insert("batch");
    batch_source_ = "default";
  }
  if (config_.beams) s.beams = *config_.beams;
  if (config_.dtype) s.autocast = *config_.dtype;
  // The output's second size is its tokens only when it has a feature axis after them: a 2-D
  // output (a classifier's (batch, classes)) has none.
  const bool output_has_tokens = output_ && output_->shape.size() >= 3;
  if (config_.text_tokens) {
    s.text_tokens = *config_.text_tokens;
    text_tokens_source_ = "graph config";
  } else if (output_has_tokens && output_->shape[1] > learned_tokens) {
    s.text_tokens = output_->shape[1] - learned_tokens;
    text_tokens_source_ = learned_tokens > 0
                              ? "the output's tokens - " + std::to_string(learned_tokens) +
                                    " learned tokens concatenated with them"
                              : "the output's tokens";
  } else {
    defaults_.insert("text_tokens");
    text_tokens_source_ = "default";
    const TensorShape declared = plain_shape(output_ ? output_->shape : std::vector<int64_t>{});
    text_tokens_reason_ =
        !output_ ? "no output tensor gives the text length"
        : !output_has_tokens
            ? "the output " + declared.to_string() +
                  " has no token dimension (it is not [batch, tokens, features]), so the graph "
                  "does not give the text length"
            : "the output's " + std::to_string(output_->shape[1]) + " tokens are all " +
                  std::to_string(learned_tokens) +
                  " learned tokens concatenated with the text, so the graph does not give the "
                  "text length";
  }
  if (autocast && !config_.dtype)
    warn("the graph casts tensors (autocast) but not to which type; assuming " +
         std::string(to_string(s.autocast)) + " (graph config 'dtype')");
}

int64_t GraphSettingsResolver::batch() {
  if (defaults_.erase("batch"))
    warn("no output tensor gives the batch; assuming 1 (graph config 'batch')");
  return settings_.batch;
}

int64_t GraphSettingsResolver::text_tokens() {
  if (defaults_.erase("text_tokens"))
    warn(text_tokens_reason_ + "; assuming 1 token (graph config 'text_tokens')");
  used_.insert("text_tokens");
  return settings_.text_tokens;
}

std::optional<int64_t> GraphSettingsResolver::external_tokens(NodeId id) {
  used_.insert("external_tokens");
  if (config_.external_tokens) return *config_.external_tokens;
  const std::optional<int64_t> tokens = output_ && output_->shape.size() >= 3
                                            ? std::optional<int64_t>(output_->shape[1])
                                            : std::nullopt;
  if (warned_.insert("external_tokens").second) {
    warn(id,
         "reads an input that needs no gradient (from outside the graph, e.g. frozen "
         "encoder features) whose size the graph does not state; assuming " +
             (tokens ? std::to_string(*tokens) + " tokens, as many as the output has"
                     : std::string("one row per sample, as the output has")) +
             " (graph config 'external_tokens')");
  }
  return tokens;
}

void GraphSettingsResolver::external_tokens_unused(NodeId id, const std::string& shape) {
  if (config_.external_tokens && warned_.insert("external_tokens unused").second)
    warn(id,
         "graph config 'external_tokens' not used here: the graph's output gives this "
         "input's size, " +
             shape);
}

int64_t GraphSettingsResolver::heads(int64_t features) {
  used_.insert("heads");
  if (config_.heads && features % *config_.heads == 0) return *config_.heads;
  const int64_t fallback = std::max<int64_t>(1, features / 64);
  if (warned_.insert("heads").second) {
    warn(config_.heads
             ? "graph config 'heads' " + std::to_string(*config_.heads) + " does not divide the " +
                   std::to_string(features) + " features; assuming " + std::to_string(fallback) +
                   " heads"
             : "attention heads are not in the graph; assuming " + std::to_string(features) +
                   " / 64 = " + std::to_string(fallback) + " heads (graph config 'heads')");
  }
  return fallback;
}

int64_t GraphSettingsResolver::beams() {
  used_.insert("beams");
  if (!config_.beams && warned_.insert("beams").second)
    warn("the routing beams of the mixture of experts are not in the graph; assuming " +
         std::to_string(settings_.beams) + " (graph config 'beams')");
  return settings_.beams;
}

// A shared expert given by number must be an expert of the graph's lists, if it has any.
void GraphSettingsResolver::check_shared_expert_number() const {
  if (!config_.shared_expert || config_.shared_expert->kind != SharedExpert::Kind::Number ||
      expert_range_.empty())
    return;
  const int64_t k = config_.shared_expert->number;
  for (const GraphNode& n : graph_.nodes)
    if (n.kind == NodeKind::Parameter)
      if (const auto e = expert_of(n.name); e && e->index == k) return;
  std::set<std::string> ranges;  // what the lists span, to say what was expected
  for (const auto& [module, range] : expert_range_)
    ranges.insert(std::to_string(range.first) + "-" + std::to_string(range.second));
  std::string numbered;
  for (const std::string& r : ranges)
    numbered += (numbered.empty() ? "" : ", ") + r;
  throw InputError({config_.source, config_.shared_expert_line},
                   "'shared_expert': expected the number of an expert in the graph's expert lists "
                   "(numbered " +
                       numbered + "), found " + std::to_string(k));
}

SharedExpert GraphSettingsResolver::shared_expert() {
  used_.insert("shared_expert");
  if (config_.shared_expert) return *config_.shared_expert;
  const SharedExpert fallback;
  if (warned_.insert("shared_expert").second)
    warn(
        "which expert of each expert list takes the universal beam of the mixture of experts is "
        "not in the graph; assuming the " +
        fallback.to_string() + "-numbered (graph config 'shared_expert')");
  return fallback;
}

int64_t GraphSettingsResolver::routed_beams() {
  const int64_t b = beams();
  return shared_expert().kind == SharedExpert::Kind::None ? b : b - 1;
}

int64_t GraphSettingsResolver::routed_beams_unwarned() const {
  const bool none =
      config_.shared_expert && config_.shared_expert->kind == SharedExpert::Kind::None;
  return none ? settings_.beams : settings_.beams - 1;
}

bool GraphSettingsResolver::is_shared_expert(const ExpertId& expert) {
  const SharedExpert shared = shared_expert();
  const auto range = expert_range_.find(expert.module);
  switch (shared.kind) {
    case SharedExpert::Kind::Last:
      return range != expert_range_.end() && expert.index == range->second.second;
    case SharedExpert::Kind::First:
      return range != expert_range_.end() && expert.index == range->second.first;
    case SharedExpert::Kind::Number:
      return expert.index == shared.number;
    case SharedExpert::Kind::None:
      return false;
  }
  return false;
}

std::string GraphSettingsResolver::summary() const {
  const GraphSettings& s = settings_;
  std::string text = "batch " + std::to_string(s.batch) + " (" + batch_source_ + ")";
  if (used_.count("text_tokens"))
    text += ", text_tokens " + std::to_string(s.text_tokens) + " (" + text_tokens_source_ + ")";
  if (used_.count("external_tokens"))
    text +=
        config_.external_tokens
            ? ", external_tokens " + std::to_string(*config_.external_tokens) + " (graph config)"
            : std::string(", external_tokens (default: the output's tokens)");
  if (used_.count("heads")) text += config_.heads ? ", heads (graph config)" : ", heads (default)";
  if (used_.count("beams"))
    text +=
        ", beams " + std::to_string(s.beams) + (config_.beams ? " (graph config)" : " (default)");
  if (used_.count("shared_expert"))
    text += ", shared_expert " + (config_.shared_expert
                                      ? config_.shared_expert->to_string() + " (graph config)"
                                      : std::string("last (default)"));
  return text;
}

}  // namespace orrery
