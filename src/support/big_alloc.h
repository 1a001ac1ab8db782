// Allocation for large, long-lived buffers: packed weights and the buffer
// pool's blocks. A model's weights (100 MB for resnet50, more once a
// Winograd kernel has transformed them) are read from memory on every run;
// on 4 KiB pages each page costs a TLB miss, and the cores' stream
// prefetchers stop at page boundaries. From kHugeFrom bytes on, buffers are
// aligned to 2 MiB and advised to the kernel as huge pages (madvise
// MADV_HUGEPAGE and MADV_COLLAPSE; hints only: with transparent huge pages
// off, or none free, they stay on small pages). Measured on resnet50 at 1
// thread, per-node minima of 5 alternated runs: 37.39 -> 35.74 ms (see
// big_alloc.cc). Smaller buffers keep small pages: a 2 MiB page each would
// multiply their memory. KILN_HUGEPAGES=0 turns the advice off (for A/B
// timing).
#pragma once

#include <cstddef>

namespace kiln {

inline constexpr size_t kHugeFrom = size_t{1} << 20;

// `bytes` (> 0) aligned to 64 bytes, or to 2 MiB and advised from
// kHugeFrom on; null when out of memory. Contents uninitialized. Free with
// std::free.
void* AllocateBig(size_t bytes);

}  // namespace kiln
