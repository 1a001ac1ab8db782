// Reference kernel of Unique (opset 11), numpy.unique semantics: without
// axis the input is flattened; with axis the unit is the slice x[..., i, ...]
// compared lexicographically in row-major order of the other dims. Outputs:
// Y, the first occurrence of each unique value (indices), for each input
// element/slice the position of its value in Y (inverse_indices), counts.
// sorted=1 orders Y ascending; sorted=0 keeps the order of first occurrence.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/indexing.h"
#include "ops/infer_util.h"
#include "providers/reference/indexing_kernels.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

// -1, 0, 1 with NaN after every number and NaNs equal (numpy >= 1.21).
template <typename T>
int Compare(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return Compare(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
    return a < b ? -1 : (b < a ? 1 : 0);
  } else {
    return a < b ? -1 : (b < a ? 1 : 0);
  }
}

Status Unique(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 must be a tensor");
  KILN_ASSIGN_OR_RETURN(ops::UniqueAttrs a, ops::ParseUnique(ctx.node(), ctx.opset()));
  int64_t outer = 1, n = x.numel(), inner = 1, axis = -1;
  if (a.axis) {
    if (x.rank() < 1) return ctx.Error("axis is given but the input is a scalar");
    KILN_ASSIGN_OR_RETURN(axis, ops::NormalizeAxis(ctx.node(), *a.axis, x.rank()));
    outer = DimProduct(x.shape(), 0, static_cast<size_t>(axis));
    n = x.dim(static_cast<int>(axis));
    inner = DimProduct(x.shape(), static_cast<size_t>(axis) + 1, x.shape().size());
  }
  std::vector<int64_t> first;    // per unique value: its first slice index
  std::vector<int64_t> inverse(static_cast<size_t>(n));
  std::vector<int64_t> counts;
  Tensor y;
  Status s = VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    auto cmp = [&](int64_t i, int64_t j) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < inner; ++k) {
          int c = Compare(p[(o * n + i) * inner + k], p[(o * n + j) * inner + k]);
          if (c != 0) return c;
        }
      return 0;
    };
    // Stable sort by value: within a run of equal slices the first index
    // comes first, which is numpy's return_index.
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return cmp(i, j) < 0; });
    std::vector<int64_t> group(static_cast<size_t>(n));  // sorted-group id of each slice
    for (size_t r = 0; r < order.size(); ++r) {
      if (r == 0 || cmp(order[r - 1], order[r]) != 0) {
        first.push_back(order[r]);
        counts.push_back(0);
      }
      group[static_cast<size_t>(order[r])] = static_cast<int64_t>(first.size()) - 1;
      ++counts.back();
    }
    const size_t u = first.size();
    // rank[g] = position of sorted group g in Y.
    std::vector<int64_t> rank(u);
    std::iota(rank.begin(), rank.end(), int64_t{0});
    if (!a.sorted) {
      std::vector<int64_t> by_first(u);
      std::iota(by_first.begin(), by_first.end(), int64_t{0});
      std::sort(by_first.begin(), by_first.end(), [&](int64_t g, int64_t h) { return first[g] < first[h]; });
      std::vector<int64_t> f2(u), c2(u);
      for (size_t pos = 0; pos < u; ++pos) {
        rank[static_cast<size_t>(by_first[pos])] = static_cast<int64_t>(pos);
        f2[pos] = first[static_cast<size_t>(by_first[pos])];
        c2[pos] = counts[static_cast<size_t>(by_first[pos])];
      }
      first = std::move(f2);
      counts = std::move(c2);
    }
    for (int64_t i = 0; i < n; ++i) inverse[static_cast<size_t>(i)] = rank[static_cast<size_t>(group[static_cast<size_t>(i)])];
  });
  KILN_RETURN_IF_ERROR(s);
  const int64_t u = static_cast<int64_t>(first.size());
  Shape yshape{u};
  if (a.axis) {
    yshape = x.shape();
    yshape[static_cast<size_t>(axis)] = u;
  }
  KILN_ASSIGN_OR_RETURN(y, ctx.AllocOutput(0, x.dtype(), yshape));
  KILN_RETURN_IF_ERROR(VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    T* dst = y.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t g = 0; g < u; ++g)
        for (int64_t k = 0; k < inner; ++k)
          dst[(o * u + g) * inner + k] = p[(o * n + first[static_cast<size_t>(g)]) * inner + k];
  }));
  const std::vector<int64_t>* lists[] = {&first, &inverse, &counts};
  for (size_t i = 1; i < 4; ++i) {
    if (!ctx.has_output(i)) continue;
    const std::vector<int64_t>& v = *lists[i - 1];
    KILN_ASSIGN_OR_RETURN(Tensor t, ctx.AllocOutput(i, DType::kInt64, {static_cast<int64_t>(v.size())}));
    std::copy(v.begin(), v.end(), t.data<int64_t>());
  }
  return Status::Ok();
}

}  // namespace

void RegisterUniqueKernels(runtime::KernelRegistry& r) { r.Register("", "Unique", Unique); }

}  // namespace kiln::reference
