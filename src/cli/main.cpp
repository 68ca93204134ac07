// The `orrery` command: argument parsing and wiring only.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

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
  app.set_version_flag("--version", orrery::orrery_version_and_build());
  orrery::record_command_line(argc, argv);
  app.require_subcommand(1);
  using Adder = std::function<int()> (*)(CLI::App&);
  const std::vector<std::pair<std::string, Adder>> subcommands = {
      {"simulate", orrery::add_simulate_command},
      {"presets", orrery::add_presets_command},
      {"collective", orrery::add_collective_command},
      {"convert", orrery::add_convert_command},
      {"calibrate", orrery::add_calibrate_command},
      {"explore", [](CLI::App& a) { return orrery::add_explore_command(a); }},
      {"results", orrery::add_results_command},
  };
  std::vector<std::string> args(argv + 1, argv + argc);
  args = orrery::expand_simai_flag_aliases(std::move(args));
  const std::string first = args.empty() ? "" : args.front();
  const auto named = std::find_if(subcommands.begin(), subcommands.end(),
                                  [&](const auto& c) { return c.first == first; });
  // A first word that is no option and no subcommand is a mistyped subcommand.
  if (!first.empty() && !first.starts_with("-") && named == subcommands.end()) {
    std::cerr << "orrery: unknown subcommand '" << first
              << "'; expected one of: simulate, collective, calibrate, convert, explore, results, "
                 "presets (see "
                 "--help)\n";
    return 2;
  }
  // Only the subcommand that runs is built (its options are most of the start-up work); the
  // top-level help and usage errors list them all, --version needs none.
  std::map<std::string, std::function<int()>> commands;
  for (const auto& [name, add] : subcommands)
    if (named == subcommands.end() ? first != "--version" : name == first)
      commands[name] = add(app);
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
