// Model descriptions in YAML (schema in docs/models.md): parsing, with every malformed key an
// InputError at its line, and loading by preset name or file path.
#pragma once

#include <string>
#include <string_view>

#include "models/model_spec.h"

namespace orrery {

// Parses a model description; throws InputError naming `source` and the line.
ModelSpec parse_model_yaml(std::string_view text, const std::string& source);

// A preset name or alias (see model_preset_names()) or a path to a YAML file; throws InputError.
ModelSpec load_model(const std::string& name_or_path);

}  // namespace orrery
