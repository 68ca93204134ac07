// The model presets compiled into Orrery (data/presets/models/*.yaml).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace orrery {

// Preset names (file names without .yaml, equal to their `name:`) in alphabetical order.
std::vector<std::string> model_preset_names();

// The YAML text of a preset, found by its name or one of its `aliases`; nullopt if none.
std::optional<std::string_view> model_preset_text(std::string_view name);

}  // namespace orrery
