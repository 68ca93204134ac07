// Model descriptions in YAML (schema in docs/models.md): parsing, with every malformed key an
// InputError at its line, and loading by preset name or file path (YAML, or Calculon's JSON).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "models/model_spec.h"

namespace orrery {

// Parses a model description; throws InputError naming `source` and the line.
ModelSpec parse_model_yaml(std::string_view text, const std::string& source);

// A preset name or alias (see model_preset_names()), a path to a YAML file, or a path ending in
// .json to Calculon's model JSON (calculon_model.h), whose warnings go to `warnings` when given;
// throws InputError.
ModelSpec load_model(const std::string& name_or_path, std::vector<std::string>* warnings = nullptr);

}  // namespace orrery
