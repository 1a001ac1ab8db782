// A session's pool of intermediate buffers. Outputs of kernels are carved
// from blocks that earlier runs (or earlier nodes of this run) released, so
// after the first Run of a static-shape model no memory is requested from
// the system and no page is faulted in again: fresh multi-megabyte buffers
// cost more in page faults than the elementwise kernels that fill them.
//
// Blocks are kept per size class (64-byte multiples below 64 KiB, then four
// classes per power of two, so at most 25% is wasted); a block is reused
// only for its class. Tensors handed to users hold their block until they
// are dropped; the pool outlives them (each block's release holds it).
// Thread-safe: concurrent Runs of one session share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "support/layout.h"

namespace kiln::runtime {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // `limit`: most bytes live at once (0 = none); beyond it Allocate fails.
  static std::shared_ptr<BufferPool> Create(size_t max_cached_bytes = size_t{1} << 30, uint64_t limit = 0);
  ~BufferPool();

  // A tensor of logical `shape` stored in `order`; contents uninitialized
  // unless `zero`.
  Result<Tensor> Allocate(DType dtype, const Shape& shape, const DimOrder& order, bool zero);

  struct Stats {
    size_t in_use = 0;       // bytes held by live tensors
    size_t peak_in_use = 0;  // the most ever held at once
    size_t cached = 0;       // bytes kept free for reuse
    uint64_t system_allocations = 0;  // blocks obtained from the system
    uint64_t reuses = 0;
  };
  Stats stats() const;

  static size_t SizeClass(size_t bytes);

 private:
  BufferPool(size_t max_cached, uint64_t limit) : max_cached_(max_cached), limit_(limit) {}
  void Release(void* p, size_t cls);

  mutable std::mutex mu_;
  std::map<size_t, std::vector<void*>> free_;  // by size class
  size_t max_cached_;
  uint64_t limit_;
  Stats stats_;
};

}  // namespace kiln::runtime
