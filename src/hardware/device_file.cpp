#include "hardware/device_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>

#include "core/diagnostics.h"
#include "core/embedded_file.h"
#include "core/quantity.h"
#include "core/text.h"
#include "core/yaml_fields.h"

namespace orrery {

std::span<const EmbeddedFile> embedded_device_presets();  // generated (cmake/EmbedFiles.cmake)

namespace {

// The device file's own field kinds on top of the shared YAML field access.
class Fields : public YamlFields {
 public:
  using YamlFields::YamlFields;

  double fraction(const YAML::Node& node) const { return number(node, 0, true, 1); }
  double non_negative(const YAML::Node& node) const {
    return number(node, 0, false, std::numeric_limits<double>::infinity());
  }
  int64_t positive(const YAML::Node& node) const { return integer(node, 1); }

  std::map<DType, FlopRate> rates(const YAML::Node& map, const std::string& where) const {
    if (!map.IsMap() || map.size() == 0)
      fail(map, "expected " + where + " to map data types (bf16, fp32, ...) to rates");
    unique_keys(map);
    std::map<DType, FlopRate> result;
    for (const auto& entry : map) {
      const std::string name = key(entry.first);
      const auto type = parse_dtype(name);
      if (!type)
        fail(entry.first, "expected a data type (fp64, fp32, tf32, fp16, bf16, fp8, int8) in " +
                              where + ", found '" + name + "'");
      result[*type] = quantity(entry.second, parse_flop_rate);
    }
    return result;
  }

