// The `orrery` command: argument parsing and wiring only.
#include <CLI/CLI.hpp>

#include <iostream>
#include <map>

#include "cli/commands.h"
#include "cli/run_provenance.h"
#include "cli/simai_flag_aliases.h"
#include "core/allocator_tuning.h"
#include "core/diagnostics.h"
#include "core/time.h"

int main(int argc, char** argv) {
  orrery::keep_freed_memory_for_reuse();
  CLI::App app{
      "Orrery: simulates one iteration of large-scale distributed training and says where the "
      "time goes.",
      "orrery"};
  app.set_version_flag("--version", orrery::orrery_version());
  orrery::record_command_line(argc, argv);
  app.require_subcommand(1);
  std::map<std::string, std::function<int()>> commands = {
      {"simulate", orrery::add_simulate_command(app)},
      {"presets", orrery::add_presets_command(app)},
      {"collective", orrery::add_collective_command(app)},
      {"convert", orrery::add_convert_command(app)},
      {"calibrate", orrery::add_calibrate_command(app)},
      {"explore", orrery::add_explore_command(app)},
      {"results", orrery::add_results_command(app)},
  };
  std::vector<std::string> args(argv + 1, argv + argc);
  args = orrery::expand_simai_flag_aliases(std::move(args));
  // A first word that is no option and no subcommand is a mistyped subcommand.
  if (!args.empty() && !args.front().starts_with("-") && !commands.contains(args.front())) {
    std::cerr << "orrery: unknown subcommand '" << args.front()
              << "'; expected one of: simulate, collective, calibrate, convert, explore, results, "
                 "presets (see "
                 "--help)\n";
    return 2;
  }
  std::reverse(args.begin(), args.end());  // CLI11 consumes a reversed vector
  try {
    app.parse(args);
    for (const auto& [name, run] : commands)
      if (app.got_subcommand(name)) return run();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "orrery: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const orrery::InputError& e) {
    std::cerr << "orrery: " << e.what() << "\n";
    return 2;
  } catch (const orrery::TimeOverflow& e) {
    std::cerr << "orrery: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "orrery: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
