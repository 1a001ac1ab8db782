// Reference kernels of the gathering indexing ops: Gather, GatherElements,
// GatherND, OneHot, NonZero. Scatter* live in indexing_scatter.cc, Unique in
// indexing_unique.cc. Every index is range-checked before it is used.
#include <cmath>

#include "ops/indexing.h"
#include "ops/infer_util.h"
#include "providers/reference/families.h"
#include "providers/reference/indexing_kernels.h"
#include "providers/reference/indexing_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

Status RequireTensors(const runtime::KernelContext& ctx, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!ctx.input(i).defined()) return ctx.Error("input " + std::to_string(i) + " must be a tensor");
  return Status::Ok();
}

// Gather (opset 1/11/13): out[o, j..., k] = data[o, indices[j...], k].
Status Gather(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(RequireTensors(ctx, 2));
  KILN_ASSIGN_OR_RETURN(ops::GatherAttrs a, ops::ParseGather(ctx.node(), ctx.opset()));
  const Tensor& data = ctx.input(0);
  if (data.rank() < 1) return ctx.Error("data must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.axis, data.rank()));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(ctx, ctx.input(1), "indices"));
  const int64_t n = data.dim(static_cast<int>(axis));
  for (size_t i = 0; i < idx.size(); ++i)
    KILN_RETURN_IF_ERROR(NormalizeIndex(ctx, idx[i], n, "indices", static_cast<int64_t>(i), axis));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const int64_t outer = DimProduct(data.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(data.shape(), static_cast<size_t>(axis) + 1, data.shape().size());
  const int64_t m = static_cast<int64_t>(idx.size());
  return VisitAll(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < m; ++j)
        for (int64_t k = 0; k < inner; ++k)
          dst[(o * m + j) * inner + k] = src[(o * n + idx[static_cast<size_t>(j)]) * inner + k];
  });
}

// GatherElements (11/13): out[p] = data[p with p[axis] = indices[p]].
Status GatherElements(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(RequireTensors(ctx, 2));
  KILN_ASSIGN_OR_RETURN(ops::GatherAttrs a, ops::ParseGather(ctx.node(), ctx.opset()));
  const Tensor& data = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  if (data.rank() < 1 || data.rank() != ind.rank())
    return ctx.Error("data " + data.Describe() + " and indices " + ind.Describe() + " must have the same rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.axis, data.rank()));
  for (int d = 0; d < data.rank(); ++d)
    if (d != axis && ind.dim(d) > data.dim(d))
      return ctx.node().Error(StatusCode::kOutOfRange, "indices shape " + ShapeToString(ind.shape()) +
                                                           " exceeds data shape " + ShapeToString(data.shape()) +
                                                           " on axis " + std::to_string(d));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(ctx, ind, "indices"));
  const int64_t n = data.dim(static_cast<int>(axis));
  for (size_t i = 0; i < idx.size(); ++i)
    KILN_RETURN_IF_ERROR(NormalizeIndex(ctx, idx[i], n, "indices", static_cast<int64_t>(i), axis));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const std::vector<int64_t> strides = ContiguousStrides(data.shape());
  return VisitAll(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out.data<T>();
    ForEachIndex(ind.shape(), [&](int64_t lin, const std::vector<int64_t>& p) {
      int64_t off = 0;
      for (size_t d = 0; d < p.size(); ++d)
        off += (static_cast<int64_t>(d) == axis ? idx[static_cast<size_t>(lin)] : p[d]) * strides[d];
      dst[lin] = src[off];
    });
  });
}

// GatherND (11/12/13): for each batch and each index tuple of length m,
// copy the slice data[batch, tuple..., :] (spec section "batch_dims").
Status GatherND(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(RequireTensors(ctx, 2));
  KILN_ASSIGN_OR_RETURN(ops::GatherNDAttrs a, ops::ParseGatherND(ctx.node(), ctx.opset()));
  const Tensor& data = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const int64_t r = data.rank(), q = ind.rank(), b = a.batch_dims;
  if (r < 1 || q < 1 || b >= std::min(r, q)) return ctx.Error("invalid ranks for data, indices and batch_dims");
  const int64_t m = ind.dim(static_cast<int>(q - 1));
  if (m < 1 || m > r - b) return ctx.Error("indices.shape[-1] = " + std::to_string(m) + " is out of [1, r - batch_dims]");
  for (int k = 0; k < b; ++k)
    if (data.dim(k) != ind.dim(k)) return ctx.Error("batch dims of data and indices differ");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(ctx, ind, "indices"));
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t axis = b + static_cast<int64_t>(i % static_cast<size_t>(m));
    KILN_RETURN_IF_ERROR(NormalizeIndex(ctx, idx[i], data.dim(static_cast<int>(axis)), "indices", static_cast<int64_t>(i), axis));
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const int64_t batches = DimProduct(data.shape(), 0, static_cast<size_t>(b));
  const int64_t tuples = DimProduct(ind.shape(), static_cast<size_t>(b), static_cast<size_t>(q - 1));
  const int64_t slice = DimProduct(data.shape(), static_cast<size_t>(b + m), static_cast<size_t>(r));
  const int64_t batch_stride = DimProduct(data.shape(), static_cast<size_t>(b), static_cast<size_t>(r));
  const std::vector<int64_t> strides = ContiguousStrides(data.shape());
  return VisitAll(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out.data<T>();
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t t = 0; t < tuples; ++t) {
        const int64_t* tup = idx.data() + (bi * tuples + t) * m;
        int64_t off = bi * batch_stride;
        for (int64_t j = 0; j < m; ++j) off += tup[j] * strides[static_cast<size_t>(b + j)];
        for (int64_t s = 0; s < slice; ++s) dst[(bi * tuples + t) * slice + s] = src[off + s];
      }
  });
}

