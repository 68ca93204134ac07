#include "hardware/device_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <span>
#include <sstream>

#include "core/diagnostics.h"
#include "core/embedded_file.h"
#include "core/quantity.h"
#include "core/text.h"

namespace orrery {

std::span<const EmbeddedFile> embedded_device_presets();  // generated (cmake/EmbedFiles.cmake)

namespace {

// Field access on one YAML document, every failure an InputError at the node's line.
class Fields {
 public:
  explicit Fields(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& message) const {
    throw InputError({source_, node.Mark().line >= 0 ? node.Mark().line + 1 : 0}, message);
  }

  void only(const YAML::Node& map, const std::set<std::string>& keys,
            const std::string& where) const {
    if (!map.IsMap()) fail(map, "expected " + where + " to be a mapping");
    for (const auto& entry : map) {
      if (keys.count(entry.first.as<std::string>())) continue;
      std::string list;
      for (const auto& k : keys)
        list += (list.empty() ? "" : ", ") + k;
      fail(entry.first, "unknown key '" + entry.first.as<std::string>() + "' in " + where +
                            "; expected one of: " + list);
    }
  }

  YAML::Node need(const YAML::Node& map, const std::string& key, const std::string& where) const {
    if (!map[key]) fail(map, "expected '" + key + "' in " + where);
    return map[key];
  }

  std::string scalar(const YAML::Node& node) const {
    if (!node.IsScalar()) fail(node, "expected a single value");
    return node.as<std::string>();
  }

  // A quantity parsed by `parse` (which throws std::invalid_argument saying what it expected).
  template <typename T>
  T quantity(const YAML::Node& node, const std::function<T(std::string_view)>& parse) const {
    try {
      return parse(scalar(node));
    } catch (const std::invalid_argument& e) {
      fail(node, e.what());
    }
  }

  double fraction(const YAML::Node& node) const {
    const std::string text = scalar(node);
    const auto v = parse_double(trim(text));
    if (!v || !(*v > 0 && *v <= 1))
      fail(node, "expected a fraction in (0, 1], found '" + text + "'");
    return *v;
  }

  double non_negative(const YAML::Node& node) const {
    const std::string text = scalar(node);
    const auto v = parse_double(trim(text));
    if (!v || *v < 0) fail(node, "expected a non-negative number, found '" + text + "'");
    return *v;
  }

  int64_t positive(const YAML::Node& node) const {
    const std::string text = scalar(node);
    const auto v = parse_int64(trim(text));
    if (!v || *v < 1) fail(node, "expected a positive integer, found '" + text + "'");
    return *v;
  }

  std::map<DType, FlopRate> rates(const YAML::Node& map, const std::string& where) const {
    if (!map.IsMap() || map.size() == 0)
      fail(map, "expected " + where + " to map data types (bf16, fp32, ...) to rates");
    std::map<DType, FlopRate> result;
    for (const auto& entry : map) {
      const auto type = parse_dtype(entry.first.as<std::string>());
      if (!type)
        fail(entry.first, "expected a data type (fp64, fp32, tf32, fp16, bf16, fp8, int8) in " +
                              where + ", found '" + entry.first.as<std::string>() + "'");
      result[*type] = quantity<FlopRate>(entry.second, parse_flop_rate);
    }
    return result;
  }

  GemmTile tile(const YAML::Node& node) const {
    const std::string text = scalar(node);
    const auto x = text.find('x');
    const auto m = parse_int64(text.substr(0, x));
    const auto n = x == std::string::npos ? std::nullopt : parse_int64(text.substr(x + 1));
    if (!m || !n || *m < 1 || *n < 1)
      fail(node, "expected a tile such as '128x128' (rows x columns), found '" + text + "'");
    return {*m, *n};
  }

