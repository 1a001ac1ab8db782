// Reference kernels of Scatter (opset 9-10), ScatterElements and ScatterND:
// the output starts as a copy of data, then each update is written (or
// combined by the reduction) in index order, so duplicate indices with
// reduction "none" keep the last update.
#include "ops/indexing.h"
#include "ops/infer_util.h"
#include "providers/reference/indexing_kernels.h"
#include "providers/reference/indexing_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

ReduceOp ToReduceOp(ops::ScatterReduction r) {
  switch (r) {
    case ops::ScatterReduction::kNone: return ReduceOp::kNone;
    case ops::ScatterReduction::kAdd: return ReduceOp::kAdd;
    case ops::ScatterReduction::kMul: return ReduceOp::kMul;
    case ops::ScatterReduction::kMax: return ReduceOp::kMax;
    case ops::ScatterReduction::kMin: return ReduceOp::kMin;
  }
  return ReduceOp::kNone;
}

Status CheckInputs(const runtime::KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.input(i).defined()) return ctx.Error("input " + std::to_string(i) + " must be a tensor");
  if (ctx.input(2).dtype() != ctx.input(0).dtype())
    return ctx.Error(std::string("updates dtype ") + DTypeName(ctx.input(2).dtype()) + " differs from data dtype " +
                     DTypeName(ctx.input(0).dtype()));
  return Status::Ok();
}

// Scatter / ScatterElements: out[p with p[axis] = indices[p]] (op)= updates[p].
Status ScatterElements(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckInputs(ctx));
  KILN_ASSIGN_OR_RETURN(ops::ScatterAttrs a, ops::ParseScatter(ctx.node(), ctx.opset()));
  const Tensor& data = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  if (data.rank() < 1 || ind.rank() != data.rank())
    return ctx.Error("data " + data.Describe() + " and indices " + ind.Describe() + " must have the same rank >= 1");
  if (upd.shape() != ind.shape())
    return ctx.Error("updates shape " + ShapeToString(upd.shape()) + " differs from indices shape " + ShapeToString(ind.shape()));
  if (a.reduction != ops::ScatterReduction::kNone && data.dtype() == DType::kString)
    return ctx.Error("reductions are not defined for strings");
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
  const ReduceOp op = ToReduceOp(a.reduction);
  return VisitAll(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    const T* u = upd.data<T>();
    T* dst = out.data<T>();
    for (int64_t i = 0; i < data.numel(); ++i) dst[i] = src[i];
    ForEachIndex(ind.shape(), [&](int64_t lin, const std::vector<int64_t>& p) {
      int64_t off = 0;
      for (size_t d = 0; d < p.size(); ++d)
        off += (static_cast<int64_t>(d) == axis ? idx[static_cast<size_t>(lin)] : p[d]) * strides[d];
      dst[off] = ApplyReduce(op, dst[off], u[lin]);
    });
  });
}

// ScatterND (11/13/16/18): out[indices[t]..., :] (op)= updates[t, :].
Status ScatterND(runtime::KernelContext& ctx) {
  KILN_RETURN_IF_ERROR(CheckInputs(ctx));
  KILN_ASSIGN_OR_RETURN(ops::ScatterAttrs a, ops::ParseScatter(ctx.node(), ctx.opset()));
  const Tensor& data = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  const Tensor& upd = ctx.input(2);
  if (data.rank() < 1 || ind.rank() < 1) return ctx.Error("data and indices must have rank >= 1");
  const int64_t k = ind.dim(ind.rank() - 1);
  if (k < 1 || k > data.rank()) return ctx.Error("indices.shape[-1] = " + std::to_string(k) + " is out of [1, data rank]");
  Shape want(ind.shape().begin(), ind.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  if (upd.shape() != want)
    return ctx.Error("updates shape " + ShapeToString(upd.shape()) + " must be " + ShapeToString(want));
  if (a.reduction != ops::ScatterReduction::kNone && data.dtype() == DType::kString)
    return ctx.Error("reductions are not defined for strings");
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> idx, ReadIndices(ctx, ind, "indices"));
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t axis = static_cast<int64_t>(i % static_cast<size_t>(k));
    KILN_RETURN_IF_ERROR(NormalizeIndex(ctx, idx[i], data.dim(static_cast<int>(axis)), "indices", static_cast<int64_t>(i), axis));
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const std::vector<int64_t> strides = ContiguousStrides(data.shape());
  const int64_t slice = DimProduct(data.shape(), static_cast<size_t>(k), data.shape().size());
  const int64_t tuples = static_cast<int64_t>(idx.size()) / k;
  const ReduceOp op = ToReduceOp(a.reduction);
  return VisitAll(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    const T* u = upd.data<T>();
    T* dst = out.data<T>();
    for (int64_t i = 0; i < data.numel(); ++i) dst[i] = src[i];
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t j = 0; j < k; ++j) off += idx[static_cast<size_t>(t * k + j)] * strides[static_cast<size_t>(j)];
      for (int64_t s = 0; s < slice; ++s) dst[off + s] = ApplyReduce(op, dst[off + s], u[t * slice + s]);
    }
  });
}

}  // namespace

void RegisterScatterKernels(runtime::KernelRegistry& r) {
  r.Register("", "Scatter", ScatterElements);
  r.Register("", "ScatterElements", ScatterElements);
  r.Register("", "ScatterND", ScatterND);
}

}  // namespace kiln::reference
