#include "core/progress_bar.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace orrery {
namespace {

TEST(ProgressBar, LineShowsFractionAndTimeLeft) {
  // Half done in 3 s: at the same pace, 3 s left.
  EXPECT_EQ(ProgressBar::line("simulating", 0.5, 3.0),
            "simulating [###############...............]  50 %, 3 s left");
  // A quarter in 40 s: 120 s left, shown in minutes.
  EXPECT_EQ(ProgressBar::line("x", 0.25, 40.0),
            "x [#######.......................]  25 %, 2 min 0 s left");
  // Nothing done yet: no estimate.
  EXPECT_EQ(ProgressBar::line("x", 0.0, 5.0), "x [..............................]   0 %");
  EXPECT_EQ(ProgressBar::line("x", 1.0, 5.0), "x [##############################] 100 %, 0 s left");
}

TEST(ProgressBar, DisabledOrEarlyItDrawsNothing) {
  std::FILE* f = std::tmpfile();
  {
    ProgressBar off("x", false, f);
    off.update(0.5);
    ProgressBar early("x", true, f);
    early.update(0.5);  // within the first second
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

}  // namespace
}  // namespace orrery
