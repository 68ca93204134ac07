// Pinned reference outputs: every line of tests/reference/manifest.txt is re-run from the
// repository root and its JSON compared with tests/reference/NAME.json, strings and structure
// exactly, numbers to 1e-9 relative (1e-15 absolute near zero), the `provenance` object left out.
// A failure is a changed answer: fix the cause, or regenerate with `make update-references` and
// let the reviewer read the diff.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace orrery::e2e {
namespace {

using nlohmann::json;

std::string run_from_root(const std::string& args) {
  const std::string command =
      "cd '" + std::string(ORRERY_SOURCE_DIR) + "' && '" + ORRERY_BINARY + "' " + args;
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    out.append(buffer.data(), n);
  ::pclose(pipe);
  return out;
}

// Appends to `diffs` where `got` departs from `want`, by JSON path.
void compare(const json& want, const json& got, const std::string& path,
             std::vector<std::string>& diffs) {
  if (diffs.size() > 20) return;
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    if (std::fabs(a - b) > std::max(1e-15, 1e-9 * std::max(std::fabs(a), std::fabs(b))))
      diffs.push_back(path + ": " + want.dump() + " -> " + got.dump());
    return;
  }
  if (want.type() != got.type()) {
    diffs.push_back(path + ": " + want.dump() + " -> " + got.dump());
    return;
  }
  if (want.is_object()) {
    for (const auto& [key, value] : want.items())
      if (!got.contains(key))
        diffs.push_back(path + "." + key + ": missing");
      else
        compare(value, got[key], path + "." + key, diffs);
    for (const auto& [key, value] : got.items())
      if (!want.contains(key)) diffs.push_back(path + "." + key + ": new");
  } else if (want.is_array()) {
    if (want.size() != got.size()) {
      diffs.push_back(path + ": " + std::to_string(want.size()) + " items -> " +
                      std::to_string(got.size()));
      return;
    }
    for (size_t i = 0; i < want.size(); ++i)
      compare(want[i], got[i], path + "[" + std::to_string(i) + "]", diffs);
  } else if (want != got) {
    diffs.push_back(path + ": " + want.dump() + " -> " + got.dump());
  }
}

TEST(ReferenceOutputs, EveryPinnedRunGivesItsReference) {
  std::ifstream manifest(std::string(ORRERY_SOURCE_DIR) + "/tests/reference/manifest.txt");
  std::string line;
  int checked = 0;
  while (std::getline(manifest, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string name = line.substr(0, tab), args = line.substr(tab + 1);
    std::ifstream file(std::string(ORRERY_SOURCE_DIR) + "/tests/reference/" + name + ".json");
    ASSERT_TRUE(file) << name << ": no reference; run `make update-references`";
    const json want = json::parse(file)["result"];
    json got = json::parse(run_from_root(args), nullptr, false);
    ASSERT_FALSE(got.is_discarded()) << name << ": the run gave no JSON";
    // The run's own provenance (paths, checksums, version) is no part of the pinned answer.
    EXPECT_TRUE(got.contains("provenance")) << name;
    got.erase("provenance");
    std::vector<std::string> diffs;
    compare(want, got, name, diffs);
    std::string all;
    for (const std::string& d : diffs)
      all += "\n  " + d;
    EXPECT_TRUE(diffs.empty()) << "orrery " << args << all;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace orrery::e2e
