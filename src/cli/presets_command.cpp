#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cluster/cluster.h"
#include "cluster/cluster_presets.h"
#include "hardware/device_file.h"

namespace orrery {

std::function<int()> add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("presets", "List the built-in cluster and device presets");
  auto show = std::make_shared<std::string>();
  cmd->add_option("--show", *show,
                  "Print the YAML of one preset (a starting point for your own file)");
  return [show]() {
    if (!show->empty()) {
      if (const auto text = cluster_preset_text(*show)) {
        std::cout << *text;
        return 0;
      }
      const std::string_view device = device_preset_text(*show);
      if (device.empty()) throw CLI::ValidationError("--show", "no preset named '" + *show + "'");
      std::cout << device;
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
    return 0;
  };
}

}  // namespace orrery
