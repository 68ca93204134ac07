#include "cluster/cluster_presets.h"

#include <algorithm>
#include <span>

#include "cluster/cluster.h"
#include "core/embedded_file.h"

namespace orrery {

std::span<const EmbeddedFile> embedded_cluster_presets();  // generated (cmake/EmbedFiles.cmake)

namespace {
constexpr std::string_view kSuffix = ".yaml";

std::string_view preset_name(const EmbeddedFile& file) {
  return file.name.substr(0, file.name.size() - kSuffix.size());
}
}  // namespace

std::vector<std::string> cluster_preset_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : embedded_cluster_presets())
    names.emplace_back(preset_name(file));
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string_view> cluster_preset_text(std::string_view name) {
  for (const EmbeddedFile& file : embedded_cluster_presets())
    if (preset_name(file) == name) return file.contents;
  // Not a file name: one of a preset's `aliases`.
  for (const EmbeddedFile& file : embedded_cluster_presets()) {
    const Cluster c = parse_cluster_yaml(file.contents, "preset " + std::string(file.name));
    if (std::find(c.aliases.begin(), c.aliases.end(), name) != c.aliases.end())
      return file.contents;
  }
  return std::nullopt;
}

}  // namespace orrery
