// The simulators a prediction can run on a workload: event (a representative rank per pipeline
// stage, discrete events), flow (every rank, flows sharing the links max-min fairly) and analytical
// (the same plan in closed form). Named by the command line's --mode and in every result.
#pragma once

#include <optional>
#include <string_view>

namespace orrery {

enum class SimulationMode { Event, Flow, Analytical };

constexpr std::string_view to_string(SimulationMode mode) {
  switch (mode) {
    case SimulationMode::Event:
      return "event";
    case SimulationMode::Flow:
      return "flow";
    case SimulationMode::Analytical:
      return "analytical";
  }
  return "?";
}

constexpr std::optional<SimulationMode> parse_simulation_mode(std::string_view name) {
  for (const SimulationMode m :
       {SimulationMode::Event, SimulationMode::Flow, SimulationMode::Analytical})
    if (to_string(m) == name) return m;
  return std::nullopt;
}

}  // namespace orrery
