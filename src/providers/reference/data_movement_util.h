// Helpers of the data movement reference kernels: every one of them is an
// index map from output elements to input elements, written once for every
// dtype (strings included).
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/tensor.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {

// out[lin] = in[src(index)] for every output index, where src returns the
// linear (row-major) element of the contiguous input, or -1 to leave the
// output element untouched (a fill value set beforehand).
template <typename F>
Status GatherByIndex(const Tensor& in, const Tensor& out, F&& src) {
  return VisitAll(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = in.data<T>();
    T* d = out.data<T>();
    ForEachIndex(out.shape(), [&](int64_t lin, const std::vector<int64_t>& idx) {
      const int64_t from = src(idx);
      if (from >= 0) d[lin] = s[from];
    });
  });
}

// Copies `count` contiguous elements from in (at element from) to out (at
// element to); both tensors contiguous and of the same dtype.
inline void CopyElements(const Tensor& in, int64_t from, const Tensor& out, int64_t to, int64_t count) {
  (void)VisitAll(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = in.data<T>() + from;
    T* d = out.data<T>() + to;
    for (int64_t k = 0; k < count; ++k) d[k] = s[k];
  });
}

}  // namespace kiln::reference
