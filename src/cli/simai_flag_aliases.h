// SimAI_analytical spells its flags with one dash and several letters (-nv 360, -n_p_s 8), which
// CLI11 cannot declare. These are rewritten to Orrery's long options before parsing.
//
// SimAI's -nv and -nic are its bus bandwidths in GiB/s: a bare number becomes "N GiB/s", and the
// link's efficiency 1 (--nvlink-efficiency 1 / --nic-efficiency 1), as SimAI means them. `-w FILE`
// is SimAI's workload flag: it marks the SimAI-style invocation (--simai-invocation), which implies
// the SimAI-compatible analytical mode and SimAI's outputs (simulate_command.cpp).
#pragma once

#include <string>
#include <vector>

namespace orrery {

// {"-nv", "360"} -> {"--nvlink-busbw", "360 GiB/s", "--nvlink-efficiency", "1"};
// {"-w", "W.txt"} -> {"W.txt", "--simai-invocation"}; other arguments unchanged.
std::vector<std::string> expand_simai_flag_aliases(std::vector<std::string> args);

}  // namespace orrery
