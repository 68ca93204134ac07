#include "core/allocator_tuning.h"

#include <cstddef>  // defines __GLIBC__ on glibc systems

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace orrery {

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  constexpr int kMmapThreshold = 32 << 20;  // blocks below this come from the heap (its maximum)
  constexpr int kTrimThreshold = 1 << 30;   // the heap keeps up to this much free at its top
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
}

}  // namespace orrery
