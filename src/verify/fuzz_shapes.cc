#include "verify/fuzz_shapes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::verify {

int64_t Numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

bool FitsLimits(const Shape& s, const FuzzLimits& limits) {
  for (int64_t d : s)
    if (d < 1 || d > limits.max_dim) return false;
  return Numel(s) <= limits.max_numel;
}

int64_t WindowOutSize(int64_t in, const Window1D& w, bool ceil_mode) {
  const int64_t span = in + w.pad_begin + w.pad_end - DilatedKernel(w.kernel, w.dilation);
  if (span < 0) return 0;
  return (ceil_mode ? (span + w.stride - 1) / w.stride : span / w.stride) + 1;
}

bool CeilModeLastWindowStartsInside(int64_t in, const Window1D& w) {
  const int64_t out = WindowOutSize(in, w, true);
  return out < 1 || (out - 1) * w.stride < in + w.pad_begin;
}

void SamePads(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool upper, int64_t* pad_begin,
              int64_t* pad_end) {
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + DilatedKernel(kernel, dilation) - in);
  const int64_t small = total / 2, big = total - small;
  *pad_begin = upper ? small : big;
  *pad_end = upper ? big : small;
}

int64_t ConvTransposeOutSize(int64_t in, const Window1D& w, int64_t output_padding) {
  return w.stride * (in - 1) + output_padding + DilatedKernel(w.kernel, w.dilation) - w.pad_begin - w.pad_end;
}

int64_t SliceOutSize(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start = start <= std::numeric_limits<int64_t>::min() + dim ? 0 : start + dim;
  if (end < 0) end = end <= std::numeric_limits<int64_t>::min() + dim ? -1 : end + dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  const int64_t span = end - start;
  if (step > 0) return span <= 0 ? 0 : (span + step - 1) / step;
  return span >= 0 ? 0 : (-span + (-step) - 1) / (-step);
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  Shape s(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    s[i] = da == 1 ? db : da;
  }
  *out = s;
  return true;
}

Shape PermuteShape(const Shape& s, const std::vector<int64_t>& perm) {
  Shape r(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) r[i] = s[static_cast<size_t>(perm[i])];
  return r;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

int64_t ResizeOutSize(int64_t in, float scale) {
  return static_cast<int64_t>(std::floor(static_cast<double>(in) * static_cast<double>(scale)));
}

Shape FlattenShape(const Shape& s, int64_t axis) {
  int64_t a = 1, b = 1;
  for (size_t i = 0; i < s.size(); ++i) (static_cast<int64_t>(i) < axis ? a : b) *= s[i];
  return {a, b};
}

}  // namespace kiln::verify
