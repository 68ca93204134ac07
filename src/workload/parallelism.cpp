#include "workload/parallelism.h"

namespace orrery {

std::string Parallelism::validation_error() const {
  const auto s = [](int64_t v) { return std::to_string(v); };
  if (tp < 1 || cp < 1 || pp < 1 || ep < 1 || vpp < 1 || micro_batches < 1 || world_size < 1)
    return "every parallel degree must be at least 1";
  if (world_size > kMaxWorldSize)
    return "world size " + s(world_size) + " is beyond the " + s(kMaxWorldSize) +
           " GPUs Orrery simulates";
  if (tp > world_size || pp > world_size || ep > world_size)
    return "tp " + s(tp) + ", pp " + s(pp) + " and ep " + s(ep) +
           " must each fit in the world of " + s(world_size) + " GPUs";
  if (world_size % (tp * cp * pp) != 0)
    return "world size " + s(world_size) + " is not a multiple of tp * " + (cp > 1 ? "cp * " : "") +
           "pp = " + s(tp * cp * pp);
  if (dp() % ep != 0)
    return "data-parallel degree " + s(dp()) + " (world " + s(world_size) + " / tp " + s(tp) +
           (cp > 1 ? " / cp " + s(cp) : "") + " / pp " + s(pp) +
           ") is not a multiple of ep = " + s(ep);
  return "";
}

}  // namespace orrery
