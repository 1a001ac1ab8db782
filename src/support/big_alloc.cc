#include "support/big_alloc.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

// Linux 6.1's synchronous collapse; older headers lack it, older kernels
// reject it (EINVAL), which changes nothing.
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

namespace kiln {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Under AddressSanitizer every buffer keeps its own allocation, so that a
// kernel reading past one is caught (a shared chunk would hide it).
// (GCC says so with __SANITIZE_ADDRESS__, clang through __has_feature.)
#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN 1
#endif
#endif
#ifdef KILN_ASAN
constexpr bool kShareChunks = false;
#else
constexpr bool kShareChunks = true;
#endif

bool HugePagesWanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("KILN_HUGEPAGES");
    return !(v && std::string(v) == "0");
  }();
  return wanted;
}

// 2 MiB-aligned memory advised as huge pages, or null. Hints both: a
// failure changes nothing, and only whole 2 MiB stretches can become huge
// pages. MADV_HUGEPAGE makes the first write fault in huge pages, but a
// block the heap hands out again was written before (freed during model
// loading): MADV_COLLAPSE makes those pages huge now. In resnet50 (1
// thread, per-node minima of 5 alternated runs) the first alone gave 37.39
// -> 37.17 ms, with the collapse 35.74 (before the small buffers shared
// chunks); creating the session took less too (packing 740-780 -> 420-450
// ms).
void* AllocateHuge(size_t n) {
  // posix_memalign, not aligned_alloc: C11 wants the size a multiple of the
  // alignment there (ASan enforces it), and these sizes are not.
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, n) != 0) return nullptr;
  madvise(p, n, MADV_HUGEPAGE);
  madvise(p, n, MADV_COLLAPSE);
  return p;
}

// Buffers under kHugeFrom are cut from shared 2 MiB chunks, one after the
// other; a chunk's first 64 bytes count the buffers it holds, and it goes
// back when the count drops to zero (space freed inside a chunk is not
// reused before: these buffers live as long as their session). A buffer
// is never at a chunk's start, which tells FreeBig a chunk's buffers from
// the big ones (always on 2 MiB boundaries).
class Chunks {
 public:
  void* Allocate(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!current_ || used_ + n > kHugePage) {  // a full chunk goes when its last buffer does (Free)
      current_ = static_cast<char*>(AllocateHuge(kHugePage));
      if (!current_) return nullptr;
      Count(current_) = 0;
      used_ = kHeader;
    }
    void* p = current_ + used_;
    used_ += n;
    ++Count(current_);
    return p;
  }

  void Free(void* p) {
    char* chunk = reinterpret_cast<char*>(reinterpret_cast<uintptr_t>(p) / kHugePage * kHugePage);
    std::lock_guard<std::mutex> lock(mu_);
    if (--Count(chunk) > 0) return;
    if (chunk == current_) {
      used_ = kHeader;  // empty again: refill it from the start
    } else {
      std::free(chunk);
    }
  }

 private:
  static constexpr size_t kHeader = 64;
  static int64_t& Count(char* chunk) { return *reinterpret_cast<int64_t*>(chunk); }

  std::mutex mu_;
  char* current_ = nullptr;
  size_t used_ = 0;
};

Chunks& SharedChunks() {
  static Chunks* chunks = new Chunks;  // never destroyed: buffers may outlive static destruction
  return *chunks;
}

bool UseChunks() { return kShareChunks && HugePagesWanted(); }

}  // namespace

void* AllocateBig(size_t bytes) {
  const size_t n = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  if (!HugePagesWanted()) return std::aligned_alloc(64, n);
  if (n >= kHugeFrom) return AllocateHuge(n);
  return UseChunks() ? SharedChunks().Allocate(n) : std::aligned_alloc(64, n);
}

void FreeBig(void* p) {
  if (!p) return;
  if (UseChunks() && reinterpret_cast<uintptr_t>(p) % kHugePage != 0) {
    SharedChunks().Free(p);
  } else {
    std::free(p);
  }
}

}  // namespace kiln
