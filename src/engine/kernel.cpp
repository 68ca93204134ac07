#include "engine/kernel.h"

#include <stdexcept>

namespace orrery::engine {

Kernel::Kernel(std::vector<double> capacity) : sharing_(std::move(capacity)) {}

void Kernel::at(Time when, Event event) {
  if (when < now_) throw std::logic_error("Kernel::at: an event in the past");
  timed_.push({when, seq_++, event});
}

void Kernel::start(std::span<const ResourceId> path, double amount, Event done, uint32_t tag) {
  const FairShare::ActivityId id = sharing_.start(path, amount, now_, tag);
  if (on_done_.size() <= id) on_done_.resize(id + 1);
  on_done_[id] = done;
}

}  // namespace orrery::engine
