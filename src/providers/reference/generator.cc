// Reference kernels of the generator ops: Constant, ConstantOfShape, Range,
// EyeLike.
#include "ops/generator.h"
#include "providers/reference/families.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

// Constant: the attribute's tensor. Values are immutable once produced, so
// the output shares the attribute's storage.
Status Constant(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor v, ops::ParseConstant(ctx.node(), ctx.opset()));
  return ctx.SetOutput(0, Datum(v));
}

// ConstantOfShape: every element is the value attribute's one element.
Status ConstantOfShape(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ConstantOfShapeAttrs a, ops::ParseConstantOfShape(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  return VisitNumeric(a.value.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T v = a.value.Contiguous().data<T>()[0];
    T* dst = out.data<T>();
    for (int64_t i = 0; i < out.numel(); ++i) dst[i] = v;
  });
}

// Range: output[i] = start + i * delta (opset 11).
Status Range(runtime::KernelContext& ctx) {
  for (size_t i = 0; i < 3; ++i)
    if (!ctx.input(i).defined()) return ctx.Error("input " + std::to_string(i) + " must be a tensor");
  const Tensor &start = ctx.input(0), &delta = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(int64_t n, ops::RangeLength(ctx.node(), start, ctx.input(1), delta));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, start.dtype(), {n}));
  return VisitNumeric(start.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();
    if constexpr (std::is_integral_v<T>) {
      // Integer steps in int64 so large starts/deltas stay exact.
      const int64_t s = static_cast<int64_t>(start.data<T>()[0]), d = static_cast<int64_t>(delta.data<T>()[0]);
      // Wrapping uint64 arithmetic: the result lies in [start, limit), but
      // i * d alone may not fit in int64.
      for (int64_t i = 0; i < n; ++i)
        dst[i] = static_cast<T>(static_cast<int64_t>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d)));
    } else {
      const double s = ToDouble(start.data<T>()[0]), d = ToDouble(delta.data<T>()[0]);
      for (int64_t i = 0; i < n; ++i) dst[i] = FromDouble<T>(s + static_cast<double>(i) * d);
    }
  });
}

// EyeLike: ones where column == row + k, zeros elsewhere.
Status EyeLike(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.defined() || x.rank() != 2) return ctx.Error("input 0 must be a 2-D tensor");
  KILN_ASSIGN_OR_RETURN(ops::EyeLikeAttrs a, ops::ParseEyeLike(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const int64_t rows = x.dim(0), cols = x.dim(1);
  return VisitNumeric(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* dst = out.data<T>();  // already zero
    if (a.k >= cols || a.k <= -rows) return;  // no diagonal inside (and no overflow of i + k)
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t j = i + a.k;
      if (j >= 0 && j < cols) dst[i * cols + j] = FromDouble<T>(1.0);
    }
  });
}

}  // namespace

void RegisterGeneratorKernels(runtime::KernelRegistry& r) {
  r.Register("", "Constant", Constant);
  r.Register("", "ConstantOfShape", ConstantOfShape);
  r.Register("", "Range", Range);
  r.Register("", "EyeLike", EyeLike);
}

}  // namespace kiln::reference
