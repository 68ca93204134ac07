#include "core/quantity.h"

#include <gtest/gtest.h>

#include "core/dtype.h"
#include "core/text.h"

namespace orrery {
namespace {

TEST(ParseBandwidth, DecimalBinaryAndBitUnits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("300 GB/s").in_bytes_per_second(), 300e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("48.5 GiB/s").in_bytes_per_second(), 48.5 * 1073741824.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("200 Gb/s").in_bytes_per_second(), 25e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps").in_bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth("1e9 B/s").in_bytes_per_second(), 1e9);
  // A bare number is GB/s, not GiB/s.
  EXPECT_DOUBLE_EQ(parse_bandwidth("300").in_bytes_per_second(), 300e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth(" 48.5 ").in_bytes_per_second(), 48.5e9);
}

TEST(ParseBandwidth, RejectsWithAnExample) {
  try {
    parse_bandwidth("fast");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "expected a positive bandwidth such as '300 GB/s', found 'fast'");
  }
  EXPECT_THROW(parse_bandwidth("0"), std::invalid_argument);
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

TEST(ParseFlopRate, PrefixesAndSpellings) {
  EXPECT_DOUBLE_EQ(parse_flop_rate("989.4 TFLOP/s").in_flop_per_second(), 989.4e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("312 TFLOPS").in_flop_per_second(), 312e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("624 TOPS").in_flop_per_second(), 624e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("311869.4326171875 GFLOP/s").in_flop_per_second(),
                   311869.4326171875e9);
  EXPECT_THROW(parse_flop_rate("312"), std::invalid_argument);
  EXPECT_THROW(parse_flop_rate("0 TFLOP/s"), std::invalid_argument);
  EXPECT_THROW(parse_flop_rate("3 TB/s"), std::invalid_argument);
  // 1 TFLOP at 1 TFLOP/s takes one second.
  EXPECT_EQ(FlopRate::tflop_per_second(1).time_for(1e12), Time::from_seconds(1));
}

TEST(DType, NamesSizesAndPyTorchSpellings) {
  EXPECT_EQ(parse_dtype("bf16"), DType::BF16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::BF16);
  EXPECT_EQ(parse_dtype("Float16"), DType::FP16);
  EXPECT_EQ(parse_dtype("float"), DType::FP32);
  EXPECT_FALSE(parse_dtype("fp12"));
  EXPECT_EQ(size_in_bytes(DType::FP32), 4);
  EXPECT_EQ(size_in_bytes(DType::TF32), 4);
  EXPECT_EQ(size_in_bytes(DType::BF16), 2);
  EXPECT_EQ(size_in_bytes(DType::FP8), 1);
  EXPECT_EQ(to_string(DType::TF32), "tf32");
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
  EXPECT_EQ(split("a\t\tb", '\t'), (std::vector<std::string_view>{"a", "", "b"}));
  const auto lines = split_lines("one\ntwo\n");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].number, 2);
  EXPECT_EQ(lines[1].text, "two");
  EXPECT_EQ(lines[2].text, "");
}

}  // namespace
}  // namespace orrery
