#include "runtime/buffer_pool.h"

#include <cstdlib>
#include <cstring>

#include "support/big_alloc.h"

namespace kiln::runtime {

std::shared_ptr<BufferPool> BufferPool::Create(size_t max_cached_bytes, uint64_t limit) {
  return std::shared_ptr<BufferPool>(new BufferPool(max_cached_bytes, limit));
}

BufferPool::~BufferPool() {
  for (auto& [cls, blocks] : free_)
    for (void* p : blocks) FreeBig(p);
}

size_t BufferPool::SizeClass(size_t bytes) {
  if (bytes <= 64) return 64;
  if (bytes <= (size_t{1} << 16)) return (bytes + 63) / 64 * 64;
  // Four classes per power of two: 2^k * {1, 1.25, 1.5, 1.75}.
  size_t p = size_t{1} << 16;
  while (p * 2 < bytes) p *= 2;
  const size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

Result<Tensor> BufferPool::Allocate(DType dtype, const Shape& shape, const DimOrder& order, bool zero) {
  if (dtype == DType::kString || dtype == DType::kUndefined) return AllocateInOrder(dtype, shape, order);
  // Validate the count and the layout the way AllocateInOrder does, through a
  // cheap probe of the shape (no storage): Tensor::Allocate's checks.
  KILN_ASSIGN_OR_RETURN(int64_t n, CheckedElementCount(shape));
  const size_t bytes = static_cast<size_t>(n) * DTypeSize(dtype);
  if (bytes > (size_t{1} << 38)) return AllocateInOrder(dtype, shape, order);  // let it report "too large"
  const DimOrder o = ResolveOrder(order, static_cast<int>(shape.size()));
  if (o.size() != shape.size()) return AllocateInOrder(dtype, shape, order);  // reports the mismatch
  const size_t cls = SizeClass(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ > 0 && stats_.in_use + cls > limit_)
      return ResourceExhausted("memory limit of " + std::to_string(limit_) + " bytes exceeded: a tensor " + DTypeName(dtype) +
                               ShapeToString(shape) + " needs " + std::to_string(bytes) + " bytes with " +
                               std::to_string(stats_.in_use) + " already in use");
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      stats_.cached -= cls;
      ++stats_.reuses;
    } else {
      ++stats_.system_allocations;
    }
    stats_.in_use += cls;
    stats_.peak_in_use = std::max(stats_.peak_in_use, stats_.in_use);
  }
  if (!p) {
    p = AllocateBig(cls);  // on huge pages (big_alloc.h)
    if (!p) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.in_use -= cls;
      return ResourceExhausted("cannot allocate " + std::to_string(cls) + " bytes for a tensor " + DTypeName(dtype) + ShapeToString(shape));
    }
  }
  if (zero) std::memset(p, 0, bytes);
  std::weak_ptr<BufferPool> weak = weak_from_this();
  auto storage = std::make_shared<Storage>(p, bytes, [weak, cls](void* q) {
    if (auto pool = weak.lock()) pool->Release(q, cls);
    else FreeBig(q);
  });
  // Stored dims in `order`, then permuted back to the logical shape.
  Shape stored(shape.size());
  for (size_t k = 0; k < o.size(); ++k) stored[k] = shape[static_cast<size_t>(o[k])];
  std::vector<int64_t> inverse(o.size());
  for (size_t k = 0; k < o.size(); ++k) inverse[static_cast<size_t>(o[k])] = static_cast<int64_t>(k);
  return Tensor::Wrap(dtype, stored, std::move(storage)).Permuted(inverse);
}

void BufferPool::Release(void* p, size_t cls) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.in_use -= cls;
  if (stats_.cached + cls > max_cached_) {
    FreeBig(p);
    return;
  }
  free_[cls].push_back(p);
  stats_.cached += cls;
}

BufferPool::Stats BufferPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace kiln::runtime
