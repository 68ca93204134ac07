// Device descriptions in YAML (schema in docs/compute-model.md) and the presets compiled into
// Orrery (data/presets/devices/*.yaml).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/device.h"

namespace orrery {

// Parses a device description; throws InputError naming `source` and the line.
Device parse_device_yaml(std::string_view text, const std::string& source);

// Preset names (the `name:` of each preset file), in alphabetical order.
std::vector<std::string> device_preset_names();

// The YAML text of the preset whose name or alias is `name` (case-insensitive), or empty.
std::string_view device_preset_text(std::string_view name);

// A preset name or alias, or a path to a YAML file; throws InputError for neither.
Device load_device(const std::string& name_or_path);

}  // namespace orrery
