// Process-wide tuning of the C library's allocator for repeated simulations in one process. A
// prediction allocates tens of megabytes of tasks and frees them at the end; glibc returns such
// memory to the kernel (munmap, heap trimming), so the next prediction faults every page in again,
// which cost half the time of a 128,000-task run. Raising the mmap and trim thresholds keeps freed
// memory in the process for reuse; the price is that the process holds on to its peak heap.
#pragma once

namespace orrery {

// Call once, early (the orrery binary, the benchmarks, in-process sweeps). A no-op off glibc.
void keep_freed_memory_for_reuse();

}  // namespace orrery
