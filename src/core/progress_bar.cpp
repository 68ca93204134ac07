#include "core/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace orrery {
namespace {

constexpr int kWidth = 30;  // characters of the bar
constexpr std::chrono::milliseconds kDelay{1000}, kInterval{100};

std::string time_left(double seconds) {
  const auto s = static_cast<long long>(std::ceil(seconds));
  if (s < 60) return std::to_string(s) + " s left";
  if (s < 3600) return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s left";
  return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) + " min left";
}

}  // namespace

ProgressBar::ProgressBar(std::string what, bool enabled, std::FILE* out)
    : what_(std::move(what)), enabled_(enabled), out_(out), begin_(Clock::now()) {}

ProgressBar::~ProgressBar() {
  if (shown_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

bool ProgressBar::stderr_is_terminal() {
  return isatty(STDERR_FILENO) == 1;
}

std::string ProgressBar::line(const std::string& what, double fraction, double elapsed_s) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int filled = static_cast<int>(fraction * kWidth);
  std::string s = what + " [" + std::string(static_cast<size_t>(filled), '#') +
                  std::string(static_cast<size_t>(kWidth - filled), '.') + "] ";
  const int percent = static_cast<int>(fraction * 100);
  s += (percent < 10 ? "  " : percent < 100 ? " " : "") + std::to_string(percent) + " %";
  if (fraction > 0) s += ", " + time_left(elapsed_s * (1 - fraction) / fraction);
  return s;
}

void ProgressBar::update(double fraction) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now - begin_ < kDelay || (shown_ && now - drawn_ < kInterval)) return;
  const double elapsed = std::chrono::duration<double>(now - begin_).count();
  std::fprintf(out_, "\r\033[K%s", line(what_, fraction, elapsed).c_str());
  std::fflush(out_);
  shown_ = true;
  drawn_ = now;
}

}  // namespace orrery
