// A one-line progress bar on stderr for work that may take more than a second: what is being
// done, the fraction done and an estimate of the time left from the pace so far. It draws only
// when enabled (stderr is a terminal and the user did not ask for quiet), only once a second has
// passed, at most ten times a second, and erases its line when destroyed. Wall-clock time is used
// for display only; it never reaches a result.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace orrery {

class ProgressBar {
 public:
  // `out`: where to draw (stderr in the CLI; a test passes a file).
  ProgressBar(std::string what, bool enabled, std::FILE* out = stderr);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // `fraction` of the work done, 0 to 1.
  void update(double fraction);

  // True when stderr is a terminal (the default for `enabled` in the CLI, less --quiet).
  static bool stderr_is_terminal();

  // The line drawn for `fraction` done after `elapsed_s` seconds, e.g.
  // "simulating flows [#####.....]  50 %, 3 s left" (no left estimate before any progress).
  static std::string line(const std::string& what, double fraction, double elapsed_s);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  bool enabled_;
  std::FILE* out_;
  Clock::time_point begin_, drawn_;
  bool shown_ = false;
};

}  // namespace orrery
