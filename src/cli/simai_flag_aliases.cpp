#include "cli/simai_flag_aliases.h"

#include <array>
#include <string_view>
#include <utility>

namespace orrery {

std::vector<std::string> expand_simai_flag_aliases(std::vector<std::string> args) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kAliases = {{
      {"-nv", "--nvlink-busbw"},
      {"-nic", "--nic-busbw"},
      {"-n_p_s", "--nics-per-server"},
      {"-g_p_s", "--gpus-per-server"},
      {"-dp_o", "--dp-overlap"},
      {"-tp_o", "--tp-overlap"},
      {"-ep_o", "--ep-overlap"},
      {"-pp_o", "--pp-overlap"},
      {"-r", "--run-name"},
  }};
  for (std::string& arg : args)
    for (const auto& [simai, ours] : kAliases)
      if (arg == simai) arg = std::string(ours);
  return args;
}

}  // namespace orrery
