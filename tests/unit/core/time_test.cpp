#include "core/time.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/bandwidth.h"

namespace orrery {
namespace {

TEST(Time, ConversionsAreExactInPicoseconds) {
  EXPECT_EQ(Time::from_ns(1).ps(), 1000);
  EXPECT_EQ(Time::from_us(3).ps(), 3'000'000);
  EXPECT_EQ(Time::from_seconds(1.5).ps(), 1'500'000'000'000);
  EXPECT_DOUBLE_EQ(Time::from_ns(2'456'804).microseconds(), 2456.804);
}

TEST(Time, FromSecondsRoundsToNearestPicosecond) {
  EXPECT_EQ(Time::from_seconds(1.4e-12).ps(), 1);
  EXPECT_EQ(Time::from_seconds(1.6e-12).ps(), 2);
}

TEST(Time, RangeCoversMonthsAndRejectsBeyond) {
  // 2^63 ps is about 106 days: long enough for any iteration, and overflow is refused.
  EXPECT_NO_THROW(Time::from_seconds(86400.0 * 100));
  EXPECT_THROW(Time::from_seconds(86400.0 * 200), TimeOverflow);
  EXPECT_THROW(Time::from_seconds(std::nan("")), TimeOverflow);
}

TEST(Time, ArithmeticRefusesToWrapAround) {
  // 60 days + 60 days is past the 2^63 ps (about 106.75 days) limit in either direction.
  const Time sixty_days = Time::from_seconds(86400.0 * 60);
  EXPECT_THROW(sixty_days + sixty_days, TimeOverflow);
  EXPECT_THROW(Time::zero() - sixty_days - sixty_days, TimeOverflow);
  EXPECT_THROW(sixty_days * 2, TimeOverflow);
  EXPECT_THROW(Time::from_us(int64_t{1} << 50), TimeOverflow);  // 2^50 us = 35.7 years
  Time t = sixty_days;
  EXPECT_THROW(t += sixty_days, TimeOverflow);
  // Right up to the limit is fine.
  EXPECT_EQ((Time::from_ps(INT64_MAX - 1) + Time::from_ps(1)).ps(), INT64_MAX);
}

TEST(Time, ArithmeticAndRatio) {
  const Time a = Time::from_us(3), b = Time::from_us(1);
  EXPECT_EQ((a + b).ps(), 4'000'000);
  EXPECT_EQ((a - b).ps(), 2'000'000);
  EXPECT_EQ((b * 5).ps(), 5'000'000);
  EXPECT_DOUBLE_EQ(b / a, 1.0 / 3);
  EXPECT_LT(b, a);
}

TEST(Bandwidth, UnitsAndTransferTime) {
  EXPECT_DOUBLE_EQ(Bandwidth::gb_per_second(1).in_bytes_per_second(), 1e9);
  EXPECT_DOUBLE_EQ(Bandwidth::gib_per_second(1).in_bytes_per_second(), 1073741824.0);
  EXPECT_DOUBLE_EQ(Bandwidth::gbit_per_second(200).in_gb_per_second(), 25.0);
  // 1 GiB at 1 GiB/s is one second.
  EXPECT_EQ(Bandwidth::gib_per_second(1).time_for(static_cast<double>(kGiB)),
            Time::from_us(1'000'000));
}

}  // namespace
}  // namespace orrery