// OneHot (9/11): out[..., d, ...] = on if d == index (negative indices
// count from depth), else off. Indices outside [-depth, depth-1] give an
// all-off row (spec text). Non-integer indices and depth are cast to int64.
Status OneHot(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(RequireTensors(ctx, 3));
  KILN_ASSIGN_OR_RETURN(ops::OneHotAttrs a, ops::ParseOneHot(ctx.node(), ctx.opset()));
  const Tensor& ind = ctx.input(0);
  const Tensor& values = ctx.input(2);
  if (values.numel() != 2) return ctx.Error("values must hold 2 elements [off, on]");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const int64_t out_rank = ind.rank() + 1;
  const int64_t axis = a.axis < 0 ? a.axis + out_rank : a.axis;
  const int64_t depth = out.dim(static_cast<int>(axis));
  const int64_t outer = DimProduct(ind.shape(), 0, static_cast<size_t>(axis));
  const int64_t inner = DimProduct(ind.shape(), static_cast<size_t>(axis), ind.shape().size());
  // Index values as int64; -1 marks "no hot position".
  std::vector<int64_t> hot(static_cast<size_t>(ind.numel()), -1);
  KILN_RETURN_IF_ERROR(VisitNumeric(ind.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = ind.data<T>();
    for (size_t i = 0; i < hot.size(); ++i) {
      int64_t v;
      if constexpr (std::is_integral_v<T>) {
        v = static_cast<int64_t>(p[i]);
        if constexpr (std::is_same_v<T, uint64_t>) if (p[i] > static_cast<uint64_t>(INT64_MAX)) continue;
      } else {
        const double d = std::trunc(ToDouble(p[i]));
        if (!(d >= -9.0e18 && d <= 9.0e18)) continue;  // NaN, inf, huge: all off
        v = static_cast<int64_t>(d);
      }
      if (v < -depth || v >= depth) continue;
      hot[i] = v < 0 ? v + depth : v;
    }
  }));
  return VisitAll(values.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T off = values.data<T>()[0], on = values.data<T>()[1];
    T* dst = out.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t k = 0; k < inner; ++k)
          dst[(o * depth + d) * inner + k] = hot[static_cast<size_t>(o * inner + k)] == d ? on : off;
  });
}

// NonZero (9/13): coordinates of the non-zero elements in row-major order,
// one row per input dim (numpy.nonzero). Non-empty strings count as non-zero.
Status NonZero(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(RequireTensors(ctx, 1));
  const Tensor& x = ctx.input(0);
  std::vector<char> nz(static_cast<size_t>(x.numel()));
  KILN_RETURN_IF_ERROR(VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (size_t i = 0; i < nz.size(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) nz[i] = !p[i].empty();
      else nz[i] = ToDouble(p[i]) != 0.0;
    }
  }));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const int64_t count = out.dim(1);
  int64_t* dst = out.data<int64_t>();
  int64_t k = 0;
  ForEachIndex(x.shape(), [&](int64_t lin, const std::vector<int64_t>& p) {
    if (!nz[static_cast<size_t>(lin)]) return;
    for (size_t d = 0; d < p.size(); ++d) dst[static_cast<int64_t>(d) * count + k] = p[d];
    ++k;
  });
  return Status::Ok();
}

}  // namespace

void RegisterIndexingKernels(runtime::KernelRegistry& r) {
  r.Register("", "Gather", Gather);
  r.Register("", "GatherElements", GatherElements);
  r.Register("", "GatherND", GatherND);
  r.Register("", "OneHot", OneHot);
  r.Register("", "NonZero", NonZero);
  RegisterScatterKernels(r);
  RegisterUniqueKernels(r);
}

}  // namespace kiln::reference