 private:
  std::string source_;
};

std::string lowercase(std::string_view text) {
  std::string result;
  for (const char c : text)
    result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

}  // namespace

Device parse_device_yaml(std::string_view text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw InputError({source, e.mark.line >= 0 ? e.mark.line + 1 : 0},
                     "expected valid YAML: " + e.msg);
  }
  if (!root || !root.IsMap())
    throw InputError({source, 1}, "expected a YAML mapping describing a device");
  const Fields f(source);
  f.only(root,
         {"name", "aliases", "description", "compute_units", "matrix", "vector", "memory", "cache",
          "efficiency", "gemm_tiling"},
         "the device");
  Device d;
  d.source = source;
  d.name = f.scalar(f.need(root, "name", "the device"));
  if (const YAML::Node aliases = root["aliases"]) {
    if (!aliases.IsSequence())
      f.fail(aliases, "expected aliases as a list such as [H100, H100-SXM]");
    for (const auto& alias : aliases)
      d.aliases.push_back(f.scalar(alias));
  }
  if (root["description"]) d.description = f.scalar(root["description"]);
  d.compute_units = f.positive(f.need(root, "compute_units", "the device"));
  d.matrix = f.rates(f.need(root, "matrix", "the device"), "matrix");
  d.vector = f.rates(f.need(root, "vector", "the device"), "vector");

  const YAML::Node memory = f.need(root, "memory", "the device");
  f.only(memory, {"bandwidth", "capacity"}, "memory");
  d.memory_bandwidth =
      f.quantity<Bandwidth>(f.need(memory, "bandwidth", "memory"), parse_bandwidth);
  if (memory["capacity"]) d.memory_capacity = f.quantity<Bytes>(memory["capacity"], parse_size);
  if (root["cache"]) d.cache = f.quantity<Bytes>(root["cache"], parse_size);

  if (const YAML::Node e = root["efficiency"]) {
    f.only(e, {"matrix", "vector", "memory", "kernel_overhead"}, "efficiency");
    if (e["matrix"]) d.matrix_efficiency = f.fraction(e["matrix"]);
    if (e["vector"]) d.vector_efficiency = f.fraction(e["vector"]);
    if (e["memory"]) d.memory_efficiency = f.fraction(e["memory"]);
    if (e["kernel_overhead"])
      d.kernel_overhead = f.quantity<Time>(e["kernel_overhead"], parse_duration);
  }
  if (const YAML::Node t = root["gemm_tiling"]) {
    f.only(t, {"tiles", "reuse", "k_overhead"}, "gemm_tiling");
    const YAML::Node tiles = f.need(t, "tiles", "gemm_tiling");
    if (!tiles.IsSequence() || tiles.size() == 0)
      f.fail(tiles, "expected tiles as a list such as [128x128, 128x64]");
    for (const auto& tile : tiles)
      d.gemm_tiles.push_back(f.tile(tile));
    if (t["reuse"]) d.tile_reuse = f.non_negative(t["reuse"]);
    if (t["k_overhead"]) d.tile_k_overhead = f.positive(t["k_overhead"]);
  }
  return d;
}

std::vector<std::string> device_preset_names() {
  std::vector<std::string> names;
  for (const EmbeddedFile& file : embedded_device_presets())
    names.push_back(parse_device_yaml(file.contents, "preset " + std::string(file.name)).name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view device_preset_text(std::string_view name) {
  const std::string wanted = lowercase(name);
  for (const EmbeddedFile& file : embedded_device_presets()) {
    const Device d = parse_device_yaml(file.contents, "preset " + std::string(file.name));
    if (lowercase(d.name) == wanted) return file.contents;
    for (const std::string& alias : d.aliases)
      if (lowercase(alias) == wanted) return file.contents;
  }
  return {};
}

Device load_device(const std::string& name_or_path) {
  if (const std::string_view preset = device_preset_text(name_or_path); !preset.empty()) {
    Device d = parse_device_yaml(preset, "preset " + name_or_path);
    d.source = "preset";
    return d;
  }
  if (!std::filesystem::is_regular_file(name_or_path)) {
    std::string names;
    for (const auto& n : device_preset_names())
      names += (names.empty() ? "" : ", ") + n;
    throw InputError("device '" + name_or_path + "': expected a device preset (" + names +
                     ") or a YAML file; no such file");
  }
  std::ifstream in(name_or_path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_device_yaml(buffer.str(), name_or_path);
}

}  // namespace orrery
