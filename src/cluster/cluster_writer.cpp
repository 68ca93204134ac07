#include "cluster/cluster_writer.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <stdexcept>
#include <utility>

#include "core/quantity.h"

namespace orrery {
namespace {

// The shortest decimal that reads back as `v` ("0.9", "1", "0.7125").
std::string number_text(double v) {
  return fmt::format("{}", v);
}

// `ps` picoseconds in a unit of `per_unit` picoseconds, as an exact decimal ("3.42").
std::string exact_decimal(int64_t ps, int64_t per_unit) {
  const int64_t whole = ps / per_unit;
  int64_t fraction = ps % per_unit;
  std::string text = std::to_string(whole);
  if (fraction == 0) return text;
  std::string digits;
  for (int64_t scale = per_unit / 10; scale > 0; scale /= 10) {
    digits += static_cast<char>('0' + fraction / scale);
    fraction %= scale;
  }
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
  return text + "." + digits;
}

}  // namespace

std::string format_bandwidth_exact(Bandwidth bandwidth, bool bits) {
  constexpr std::array<std::pair<const char*, double>, 7> units = {{{"GB/s", 1e9},
                                                                    {"Gb/s", 1e9 / 8},
                                                                    {"TB/s", 1e12},
                                                                    {"MB/s", 1e6},
                                                                    {"GiB/s", 1073741824.0},
                                                                    {"MiB/s", 1048576.0},
                                                                    {"B/s", 1.0}}};
  const double bps = bandwidth.in_bytes_per_second();
  if (bits) {
    const std::string text = number_text(bps / (1e9 / 8)) + " Gb/s";
    if (text.size() <= 9 && parse_bandwidth(text) == bandwidth) return text;
  }
  std::string best = number_text(bps) + " B/s";  // exact: the shortest repr of bps itself
  for (const auto& [unit, scale] : units) {
    const std::string text = number_text(bps / scale) + " " + unit;
    try {
      if (parse_bandwidth(text) == bandwidth && text.size() < best.size()) best = text;
    } catch (const std::invalid_argument&) {
    }
  }
  return best;
}

std::string format_duration_exact(Time time) {
  if (time == Time::zero()) return "0 us";
  constexpr std::array<std::pair<const char*, int64_t>, 5> units = {{{"us", 1'000'000},
                                                                     {"ns", 1'000},
                                                                     {"ms", 1'000'000'000},
                                                                     {"s", 1'000'000'000'000},
                                                                     {"ps", 1}}};
  for (const auto& [unit, per_unit] : units) {
    const std::string text = exact_decimal(time.ps(), per_unit) + " " + unit;
    try {
      if (parse_duration(text) == time) return text;
    } catch (const std::invalid_argument&) {
    }
  }
  return std::to_string(time.ps()) + " ps";
}

std::string cluster_yaml(const Cluster& c, const std::vector<std::string>& comment) {
  YAML::Emitter out;
  for (const std::string& line : comment) {
    out << YAML::Comment(line) << YAML::Newline;
  }
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << c.name;
  if (!c.description.empty()) out << YAML::Key << "description" << YAML::Value << c.description;
  if (!c.gpu.empty()) out << YAML::Key << "gpu" << YAML::Value << c.gpu;
  if (c.price_per_gpu_hour)
    out << YAML::Key << "price_per_gpu_hour" << YAML::Value << number_text(*c.price_per_gpu_hour);
  if (!c.price_source.empty()) out << YAML::Key << "price_source" << YAML::Value << c.price_source;
  out << YAML::Key << "network" << YAML::Value << YAML::BeginSeq;
  for (const Dimension& d : c.network.dimensions()) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << d.name;
    out << YAML::Key << "kind" << YAML::Value << std::string(to_string(d.kind));
    out << YAML::Key << "size" << YAML::Value << d.size;
    out << YAML::Key << "bandwidth" << YAML::Value
        << format_bandwidth_exact(d.link_bandwidth, d.kind == DimensionKind::FatTree);
    out << YAML::Key << "latency" << YAML::Value << format_duration_exact(d.latency);
    out << YAML::Key << "base_latency" << YAML::Value << format_duration_exact(d.base_latency);
    out << YAML::Key << "efficiency" << YAML::Value << number_text(d.efficiency);
    out << YAML::Key << "channels" << YAML::Value << d.channels;
    if (d.kind == DimensionKind::Switch) {
      out << YAML::Key << "nvls" << YAML::Value << d.nvls;
      out << YAML::Key << "nvls_efficiency" << YAML::Value << number_text(d.nvls_efficiency);
      out << YAML::Key << "nvls_channels" << YAML::Value << d.nvls_channels;
    }
    if (d.kind == DimensionKind::FatTree) {
      out << YAML::Key << "rails" << YAML::Value << d.rails;
      out << YAML::Key << "servers_per_leaf" << YAML::Value << d.servers_per_leaf;
      out << YAML::Key << "oversubscription" << YAML::Value << number_text(d.oversubscription);
      out << YAML::Key << "rendezvous_latency" << YAML::Value
          << format_duration_exact(d.rendezvous_latency);
      if (d.ll_busbw_two_servers)
        out << YAML::Key << "ll_busbw_two_servers" << YAML::Value
            << format_bandwidth_exact(*d.ll_busbw_two_servers, false);
      if (d.ll_busbw_more_servers)
        out << YAML::Key << "ll_busbw_more_servers" << YAML::Value
            << format_bandwidth_exact(*d.ll_busbw_more_servers, false);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::Key << "placement" << YAML::Value << YAML::Flow << c.placement;
  if (!c.aliases.empty()) out << YAML::Key << "aliases" << YAML::Value << YAML::Flow << c.aliases;
  if (c.network.ideal_links()) out << YAML::Key << "protocols" << YAML::Value << "ideal";
  out << YAML::EndMap;
  if (!out.good()) throw std::logic_error("cluster_yaml: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

}  // namespace orrery
