#include "formats/torchviz/graph_config.h"

#include <array>
#include <fstream>
#include <sstream>

#include "core/diagnostics.h"
#include "core/quantity.h"
#include "core/text.h"
#include "core/yaml_fields.h"

namespace orrery {
namespace {

constexpr std::array<std::string_view, 11> kKeys = {
    "batch", "text_tokens", "external_tokens",   "heads",        "beams",    "shared_expert",
    "dtype", "bucket_size", "first_bucket_size", "bucket_order", "optimizer"};
constexpr Bytes kMaxBucket = Bytes{1} << 40;  // 1 TiB

}  // namespace

std::string SharedExpert::to_string() const {
  switch (kind) {
    case Kind::Last:
      return "last";
    case Kind::First:
      return "first";
    case Kind::Number:
      return std::to_string(number);
    case Kind::None:
      return "none";
  }
  return "";
}

GraphConfig parse_graph_config(std::string_view text, const std::string& source) {
  const YamlFields fields(source);
  const YAML::Node root = fields.load(text);
  GraphConfig config;
  config.source = source;
  if (root.IsNull()) return config;
  if (!root.IsMap()) throw InputError({source, 1}, "expected a YAML mapping of graph settings");
  fields.unique_keys(root);
  for (const auto& entry : root) {
    const std::string key = fields.key(entry.first);
    const YAML::Node& value = entry.second;
    const std::string text_value = fields.scalar(value);
    const auto count = [&]() {
      const auto v = parse_int64(trim(text_value));
      if (!v || *v < 1 || *v > kMaxGraphCount)
        fields.fail(value, "'" + key + "': expected a positive integer of at most " +
                               std::to_string(kMaxGraphCount) + ", found '" + text_value + "'");
      return *v;
    };
    if (key == "batch") {
      config.batch = count();
    } else if (key == "text_tokens") {
      config.text_tokens = count();
    } else if (key == "external_tokens") {
      config.external_tokens = count();
    } else if (key == "heads") {
      config.heads = count();
    } else if (key == "beams") {
      config.beams = count();
      if (*config.beams < 2)
        fields.fail(value, "'beams': expected at least 2 (one routed beam and the universal one)");
    } else if (key == "shared_expert") {
      SharedExpert shared;
      if (text_value == "last") {
        shared.kind = SharedExpert::Kind::Last;
      } else if (text_value == "first") {
        shared.kind = SharedExpert::Kind::First;
      } else if (text_value == "none") {
        shared.kind = SharedExpert::Kind::None;
      } else if (const auto k = parse_int64(trim(text_value));
                 k && *k >= 0 && *k <= kMaxGraphCount) {
        shared.kind = SharedExpert::Kind::Number;
        shared.number = *k;
      } else {
        fields.fail(value,
                    "'shared_expert': expected last, first, none or an expert's number, found '" +
                        text_value + "'");
      }
      config.shared_expert = shared;
      config.shared_expert_line = YamlFields::line(value);
    } else if (key == "dtype") {
      config.dtype = parse_dtype(text_value);
      if (!config.dtype || (*config.dtype != DType::FP16 && *config.dtype != DType::BF16 &&
                            *config.dtype != DType::FP32))
        fields.fail(value, "'dtype': expected fp16, bf16 or fp32, found '" + text_value + "'");
    } else if (key == "bucket_size" || key == "first_bucket_size") {
      Bytes size = 0;
      try {
        size = parse_size(text_value);
      } catch (const std::invalid_argument& e) {
        fields.fail(value, "'" + key + "': " + std::string(e.what()));
      }
      if (size == 0 || size > kMaxBucket)
        fields.fail(value, "'" + key + "': expected a positive size of at most 1 TiB, found '" +
                               text_value + "'");
      (key == "bucket_size" ? config.bucket_size : config.first_bucket_size) = size;
    } else if (key == "bucket_order") {
      if (text_value == "registration")
        config.bucket_order = BucketOrder::Registration;
      else if (text_value == "ready")
        config.bucket_order = BucketOrder::Ready;
      else
        fields.fail(value,
                    "'bucket_order': expected registration or ready, found '" + text_value + "'");
    } else if (key == "optimizer") {
      if (text_value == "adam")
        config.optimizer = OptimizerKind::Adam;
      else if (text_value == "sgd")
        config.optimizer = OptimizerKind::Sgd;
      else if (text_value == "none")
        config.optimizer = OptimizerKind::None;
      else
        fields.fail(value, "'optimizer': expected adam, sgd or none, found '" + text_value + "'");
    } else {
      std::string list;
      for (const auto k : kKeys)
        list += (list.empty() ? "" : ", ") + std::string(k);
      fields.fail(entry.first, "unknown key '" + key + "'; expected one of: " + list);
    }
  }
  return config;
}

GraphConfig load_graph_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError({path, 0}, "cannot open the graph config");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_graph_config(buffer.str(), path);
}

}  // namespace orrery
