#include "engine/kernel.h"

#include <algorithm>
#include <stdexcept>

namespace orrery::engine {

Kernel::Kernel(std::vector<double> capacity) : sharing_(std::move(capacity)) {}

void Kernel::refuse_past() {
  throw std::logic_error("Kernel::at: an event in the past");
}

void Kernel::push_timed(Timed t) {
  size_t at = timed_.size();
  timed_.push_back(t);
  while (at > 0) {
    const size_t parent = (at - 1) / 4;
    if (!(t < timed_[parent])) break;
    timed_[at] = timed_[parent];
    at = parent;
  }
  timed_[at] = t;
}

void Kernel::pop_timed() {
  const Timed last = timed_.back();
  timed_.pop_back();
  const size_t n = timed_.size();
  if (n == 0) return;
  size_t at = 0;
  while (true) {
    const size_t first = 4 * at + 1;
    if (first >= n) break;
    size_t least = first;
    if (first + 4 <= n) {  // four children: the least of two pairs' least
      const size_t a = timed_[first + 1] < timed_[first] ? first + 1 : first;
      const size_t b = timed_[first + 3] < timed_[first + 2] ? first + 3 : first + 2;
      least = timed_[b] < timed_[a] ? b : a;
    } else {
      for (size_t c = first + 1; c < n; ++c)
        if (timed_[c] < timed_[least]) least = c;
    }
    if (!(timed_[least] < last)) break;
    timed_[at] = timed_[least];
    at = least;
  }
  timed_[at] = last;
}

}  // namespace orrery::engine
