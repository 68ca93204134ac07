#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cluster/cluster.h"
#include "cluster/cluster_presets.h"
#include "hardware/device_file.h"
#include "models/model_counts.h"
#include "models/model_file.h"
#include "models/model_presets.h"

namespace orrery {
namespace {

std::string billions(int64_t count) {
  return count >= 1'000'000'000 ? fmt::format("{:.1f} B", static_cast<double>(count) / 1e9)
                                : fmt::format("{:.0f} M", static_cast<double>(count) / 1e6);
}

// "174.6 B parameters, 96 layers, hidden 12288, 96 heads", with the key-value heads of GQA, MLA
// and the MoE's experts where the model has them.
std::string model_summary(const ModelSpec& m) {
  const ParameterCount p = parameter_count(m);
  std::string text = billions(p.total()) + " parameters";
  if (p.active != p.total()) text += " (" + billions(p.active) + " active)";
  text += fmt::format(", {} layers, hidden {}, {} heads", m.layers, m.hidden, m.heads);
  if (m.attention == AttentionKind::Gqa) text += fmt::format(" ({} kv)", m.kv_heads);
  if (m.attention == AttentionKind::Mla) text += " (MLA)";
  if (m.moe) text += fmt::format(", {} experts top-{}", m.moe->experts, m.moe->top_k);
  return text;
}

}  // namespace

std::function<int()> add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List the built-in cluster, device and model presets");
  auto show = std::make_shared<std::string>();
  cmd->add_option("--show", *show,
                  "Print the YAML of one preset (a starting point for your own file)");
  return [show]() {
    if (!show->empty()) {
      if (const auto text = cluster_preset_text(*show)) {
        std::cout << *text;
        return 0;
      }
      if (const std::string_view device = device_preset_text(*show); !device.empty()) {
        std::cout << device;
        return 0;
      }
      const auto model = model_preset_text(*show);
      if (!model) throw CLI::ValidationError("--show", "no preset named '" + *show + "'");
      std::cout << *model;
      return 0;
    }
    std::cout << "Cluster presets (use with --cluster NAME; --show NAME prints one):\n";
    for (const std::string& name : cluster_preset_names()) {
      const Cluster c = load_cluster(name);
      std::cout << fmt::format("  {:<20}{}\n", name, c.description);
      std::string aliases;
      for (const std::string& alias : c.aliases)
        aliases += (aliases.empty() ? "" : ", ") + alias;
      if (!aliases.empty()) std::cout << fmt::format("  {:<20}  also: {}\n", "", aliases);
    }
    std::cout << "\nDevice presets (a cluster's gpu:, or --device NAME; --show NAME prints one):\n";
    for (const std::string& name : device_preset_names()) {
      const Device d = load_device(name);
      std::string aliases;
      for (const std::string& alias : d.aliases)
        aliases += (aliases.empty() ? "" : ", ") + alias;
      std::cout << fmt::format("  {:<20}{}\n", name, d.description);
      if (!aliases.empty()) std::cout << fmt::format("  {:<20}  also: {}\n", "", aliases);
    }
    std::cout << "\nModel presets (--show NAME prints one):\n";
    for (const std::string& name : model_preset_names()) {
      const ModelSpec m = load_model(name);
      std::cout << fmt::format("  {:<20}{}\n", name, model_summary(m));
      std::string aliases;
      for (const std::string& alias : m.aliases)
        aliases += (aliases.empty() ? "" : ", ") + alias;
      if (!aliases.empty()) std::cout << fmt::format("  {:<20}  also: {}\n", "", aliases);
    }
    return 0;
  };
}

}  // namespace orrery
