#include "engine/kernel.h"

#include <stdexcept>

namespace orrery::engine {

Kernel::Kernel(std::vector<double> capacity) : sharing_(std::move(capacity)) {}

void Kernel::refuse_past() {
  throw std::logic_error("Kernel::at: an event in the past");
}

}  // namespace orrery::engine