  // A map of data types to fractions, each in (0, 1], or [0, 1] with `zero_allowed`.
  std::map<DType, double> fractions(const YAML::Node& map, const std::string& where,
                                    bool zero_allowed = false) const {
    if (!map.IsMap()) fail(map, "expected " + where + " to map data types to fractions");
    unique_keys(map);
    std::map<DType, double> result;
    for (const auto& entry : map) {
      const auto type = parse_dtype(key(entry.first));
      if (!type) fail(entry.first, "expected a data type such as fp8 or bf16 in " + where);
      result[*type] = number(entry.second, 0, !zero_allowed, 1);
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
};

std::string lowercase(std::string_view text) {
  std::string result;
  for (const char c : text)
    result += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return result;
}

}  // namespace

Device parse_device_yaml(std::string_view text, const std::string& source) {
  const Fields f(source);
  const YAML::Node root = f.load(text);
  if (!root || !root.IsMap())
    throw InputError({source, 1}, "expected a YAML mapping describing a device");
  f.only_keys(root,
              {"name", "aliases", "description", "compute_units", "matrix", "vector", "memory",
               "cache", "efficiency", "gemm_tiling", "power"},
              "the device");
  Device d;
  d.source = source;
  d.name = f.scalar(f.required(root, "name", "the device"));
  if (const YAML::Node aliases = root["aliases"]) {
    if (!aliases.IsSequence())
      f.fail(aliases, "expected aliases as a list such as [H100, H100-SXM]");
    for (const auto& alias : aliases)
      d.aliases.push_back(f.scalar(alias));
  }
  if (root["description"]) d.description = f.scalar(root["description"]);
  d.compute_units = f.positive(f.required(root, "compute_units", "the device"));
  d.matrix = f.rates(f.required(root, "matrix", "the device"), "matrix");
  d.vector = f.rates(f.required(root, "vector", "the device"), "vector");

  const YAML::Node memory = f.required(root, "memory", "the device");
  f.only_keys(memory, {"bandwidth", "capacity"}, "memory");
  d.memory_bandwidth = f.quantity(f.required(memory, "bandwidth", "memory"), parse_bandwidth);
  if (memory["capacity"]) d.memory_capacity = f.quantity(memory["capacity"], parse_size);
  if (root["cache"]) d.cache = f.quantity(root["cache"], parse_size);

  if (const YAML::Node e = root["efficiency"]) {
    f.only_keys(e,
                {"matrix", "matrix_by_type", "sustained_matrix", "rate_spread", "vector", "memory",
                 "kernel_overhead", "attention", "attention_half_sequence", "attention_backward",
                 "attention_backward_half_sequence", "contention_overhead", "exposed_epilogue"},
                "efficiency");
    if (e["matrix"]) d.matrix_efficiency = f.fraction(e["matrix"]);
    if (e["matrix_by_type"])
      d.matrix_efficiency_by_type = f.fractions(e["matrix_by_type"], "matrix_by_type");
    if (e["exposed_epilogue"])
      d.exposed_epilogue_by_type = f.fractions(e["exposed_epilogue"], "exposed_epilogue", true);
    if (e["sustained_matrix"]) d.sustained_matrix = f.fraction(e["sustained_matrix"]);
    if (e["rate_spread"]) d.rate_spread = f.number(e["rate_spread"], 0, false, 0.2);
    if (e["vector"]) d.vector_efficiency = f.fraction(e["vector"]);
    if (e["memory"]) d.memory_efficiency = f.fraction(e["memory"]);
    if (e["kernel_overhead"]) d.kernel_overhead = f.quantity(e["kernel_overhead"], parse_duration);
    d.attention_efficiency = e["attention"] ? f.fraction(e["attention"]) : d.matrix_efficiency;
    if (e["attention_half_sequence"])
      d.attention_half_sequence = f.integer(e["attention_half_sequence"], 0, 1 << 24);
    d.attention_backward_efficiency =
        e["attention_backward"] ? f.fraction(e["attention_backward"]) : d.attention_efficiency;
    d.attention_backward_half_sequence =
        e["attention_backward_half_sequence"]
            ? f.integer(e["attention_backward_half_sequence"], 0, 1 << 24)
            : d.attention_half_sequence;
    if (e["contention_overhead"]) d.contention_overhead = f.fraction(e["contention_overhead"]);
  }
  if (const YAML::Node p = root["power"]) {
    f.only_keys(p, {"tdp_watts", "idle_watts"}, "power");
    d.tdp_watts = f.non_negative(f.required(p, "tdp_watts", "power"));
    if (p["idle_watts"]) d.idle_watts = f.non_negative(p["idle_watts"]);
    if (d.idle_watts > d.tdp_watts)
      f.fail(p["idle_watts"], "expected idle_watts at most tdp_watts");
  }
  if (const YAML::Node t = root["gemm_tiling"]) {
    f.only_keys(t, {"tiles", "reuse", "k_overhead", "split_k"}, "gemm_tiling");
    const YAML::Node tiles = f.required(t, "tiles", "gemm_tiling");
    if (!tiles.IsSequence() || tiles.size() == 0)
      f.fail(tiles, "expected tiles as a list such as [128x128, 128x64]");
    for (const auto& tile : tiles)
      d.gemm_tiles.push_back(f.tile(tile));
    if (t["reuse"]) d.tile_reuse = f.non_negative(t["reuse"]);
    if (t["k_overhead"]) d.tile_k_overhead = f.positive(t["k_overhead"]);
    if (t["split_k"]) {
      d.max_split_k = f.positive(t["split_k"]);
      if (d.max_split_k > 64) f.fail(t["split_k"], "expected split_k from 1 to 64");
    }
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
  // Each preset's name and aliases (lower case), read the first time a lookup reaches the preset
  // and kept, so that no lookup parses a preset twice and a lookup stops at its match.
  static std::mutex mutex;
  static std::vector<std::optional<std::vector<std::string>>> names(
      embedded_device_presets().size());
  const std::string wanted = lowercase(name);
  const std::lock_guard lock(mutex);
  for (size_t i = 0; i < names.size(); ++i) {
    const EmbeddedFile& file = embedded_device_presets()[i];
    std::optional<std::vector<std::string>>& known = names[i];
    if (!known) {
      const Device d = parse_device_yaml(file.contents, "preset " + std::string(file.name));
      known.emplace(1, lowercase(d.name));
      for (const std::string& alias : d.aliases)
        known->push_back(lowercase(alias));
    }
    if (std::find(known->begin(), known->end(), wanted) != known->end()) return file.contents;
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
