// Helpers shared by the conv, pool and normalization reference kernels:
// whole-tensor conversion to double (the oracle computes in double and
// rounds once when storing) and row-major offsets of spatial positions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {

// Elements of a contiguous numeric tensor as doubles (int64 beyond 2^53 loses
// precision; no conv/pool/norm input needs that).
inline std::vector<double> ReadDoubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  Status s = VisitNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* p = t.data<T>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = ToDouble(p[i]);
    } else {
      const bool* p = t.data<bool>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = p[i] ? 1.0 : 0.0;
    }
  });
  (void)s;  // callers check dtypes first (inference); unknown ones read as zeros
  return v;
}

// Elements of a contiguous integer tensor as int64.
inline std::vector<int64_t> ReadInts(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  Status s = VisitNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) v[i] = static_cast<int64_t>(static_cast<float>(p[i]));
      else v[i] = static_cast<int64_t>(p[i]);
    }
  });
  (void)s;
  return v;
}

// Stores doubles into a contiguous tensor of a numeric dtype (rounding once).
inline void WriteDoubles(Tensor& t, const std::vector<double>& v) {
  Status s = VisitNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data<T>();
    const size_t n = std::min(v.size(), static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < n; ++i) p[i] = FromDouble<T>(v[i]);
  });
  (void)s;
}

// Every multi-index of `shape` in row-major order (materialized once: kernel
// windows and output grids of the reference kernels).
inline std::vector<std::vector<int64_t>> AllIndices(const Shape& shape) {
  std::vector<std::vector<int64_t>> out;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (n <= 0) return out;
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    out.push_back(idx);
    for (size_t k = shape.size(); k-- > 0;) {
      if (++idx[k] < shape[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

}  // namespace kiln::reference
