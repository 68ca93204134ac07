#include "core/yaml_fields.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/quantity.h"

namespace orrery {
namespace {

// The message of the InputError that `read` throws, or "" when it throws none.
template <typename Read>
std::string error_of(Read read) {
  try {
    read();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A three-line document: line 1 `size`, line 2 `share`, line 3 `link`.
const char* const kDocument = "size: 8\nshare: 0.5\nlink: 100 GB/s\n";

TEST(YamlFields, ReadsTypedFields) {
  const YamlFields f("c.yaml");
  const YAML::Node root = f.load(kDocument);
  f.only_keys(root, {"size", "share", "link"}, "the test");
  EXPECT_EQ(f.integer(f.required(root, "size", "the test"), 1), 8);
  EXPECT_DOUBLE_EQ(f.number(root["share"], 0, true, 1), 0.5);
  EXPECT_DOUBLE_EQ(f.quantity(root["link"], parse_bandwidth).in_bytes_per_second(), 100e9);
}

TEST(YamlFields, ErrorsNameTheLineAndWhatWasExpected) {
  const YamlFields f("c.yaml");
  const YAML::Node root = f.load(kDocument);
  EXPECT_EQ(error_of([&] {
              f.only_keys(root, {"size", "link"}, "the test");
            }),
            "c.yaml:2: unknown key 'share' in the test; expected one of: link, size");
  EXPECT_EQ(error_of([&] { f.required(root, "name", "the test"); }),
            "c.yaml:1: expected 'name' in the test");
  EXPECT_EQ(error_of([&] { f.integer(root["size"], 16); }),
            "c.yaml:1: expected an integer of at least 16, found '8'");
  EXPECT_EQ(error_of([&] { f.integer(root["share"], 1); }),
            "c.yaml:2: expected a positive integer, found '0.5'");
  EXPECT_EQ(error_of([&] { f.number(root["size"], 0, true, 1); }),
            "c.yaml:1: expected a number in (0, 1], found '8'");
  EXPECT_EQ(
      error_of([&] { f.number(root["share"], 1, false, std::numeric_limits<double>::infinity()); }),
      "c.yaml:2: expected a number of at least 1, found '0.5'");
  // A bare number is a bandwidth in GB/s; a negative one is refused with the line.
  EXPECT_DOUBLE_EQ(f.quantity(root["size"], parse_bandwidth).in_bytes_per_second(), 8e9);
  const YAML::Node negative = f.load("link: -3\n");
  EXPECT_NE(error_of([&] { f.quantity(negative["link"], parse_bandwidth); }).find("c.yaml:1: "),
            std::string::npos);
}

TEST(YamlFields, RepeatedKeysAreRefused) {
  const YamlFields f("c.yaml");
  const YAML::Node root = f.load("size: 8\nlink: 1 GB/s\nsize: 16\n");
  EXPECT_EQ(error_of([&] {
              f.only_keys(root, {"size", "link"}, "the test");
            }),
            "c.yaml:3: key 'size' given twice (first at line 1)");
}

TEST(YamlFields, SyntaxErrorsNameTheLine) {
  const YamlFields f("c.yaml");
  EXPECT_EQ(error_of([&] { f.load("a: 1\nb: [2, 3\n"); }).rfind("c.yaml:", 0), 0u);
  EXPECT_NE(error_of([&] { f.load("a: 1\nb: [2, 3\n"); }).find("expected valid YAML"),
            std::string::npos);
}

TEST(YamlFields, ErrorsAreOneLineWhateverTheInputHolds) {
  // YAML with control characters in what an error quotes / the error is one line, each control
  // character written as an escape, because the CLI prints an error as one line (README). Found
  // by fuzz_cluster_yaml: yaml-cpp's "unknown escape character" message quoted a newline for
  // these three bytes, and a quoted key may hold any escaped character.
  const YamlFields f("c.yaml");
  const std::string bad_escape = error_of([&] { f.load(std::string("\xff\x00\n", 3)); });
  EXPECT_EQ(bad_escape.rfind("c.yaml:", 0), 0u) << bad_escape;
  EXPECT_EQ(bad_escape.find('\n'), std::string::npos) << bad_escape;
  const YAML::Node root = f.load("\"a\\nb\\u001b[2J\": 1\n");
  EXPECT_EQ(error_of([&] { f.only_keys(root, {"size"}, "the test"); }),
            "c.yaml:1: unknown key 'a\\nb\\x1b[2J' in the test; expected one of: size");
}

TEST(YamlFields, KeysThatAreNotNamesAreRefusedAtTheirLine) {
  // Mappings whose key is not a name: "? :" (yaml-cpp reads a mapping as its key; the input
  // fuzz_cluster_yaml, fuzz_device_yaml, fuzz_graph_config and fuzz_model_yaml each found), null,
  // a sequence / an InputError at the key's line, because yaml-cpp's own conversion error
  // escaped the readers as an internal error (exit 1) before.
  const YamlFields f("c.yaml");
  EXPECT_EQ(error_of([&] { f.unique_keys(f.load("? :\n")); }),
            "c.yaml:1: expected a key name, found a mapping");
  EXPECT_EQ(error_of([&] { f.unique_keys(f.load("~: 1\n")); }),
            "c.yaml:1: expected a key name, found no name");
  EXPECT_EQ(error_of([&] { f.only_keys(f.load("size: 8\n[a, b]: 1\n"), {"size"}, "the test"); }),
            "c.yaml:2: expected a key name, found a sequence");
  EXPECT_EQ(error_of([&] { f.only_keys(f.load("? {a: 1}\n: 2\n"), {"size"}, "the test"); }),
            "c.yaml:1: expected a key name, found a mapping");
}

}  // namespace
}  // namespace orrery
