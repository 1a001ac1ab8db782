// What a cpu kernel builds per input shape (oneDNN primitives, packed
// weights, kiln's own kernel objects) for a dynamic input, kept for the
// shapes that come back. Thread-safe: concurrent runs share it, and a run
// keeps the entry it got alive whatever the cache does after.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// Most shapes kept; beyond, the cache starts over. An OCR recognizer fed
// text lines of every width would otherwise keep one packed copy of its
// weights per width for the session's life.
inline constexpr size_t kMaxCachedShapes = 32;

template <typename T>
class ShapeCache {
 public:
  // The entry for x, built by build(x) (a Result<std::shared_ptr<const T>>)
  // when absent; a failed build is returned and nothing is kept.
  template <typename Build>
  Result<std::shared_ptr<const T>> Get(const Shape& x, Build&& build) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(x);
    if (it != cache_.end()) return it->second;
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<const T> p, build(x));
    if (cache_.size() >= kMaxCachedShapes) cache_.clear();
    cache_[x] = p;
    return p;
  }

 private:
  std::mutex mu_;
  std::map<Shape, std::shared_ptr<const T>> cache_;
};

}  // namespace kiln::cpu
