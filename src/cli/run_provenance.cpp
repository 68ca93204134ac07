#include "cli/run_provenance.h"

#include <fstream>
#include <iterator>

#include "cli/build_revision.h"
#include "cli/commands.h"
#include "cli/output_files.h"
#include "core/diagnostics.h"
#include "core/sha256.h"

namespace orrery {
namespace {

std::string& command_line() {
  static std::string line;
  return line;
}

// An argument as a POSIX shell reads it back: bare when safe, else in single quotes.
std::string shell_quoted(const std::string& arg) {
  const bool safe = !arg.empty() && arg.find_first_not_of(
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                        "0123456789_./=:,+-@%") == std::string::npos;
  if (safe) return arg;
  std::string out = "'";
  for (const char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string orrery_version() {
  return std::string("orrery ") + kOrreryVersion;
}

std::string orrery_version_and_build() {
  return orrery_version() + " (build " + kBuildRevision + ")";
}

void record_command_line(int argc, const char* const* argv) {
  std::string line = "orrery";
  for (int i = 1; i < argc; ++i)
    line += " " + shell_quoted(argv[i]);
  command_line() = std::move(line);
}

Provenance run_provenance(const EffectiveCluster* effective, std::vector<std::string> devices) {
  Provenance p;
  p.orrery = orrery_version();
  p.command = command_line();
  p.devices = std::move(devices);
  for (const std::filesystem::path& path : input_files()) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError({path.string(), 0}, "cannot read input file");
    const std::string bytes{std::istreambuf_iterator<char>(in), {}};
    p.inputs.emplace_back(path.string(), sha256_hex(bytes));
  }
  if (!effective) {
    p.cluster = "the workload file's own system";
    return p;
  }
  const Cluster& c = effective->cluster;
  p.cluster = c.name;
  p.cluster_source = effective->source;
  p.overrides = effective->overrides;
  p.gpu = c.gpu;
  for (const Dimension& d : c.network.dimensions()) {
    ProvenanceDimension pd;
    pd.name = d.name;
    pd.kind = std::string(to_string(d.kind));
    pd.size = d.size;
    pd.rails = d.rails;
    pd.bandwidth_GBps = d.link_bandwidth.in_gb_per_second();
    pd.efficiency = d.efficiency;
    pd.latency_us = d.latency.microseconds();
    p.dimensions.push_back(std::move(pd));
  }
  return p;
}

}  // namespace orrery
