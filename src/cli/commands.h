// The subcommands of the `orrery` executable. Each registers its options on the CLI11 app and
// runs when selected; they only parse arguments and wire the layers together.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace orrery::explore {
class Distribution;
}

namespace orrery {

constexpr const char* kOrreryVersion = "0.1.0";

// Registers a subcommand; the returned function runs it (after parsing) and gives the exit code.
std::function<int()> add_simulate_command(CLI::App& app);
std::function<int()> add_presets_command(CLI::App& app);
std::function<int()> add_collective_command(CLI::App& app);
std::function<int()> add_convert_command(CLI::App& app);
std::function<int()> add_calibrate_command(CLI::App& app);
// `distribution`: the search split over processes (orrery-mpi); rank 0 alone stores and prints.
std::function<int()> add_explore_command(CLI::App& app,
                                         explore::Distribution* distribution = nullptr);
std::function<int()> add_results_command(CLI::App& app);

}  // namespace orrery
