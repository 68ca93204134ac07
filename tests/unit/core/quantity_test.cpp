#include "core/quantity.h"

#include <gtest/gtest.h>

#include "core/text.h"

namespace orrery {
namespace {

TEST(ParseBandwidth, DecimalBinaryAndBitUnits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("300 GB/s").in_bytes_per_second(), 300e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("48.5 GiB/s").in_bytes_per_second(), 48.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200 Gb/s").in_bytes_per_second(), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").in_bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1e9 B/s").in_bytes_per_second(), 1e9);
}

TEST(ParseBandwidth, RejectsWithAnExample) {
  try {
    parse_bandwidth("fast");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "expected a positive bandwidth such as '300 GB/s', found 'fast'");
  }
  EXPECT_THROW(parse_bandwidth("300"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth("-3 GB/s"), std::invalid_argument);
  EXPECT_THROW(parse_bandwidth("3 furlongs/s"), std::invalid_argument);
}

TEST(ParseDuration, Units) {
  EXPECT_EQ(parse_duration("1.5 us").ps(), 1'500'000);
  EXPECT_EQ(parse_duration("2ms").ps(), 2'000'000'000);
  EXPECT_EQ(parse_duration("700 ns").ps(), 700'000);
  EXPECT_EQ(parse_duration("0").ps(), 0);
  EXPECT_THROW(parse_duration("5"), std::invalid_argument);
  EXPECT_THROW(parse_duration("-1 us"), std::invalid_argument);
}

TEST(ParseSize, UnitsAndWholeBytes) {
  EXPECT_EQ(parse_size("1GiB"), kGiB);
  EXPECT_EQ(parse_size("64 MiB"), 64 * kMiB);
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("1.5 KB"), 1500u);
  EXPECT_THROW(parse_size("1.5 B"), std::invalid_argument);
  EXPECT_THROW(parse_size("lots"), std::invalid_argument);
}

TEST(FormatSize, LargestExactBinaryUnit) {
  EXPECT_EQ(format_size(kGiB), "1 GiB");
  EXPECT_EQ(format_size(96 * kKiB), "96 KiB");
  EXPECT_EQ(format_size(1000), "1000 B");
}

TEST(Text, StrictIntegersAndSplitting) {
  EXPECT_EQ(parse_uint64("12802064384"), 12802064384u);
  EXPECT_FALSE(parse_uint64("-1"));
  EXPECT_FALSE(parse_uint64("12abc"));
  EXPECT_FALSE(parse_uint64("99999999999999999999999"));
  EXPECT_EQ(parse_int64("-1"), -1);
  EXPECT_FALSE(parse_double("nan"));
  const auto tokens = split_whitespace("  a\tbb  c \r\n");
  ASSERT_EQ(tokens.size(), 3u);
  EXPECT_EQ(tokens[1], "bb");
  EXPECT_EQ(trim("  x y \t"), "x y");
}

}  // namespace
}  // namespace orrery
