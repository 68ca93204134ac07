// The cluster presets compiled into Orrery (data/presets/clusters/*.yaml).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

// Preset names in alphabetical order.
std::vector<std::string> cluster_preset_names();

// The YAML text of a preset, found by its name or one of its `aliases`; nullopt if none.
std::optional<std::string_view> cluster_preset_text(std::string_view name);

}  // namespace orrery
