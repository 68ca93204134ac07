#include "models/model_presets.h"

#include <algorithm>
#include <span>

#include "core/embedded_file.h"
#include "models/model_file.h"

namespace orrery {

std::span<const EmbeddedFile> embedded_model_presets();  // generated (cmake/EmbedFiles.cmake)

namespace {
constexpr std::string_view kSuffix = ".yaml";

std::string_view preset_name(const EmbeddedFile& file) {
  return file.name.substr(0, file.name.size() - kSuffix.size());
}
}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : embedded_model_presets())
    names.emplace_back(preset_name(file));
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string_view> model_preset_text(std::string_view name) {
  for (const EmbeddedFile& file : embedded_model_presets())
    if (preset_name(file) == name) return file.contents;
  for (const EmbeddedFile& file : embedded_model_presets()) {
    const ModelSpec m = parse_model_yaml(file.contents, "preset " + std::string(file.name));
    if (std::find(m.aliases.begin(), m.aliases.end(), name) != m.aliases.end())
      return file.contents;
  }
  return std::nullopt;
}

}  // namespace orrery
