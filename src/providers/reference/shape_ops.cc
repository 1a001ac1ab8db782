// Reference kernels of shape-only ops. Reshape, Flatten, Squeeze and
// Unsqueeze return a view of their (contiguous) input with the new shape:
// values are immutable once produced, so sharing storage is safe. The output
// shape comes from the same dims functions shape inference uses.
#include "ops/infer_util.h"
#include "ops/shape_ops.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

Result<Shape> Concrete(const ir::Node& node, const ir::Dims& d) {
  auto s = ops::ToShape(d);
  if (!s) return node.Error(StatusCode::kInternal, "output shape " + ir::DimsToString(d) + " is not concrete");
  return *s;
}

Status SetReshaped(runtime::KernelContext& ctx, const Shape& shape) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 is not a tensor");
  return ctx.SetOutput(0, Datum(x.Reshaped(shape)));
}

// Identity: the output is the input (sequences and optionals too).
Status Identity(runtime::KernelContext& ctx) { return ctx.SetOutput(0, ctx.input_datum(0)); }

Status Reshape(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::ReshapeAttrs a, ops::ParseReshape(n, ctx.opset()));
  std::vector<int64_t> shape;
  if (a.shape) {
    shape = *a.shape;
  } else {
    if (!ctx.input(1).defined()) return ctx.Error("input 'shape' is missing");
    KILN_ASSIGN_OR_RETURN(shape, ops::TensorInts(n, ctx.input(1), "input 'shape'"));
  }
  KILN_ASSIGN_OR_RETURN(ir::Dims d, ops::ReshapeDims(n, ir::DimsFromShape(ctx.input(0).shape()), shape, a.allowzero));
  KILN_ASSIGN_OR_RETURN(Shape s, Concrete(n, d));
  return SetReshaped(ctx, s);
}

Status Flatten(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::FlattenAttrs a, ops::ParseFlatten(n, ctx.opset()));
  KILN_ASSIGN_OR_RETURN(ir::Dims d, ops::FlattenDims(n, ir::DimsFromShape(ctx.input(0).shape()), a.axis, ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Shape s, Concrete(n, d));
  return SetReshaped(ctx, s);
}

Status Squeeze(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::AxesAttrs a, ops::ParseSqueeze(n, ctx.opset()));
  if (ctx.opset() >= 13 && ctx.has_input(1)) {
    KILN_ASSIGN_OR_RETURN(auto v, ops::TensorInts(n, ctx.input(1), "input 'axes'"));
    a.axes = std::move(v);
  }
  KILN_ASSIGN_OR_RETURN(auto d, ops::SqueezeDims(n, ir::DimsFromShape(ctx.input(0).shape()), a.axes));
  if (!d) return n.Error(StatusCode::kInternal, "squeezed shape is unknown");
  KILN_ASSIGN_OR_RETURN(Shape s, Concrete(n, *d));
  return SetReshaped(ctx, s);
}

Status Unsqueeze(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::AxesAttrs a, ops::ParseUnsqueeze(n, ctx.opset()));
  if (ctx.opset() >= 13) {
    if (!ctx.input(1).defined()) return ctx.Error("input 'axes' is missing");
    KILN_ASSIGN_OR_RETURN(auto v, ops::TensorInts(n, ctx.input(1), "input 'axes'"));
    a.axes = std::move(v);
  }
  if (!a.axes) return ctx.Error("attribute 'axes' is required");
  KILN_ASSIGN_OR_RETURN(ir::Dims d, ops::UnsqueezeDims(n, ir::DimsFromShape(ctx.input(0).shape()), *a.axes));
  KILN_ASSIGN_OR_RETURN(Shape s, Concrete(n, d));
  return SetReshaped(ctx, s);
}

Status ShapeKernel(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ShapeAttrs a, ops::ParseShape(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  auto [b, e] = ops::ShapeRange(a, x.rank());
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kInt64, Shape{e - b}));
  for (int64_t k = b; k < e; ++k) out.data<int64_t>()[k - b] = x.dim(static_cast<int>(k));
  return Status::Ok();
}

Status Size(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kInt64, Shape{}));
  out.data<int64_t>()[0] = ctx.input(0).numel();
  return Status::Ok();
}

// Expand: out[i] = x[i with broadcast dims pinned to 0].
Status Expand(runtime::KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(auto shape, ops::TensorInts(n, ctx.input(1), "input 'shape'"));
  KILN_ASSIGN_OR_RETURN(ir::Dims d, ops::ExpandDims(n, ir::DimsFromShape(x.shape()), shape));
  KILN_ASSIGN_OR_RETURN(Shape s, Concrete(n, d));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), s));
  const std::vector<int64_t> bs = BroadcastStrides(x.shape(), s);
  return VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    ForEachIndex(s, [&](int64_t lin, const std::vector<int64_t>& idx) { dst[lin] = src[OffsetOf(idx, bs)]; });
  });
}

}  // namespace

void RegisterShapeKernels(runtime::KernelRegistry& r) {
  r.Register("", "Identity", Identity);
  r.Register("", "Reshape", Reshape);
  r.Register("", "Flatten", Flatten);
  r.Register("", "Squeeze", Squeeze);
  r.Register("", "Unsqueeze", Unsqueeze);
  r.Register("", "Shape", ShapeKernel);
  r.Register("", "Size", Size);
  r.Register("", "Expand", Expand);
}

}  // namespace kiln::reference
