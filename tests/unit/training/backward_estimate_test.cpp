#include "training/backward_estimate.h"

#include <gtest/gtest.h>

#include <string>

#include "formats/neusight_table.h"

namespace orrery {
namespace {

constexpr const char* kHeader =
    "name\tforward_compute_time\tforward_comm_type\tforward_comm_size\tbackward_compute_time\t"
    "backward_comm_type\tbackward_comm_size\tweight_grad_compute_time\tweight_grad_comm_type\t"
    "weight_grad_comm_size\tprocess_time\n";

std::string row(const std::string& name, const std::string& forward_ms,
                const std::string& grad_elements = "", const std::string& process_ms = "0") {
  return name + "\t" + forward_ms + "\tNone\t0\t0.0\t" +
         (grad_elements.empty() ? "None\t0" : "ALLREDUCE_ASYNC\t" + grad_elements) +
         "\t0.0\tNONE\t0\t" + process_ms + "\n";
}

Workload table(const std::string& rows, Diagnostics& d, const ReaderOptions& o = {}) {
  return read_neusight_table("t.txt", std::string(kHeader) + rows, o, d);
}

std::string warnings_of(const Diagnostics& d) {
  std::string out;
  for (const Warning& w : d.warnings())
    out += w.to_string() + "\n";
  return out;
}

// A table with forward times only: backward = ratio x forward, half input and half weight
// gradient for a layer with parameters (it has an X_grad row), all input gradient otherwise; the
// optimizer row (process_time) gets none. The warning names the ratio as an assumption.
TEST(BackwardEstimate, RatioTimesForwardSplitByParameters) {
  for (const double ratio : {2.0, 3.0}) {
    Diagnostics d;
    Workload w = table(row("x_grad", "0", "10") + row("x", "1") + row("y", "1", "", "0.5"), d);
    ASSERT_TRUE(w.forward_times_only);
    estimate_backward(w, ratio, d);
    EXPECT_FALSE(w.forward_times_only);
    const auto us = [](double v) { return Time::from_us(static_cast<int64_t>(v)); };
    EXPECT_EQ(w.program.layers[0].input_grad.compute, Time::zero());
    EXPECT_EQ(w.program.layers[1].input_grad.compute, us(500 * ratio));
    EXPECT_EQ(w.program.layers[1].weight_grad.compute, us(500 * ratio));
    EXPECT_EQ(w.program.layers[2].input_grad.compute, us(1000 * ratio));
    EXPECT_EQ(w.program.layers[2].weight_grad.compute, Time::zero());
    ASSERT_EQ(w.program.layers.size(), 4u);
    EXPECT_EQ(w.program.layers[3].name, "optimizer");
    EXPECT_EQ(w.program.layers[3].input_grad.compute, Time::zero());
    const std::string r = ratio == 2.0 ? "2" : "3";
    EXPECT_NE(
        warnings_of(d).find("t.txt: the file gives forward times only (NeuSight without "
                            "is_train): backward times are assumed to be " +
                            r + " x forward, a ratio the file does not give (--backward-ratio)"),
        std::string::npos)
        << warnings_of(d);
  }
}

TEST(BackwardEstimate, GivenBackwardTimesAreLeftAsTheyAre) {
  Diagnostics d;
  Workload w = read_neusight_table(
      "t.txt", std::string(kHeader) + "a\t1.0\tNone\t0\t2.5\tNone\t0\t0.5\tNone\t0\t0\n", {}, d);
  ASSERT_FALSE(w.forward_times_only);
  estimate_backward(w, 3, d);
  EXPECT_EQ(w.program.layers[0].input_grad.compute, Time::from_us(2500));
  EXPECT_EQ(w.program.layers[0].weight_grad.compute, Time::from_us(500));
  EXPECT_EQ(warnings_of(d).find("assumed"), std::string::npos);
}

// A table the reader accepts (3.6e8 ms of forward over 100 blocks) whose estimated backward, 100
// times longer, is more compute than an iteration can hold: refused in one line naming the file
// and the row where the total passes the bound, before any time overflows.
TEST(BackwardEstimate, OversizedIterationIsRefusedAtItsRow) {
  Diagnostics d;
  ReaderOptions o;
  o.layers = 100;
  Workload w = table(row("small", "1") + row("transformer_h_0_ln_1", "3600000"), d, o);
  try {
    estimate_backward(w, kMaxBackwardRatio, d);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("t.txt:3: expected at most 1e9 ms (11.6 days) of compute per iteration; "
                         "with the backward estimated as 100 x forward (--backward-ratio) the "
                         "rows up to this one hold ",
                         0),
              0u)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  // At ratio 1.5 the same table fits.
  Workload fits = table(row("small", "1") + row("transformer_h_0_ln_1", "3600000"), d, o);
  estimate_backward(fits, 1.5, d);
  EXPECT_EQ(fits.program.layers.back().input_grad.compute, Time::from_seconds(5400));
}

}  // namespace
}  // namespace orrery
