#include "cli/simai_flag_aliases.h"

#include <array>
#include <string_view>
#include <utility>

#include "core/text.h"

namespace orrery {

std::vector<std::string> expand_simai_flag_aliases(std::vector<std::string> args) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kAliases = {{
      {"-n_p_s", "--nics-per-server"},
      {"-g_p_s", "--gpus-per-server"},
      {"-dp_o", "--dp-overlap"},
      {"-tp_o", "--tp-overlap"},
      {"-ep_o", "--ep-overlap"},
      {"-pp_o", "--pp-overlap"},
      {"-r", "--run-name"},
      {"-busbw", "--busbw"},
  }};
  // SimAI's bandwidths: GiB/s when bare, at efficiency 1.
  static constexpr std::array<std::array<std::string_view, 3>, 2> kBandwidths = {{
      {"-nv", "--nvlink-busbw", "--nvlink-efficiency"},
      {"-nic", "--nic-busbw", "--nic-efficiency"},
  }};
  std::vector<std::string> out;
  out.reserve(args.size() + 4);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    bool done = false;
    for (const auto& [simai, ours, efficiency] : kBandwidths)
      if (arg == simai && i + 1 < args.size()) {
        const std::string& value = args[++i];
        out.emplace_back(ours);
        out.push_back(parse_double(trim(value)) ? value + " GiB/s" : value);
        out.emplace_back(efficiency);
        out.emplace_back("1");
        done = true;
      }
    if (done) continue;
    if (arg == "-w" && i + 1 < args.size()) {
      out.push_back(args[++i]);
      out.emplace_back("--simai-invocation");
      continue;
    }
    for (const auto& [simai, ours] : kAliases)
      if (arg == simai) {
        out.emplace_back(ours);
        done = true;
      }
    if (!done) out.push_back(arg);
  }
  return out;
}

}  // namespace orrery
