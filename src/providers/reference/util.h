// Small helpers for reference kernels: index arithmetic and broadcasting.
// Plain loops by design (the reference provider is the oracle).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::reference {

// Strides (in elements) to read a contiguous tensor of shape `in` as if it
// had the broadcast shape `out`: 0 on broadcast (size-1 or missing) dims.
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out);

// Calls f(linear, index) for every index of `shape` in row-major order.
template <typename F>
void ForEachIndex(const Shape& shape, F&& f) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n == 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    f(lin, static_cast<const std::vector<int64_t>&>(idx));
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
}

// Offset of index under the given strides.
inline int64_t OffsetOf(const std::vector<int64_t>& idx, const std::vector<int64_t>& strides) {
  int64_t o = 0;
  for (size_t k = 0; k < idx.size(); ++k) o += idx[k] * strides[k];
  return o;
}

// Product of dims in [begin, end).
int64_t DimProduct(const Shape& s, size_t begin, size_t end);

}  // namespace kiln::reference
