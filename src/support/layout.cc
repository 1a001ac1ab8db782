#include "support/layout.h"

#include <algorithm>
#include <numeric>

#include "support/check.h"
#include "support/strided_copy.h"

namespace kiln {

DimOrder ResolveOrder(const DimOrder& order, int rank) {
  if (!order.empty()) return order;
  DimOrder o(static_cast<size_t>(rank));
  std::iota(o.begin(), o.end(), 0);
  return o;
}

bool SameOrder(const DimOrder& a, const DimOrder& b, int rank) { return ResolveOrder(a, rank) == ResolveOrder(b, rank); }

std::vector<int64_t> StridesInOrder(const Shape& shape, const DimOrder& order) {
  const DimOrder o = ResolveOrder(order, static_cast<int>(shape.size()));
  KILN_CHECK(o.size() == shape.size());
  std::vector<int64_t> strides(shape.size(), 1);
  int64_t s = 1;
  for (size_t k = o.size(); k-- > 0;) {
    const size_t d = static_cast<size_t>(o[k]);
    strides[d] = s;
    s *= std::max<int64_t>(shape[d], 1);
  }
  return strides;
}

bool IsDenseInOrder(const Tensor& t, const DimOrder& order) {
  if (!t.defined()) return false;
  const DimOrder o = ResolveOrder(order, t.rank());
  if (static_cast<int>(o.size()) != t.rank()) return false;
  int64_t expect = 1;
  for (size_t k = o.size(); k-- > 0;) {
    const size_t d = static_cast<size_t>(o[k]);
    const int64_t n = t.shape()[d];
    if (n == 0) return true;
    if (n == 1) continue;
    if (t.strides()[d] != expect) return false;
    expect *= n;
  }
  return true;
}

bool FindOrder(const Tensor& t, DimOrder* order) {
  if (IsDenseInOrder(t, kRowMajor)) {
    *order = kRowMajor;
    return true;
  }
  if (t.rank() == 4 && IsDenseInOrder(t, kChannelsLast)) {
    *order = kChannelsLast;
    return true;
  }
  // Sort dims by decreasing stride: the only candidate order.
  DimOrder o = ResolveOrder(kRowMajor, t.rank());
  std::stable_sort(o.begin(), o.end(), [&](int a, int b) {
    return t.strides()[static_cast<size_t>(a)] > t.strides()[static_cast<size_t>(b)];
  });
  if (!IsDenseInOrder(t, o)) return false;
  *order = o;
  return true;
}

Tensor ToOrder(const Tensor& t, const DimOrder& order) {
  if (!t.defined() || IsDenseInOrder(t, order)) return t;
  const DimOrder o = ResolveOrder(order, t.rank());
  // Permute so the storage order becomes row-major, materialize, permute back.
  std::vector<int64_t> perm(o.begin(), o.end());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return t.Permuted(perm).Clone().Permuted(inverse);
}

void CopyToOrder(const Tensor& t, const DimOrder& order, const Tensor& dst) {
  KILN_CHECK(t.dtype() == dst.dtype() && t.shape() == dst.shape() && t.dtype() != DType::kString && IsDenseInOrder(dst, order));
  if (t.numel() == 0) return;
  const DimOrder o = ResolveOrder(order, t.rank());
  // In dst's storage order both are indexed alike, and dst is row-major.
  const std::vector<int64_t> perm(o.begin(), o.end());
  const Tensor src = t.Permuted(perm);
  CopyToRowMajor(dst.raw(), src.raw(), DTypeSize(t.dtype()), src.shape(), src.strides());
}

Result<Tensor> AllocateInOrder(DType dtype, const Shape& shape, const DimOrder& order) {
  const DimOrder o = ResolveOrder(order, static_cast<int>(shape.size()));
  if (o.size() != shape.size()) return Internal("layout " + OrderName(order, static_cast<int>(o.size())) + " does not fit shape " + ShapeToString(shape));
  Shape stored(shape.size());
  for (size_t k = 0; k < o.size(); ++k) stored[k] = shape[static_cast<size_t>(o[k])];
  KILN_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dtype, stored));
  std::vector<int64_t> inverse(o.size());
  for (size_t k = 0; k < o.size(); ++k) inverse[static_cast<size_t>(o[k])] = static_cast<int64_t>(k);
  return t.Permuted(inverse);
}

DimOrder PermutedOrder(const DimOrder& in, const std::vector<int64_t>& perm) {
  const DimOrder o = ResolveOrder(in, static_cast<int>(perm.size()));
  // position (in memory) of each input dim
  std::vector<int> pos(o.size());
  for (size_t k = 0; k < o.size(); ++k) pos[static_cast<size_t>(o[k])] = static_cast<int>(k);
  // output dim i sits where input dim perm[i] sits
  DimOrder out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) out[static_cast<size_t>(pos[static_cast<size_t>(perm[i])])] = static_cast<int>(i);
  const DimOrder identity = ResolveOrder(kRowMajor, static_cast<int>(perm.size()));
  return out == identity ? kRowMajor : out;
}

std::string OrderName(const DimOrder& order, int rank) {
  const DimOrder o = ResolveOrder(order, rank);
  if (o == ResolveOrder(kRowMajor, rank)) return rank == 4 ? "NCHW" : "row-major";
  if (rank == 4 && o == kChannelsLast) return "NHWC";
  std::string s = "(";
  for (size_t k = 0; k < o.size(); ++k) s += (k ? "," : "") + std::to_string(o[k]);
  return s + ")";
}

}  // namespace kiln
