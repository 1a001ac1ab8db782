// Split and Slice on the cpu provider, in any dense layout: each output is
// the input's view (ops::ViewOfSlice, a Split part being a Slice of one
// axis) copied out in the input's own order, so a channel Split of
// channels-last data (YOLO-style C2f and CSP blocks) stays channels-last
// with no conversion either side, and every output is dense for the next
// kernel. The view indexes through the input's real strides, whatever
// layout an absorbed Transpose upstream left it in.
#include <array>
#include <string>

#include "ops/data_movement.h"
#include "ops/infer_util.h"
#include "providers/cpu/families.h"
#include "providers/cpu/strided_copy.h"

namespace kiln::cpu {
namespace {

// Whether the kernel takes input 0: a tensor of known rank and a dtype a
// byte copy moves (not string).
bool Copyable(const runtime::KernelInit& init) {
  const ir::TypeInfo* t = init.input_type(0);
  return t && t->kind == ir::TypeInfo::Kind::kTensor && t->shape && t->dtype != DType::kString && t->dtype != DType::kUndefined;
}

// Input 0 any dense order; every output in the order it arrived in (the
// other inputs are small int64 tensors, read row-major).
runtime::KernelLayouts SameOrderLayouts() {
  runtime::KernelLayouts l;
  l.inputs.resize(1);
  l.inputs[0].any_dense = true;
  l.output_order = [](const std::vector<DimOrder>& in) { return in.empty() ? kRowMajor : in[0]; };
  return l;
}

// Output i = the part of x that `view` (shape, strides, offset over x's
// storage) describes, dense in x's order.
Status CopyOut(runtime::KernelContext& ctx, size_t i, const Tensor& x, const DimOrder& order, const ops::SliceView& v) {
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(i, x.dtype(), v.shape, order));
  if (v.empty) return Status::Ok();
  return CopyInto(y, x.View(v.shape, v.strides, v.offset));
}

Status RunSplit(runtime::KernelContext& ctx, const ops::SplitAttrs& a) {
  const ir::Node& n = ctx.node();
  const Tensor& x = ctx.input(0);
  DimOrder order;
  if (!FindOrder(x, &order)) return ctx.Error("cpu Split was handed a non-dense input: " + x.Describe());
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(n, a.axis, x.rank()));
  KILN_ASSIGN_OR_RETURN(auto sizes,
                        ops::SplitSizesOf(n, a, ctx.has_input(1) ? &ctx.input(1) : nullptr, x.shape()[static_cast<size_t>(axis)], ctx.num_outputs()));
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (ctx.has_output(i)) {
      const ops::SliceSpec part{{start}, {start + sizes[i]}, {axis}, {1}};
      KILN_RETURN_IF_ERROR(CopyOut(ctx, i, x, order, ops::ViewOfSlice(part, x)));
    }
    start += sizes[i];
  }
  return Status::Ok();
}

Result<runtime::Kernel> MakeSplit(const runtime::KernelInit& init) {
  if (!Copyable(init)) return runtime::Kernel();
  KILN_ASSIGN_OR_RETURN(ops::SplitAttrs a, ops::ParseSplit(init.node, init.opset));
  return runtime::Kernel([a](runtime::KernelContext& ctx) { return RunSplit(ctx, a); }, SameOrderLayouts());
}

Status RunSlice(runtime::KernelContext& ctx, const ops::SliceAttrs& a) {
  const Tensor& x = ctx.input(0);
  DimOrder order;
  if (!FindOrder(x, &order)) return ctx.Error("cpu Slice was handed a non-dense input: " + x.Describe());
  std::array<const Tensor*, 4> bounds{};
  for (size_t i = 1; i <= 4; ++i) bounds[i - 1] = ctx.has_input(i) ? &ctx.input(i) : nullptr;
  KILN_ASSIGN_OR_RETURN(ops::SliceSpec spec, ops::SliceSpecOf(ctx.node(), ctx.opset(), a, bounds, x.rank()));
  return CopyOut(ctx, 0, x, order, ops::ViewOfSlice(spec, x));
}

Result<runtime::Kernel> MakeSlice(const runtime::KernelInit& init) {
  if (!Copyable(init)) return runtime::Kernel();
  KILN_ASSIGN_OR_RETURN(ops::SliceAttrs a, ops::ParseSlice(init.node, init.opset));
  return runtime::Kernel([a](runtime::KernelContext& ctx) { return RunSlice(ctx, a); }, SameOrderLayouts());
}

}  // namespace

void RegisterSliceKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Split", MakeSplit);
  r.RegisterFactory("", "Slice", MakeSlice);
}

}  // namespace kiln::cpu
