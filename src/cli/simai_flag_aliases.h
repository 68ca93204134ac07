// SimAI_analytical spells its flags with one dash and several letters (-nv 360, -n_p_s 8), which
// CLI11 cannot declare. These are rewritten to Orrery's long options before parsing.
#pragma once

#include <string>
#include <vector>

namespace orrery {

// {"-nv", "360"} -> {"--nvlink-busbw", "360"}; other arguments unchanged.
std::vector<std::string> expand_simai_flag_aliases(std::vector<std::string> args);

}  // namespace orrery
