// Shape and Size on the cpu provider: they read only the input's dims, so
// they take it in any layout, strides and all (any_strided). On the
// reference provider, which takes row-major only, a Shape of a
// channels-last value made the executor copy the whole tensor first
// (PP-OCRv4 rec: three such conversions per run).
#include "ops/shape_ops.h"
#include "providers/cpu/families.h"

namespace kiln::cpu {
namespace {

runtime::KernelLayouts AnyStrided() {
  runtime::KernelLayouts l;
  l.inputs.resize(1);
  l.inputs[0].any_strided = true;
  return l;
}

Result<runtime::Kernel> MakeShape(const runtime::KernelInit& init) {
  KILN_ASSIGN_OR_RETURN(ops::ShapeAttrs a, ops::ParseShape(init.node, init.opset));
  return runtime::Kernel(
      [a](runtime::KernelContext& ctx) -> Status {
        const Tensor& x = ctx.input(0);
        if (!x.defined()) return ctx.Error("input 0 is not a tensor");
        const auto [b, e] = ops::ShapeRange(a, x.rank());
        KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kInt64, Shape{e - b}));
        for (int64_t k = b; k < e; ++k) out.data<int64_t>()[k - b] = x.dim(static_cast<int>(k));
        return Status::Ok();
      },
      AnyStrided());
}

Result<runtime::Kernel> MakeSize(const runtime::KernelInit&) {
  return runtime::Kernel(
      [](runtime::KernelContext& ctx) -> Status {
        const Tensor& x = ctx.input(0);
        if (!x.defined()) return ctx.Error("input 0 is not a tensor");
        KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, DType::kInt64, Shape{}));
        out.data<int64_t>()[0] = x.numel();
        return Status::Ok();
      },
      AnyStrided());
}

}  // namespace

void RegisterShapeKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Shape", MakeShape);
  r.RegisterFactory("", "Size", MakeSize);
}

}  // namespace kiln::cpu
