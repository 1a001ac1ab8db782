// One loop nest for elementwise kernels over tensors in any layout: the
// output's dims are visited in its memory order (outermost first), inputs
// follow through their own strides (0 on broadcast dims), and adjacent dims
// that are contiguous for every operand are merged, so a same-layout add is
// one flat loop and a per-channel multiply on channels-last data is a loop
// over pixels around a contiguous loop over channels.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::cpu {

template <size_t N>  // N operands: the output first
struct LoopNest {
  std::vector<int64_t> size;                      // outer -> inner
  std::vector<std::array<int64_t, N>> stride;     // per dim, per operand (elements)
  int64_t outer_count() const {
    int64_t n = 1;
    for (size_t k = 0; k + 1 < size.size(); ++k) n *= size[k];
    return n;
  }
  int64_t inner() const { return size.empty() ? 1 : size.back(); }
};

// Strides of `t` read as `out_shape` under numpy broadcasting (0 where t has
// size 1 or is missing).
inline std::vector<int64_t> BroadcastStrides(const Tensor& t, const Shape& out_shape) {
  std::vector<int64_t> s(out_shape.size(), 0);
  const size_t off = out_shape.size() - static_cast<size_t>(t.rank());
  for (size_t i = 0; i < static_cast<size_t>(t.rank()); ++i)
    s[off + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

template <size_t N>
LoopNest<N> MakeLoopNest(const Shape& shape, const std::array<std::vector<int64_t>, N>& strides) {
  // Visit dims in the output's memory order (decreasing |stride|), size-1 dims dropped.
  std::vector<size_t> dims;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != 1) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) { return strides[0][a] > strides[0][b]; });
  LoopNest<N> nest;
  for (size_t d : dims) {
    std::array<int64_t, N> s;
    for (size_t k = 0; k < N; ++k) s[k] = strides[k][d];
    if (!nest.size.empty()) {
      // Merge into the previous (outer) dim when it steps exactly over this one for every operand.
      bool merge = true;
      for (size_t k = 0; k < N && merge; ++k) merge = nest.stride.back()[k] == s[k] * shape[d];
      if (merge) {
        nest.size.back() *= shape[d];
        nest.stride.back() = s;
        continue;
      }
    }
    nest.size.push_back(shape[d]);
    nest.stride.push_back(s);
  }
  if (nest.size.empty()) {  // a single element
    nest.size.push_back(1);
    nest.stride.push_back({});
  }
  return nest;
}

// Calls f(offsets, inner_count, inner_strides) for each run of the innermost
// dim; `outer` ranges over [begin, end) of the flattened outer dims, so
// callers can split the outer range across threads.
template <size_t N, typename F>
void ForEachInnerRun(const LoopNest<N>& nest, int64_t begin, int64_t end, F&& f) {
  const size_t outer_dims = nest.size.size() - 1;
  for (int64_t o = begin; o < end; ++o) {
    std::array<int64_t, N> off{};
    int64_t rem = o;
    for (size_t k = outer_dims; k-- > 0;) {
      const int64_t i = rem % nest.size[k];
      rem /= nest.size[k];
      for (size_t j = 0; j < N; ++j) off[j] += i * nest.stride[k][j];
    }
    f(off, nest.inner(), nest.stride.back());
  }
}

}  // namespace kiln::cpu
