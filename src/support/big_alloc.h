// Allocation for kiln's long-lived buffers: packed weights, the buffer
// pool's blocks and the kernels' per-thread scratch. A model's weights
// (100 MB for resnet50, more once a Winograd kernel has transformed them)
// are read from memory on every run; on 4 KiB pages each page costs a TLB
// miss, and the cores' stream prefetchers stop at page boundaries. From
// kHugeFrom bytes on, buffers are aligned to 2 MiB and advised to the
// kernel as huge pages (madvise MADV_HUGEPAGE and MADV_COLLAPSE; hints
// only: with transparent huge pages off, or none free, they stay on small
// pages). Smaller buffers share 2 MiB chunks advised the same way (a 2 MiB
// page each would multiply their memory): mobilenet_v2's weights are mostly
// such. Measured at 1 thread, medians of alternated runs against
// KILN_HUGEPAGES=0, which turns all this off (for A/B timing): resnet50
// 38.37 -> 37.10 ms, mobilenet_v2 4.153 -> 4.092 (before the scratch moved
// here too).
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace kiln {

inline constexpr size_t kHugeFrom = size_t{1} << 20;

// `bytes` aligned to 64 bytes (to 2 MiB from kHugeFrom on); null when out
// of memory. Contents uninitialized. Thread-safe. Free with FreeBig.
void* AllocateBig(size_t bytes);
// Frees what AllocateBig returned (null: nothing).
void FreeBig(void* p);

// A std::allocator on AllocateBig / FreeBig, for the scratch vectors that
// kernels keep per thread and use at every run.
template <class T>
struct BigAllocator {
  using value_type = T;
  BigAllocator() = default;
  template <class U>
  BigAllocator(const BigAllocator<U>&) {}  // NOLINT: converting, as std::allocator's
  T* allocate(size_t n) {
    void* p = AllocateBig(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { FreeBig(p); }
  template <class U>
  bool operator==(const BigAllocator<U>&) const {
    return true;
  }
};
template <class T>
using BigVector = std::vector<T, BigAllocator<T>>;

}  // namespace kiln
