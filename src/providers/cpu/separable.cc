// FusedSeparableConv (ops/fused.h) on the cpu provider: kiln's fused block
// kernel (separable_conv.h) where it applies: AVX-512, float32, a static
// input shape, constant weights, an undilated square depthwise window.
// Anything else runs as the composition of the three FusedConv kernels of
// this provider (oneDNN or kiln's own), so a fused block is never slower
// than the unfused convolutions for want of the fast kernel.
// KILN_CPU_SEPARABLE=0 takes the composition everywhere (A/B timing, tests).
//
// Data layout: channels-last in and out, as the cpu Conv (conv.cc); the
// residual Z too, and the output is written over it when nothing else
// reads it (KernelContext::input_exclusive).
#include <cstdlib>
#include <memory>
#include <string>

#include "ops/conv.h"
#include "ops/fused.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/families.h"
#include "providers/cpu/register.h"
#include "providers/cpu/separable_conv.h"
#include "runtime/compose_separable.h"

namespace kiln::cpu {
namespace {

enum Slot { kX = 0, kWe = 1, kBe = 2, kWd = 3, kBd = 4, kWp = 5, kBp = 6, kZ = 7 };

class SeparableKernel {
 public:
  SeparableKernel(Shape x, Shape y, std::unique_ptr<SeparableConv> conv) : x_(std::move(x)), y_(std::move(y)), conv_(std::move(conv)) {}

  Status Run(runtime::KernelContext& ctx) const {
    const Tensor& x = ctx.input(kX);
    if (x.dtype() != DType::kFloat32 || x.shape() != x_)
      return ctx.Error("cpu FusedSeparableConv was built for float32 " + ShapeToString(x_) + ", got " + x.Describe());
    if (!IsDenseInOrder(x, kChannelsLast)) return ctx.Error("cpu FusedSeparableConv was handed input X in a layout it did not declare: " + x.Describe());
    const float* z = nullptr;
    Tensor y;
    if (ctx.has_input(kZ)) {
      const Tensor& zt = ctx.input(kZ);
      if (zt.dtype() != DType::kFloat32 || zt.shape() != y_)
        return ctx.Error("residual input " + zt.Describe() + " must be float32 " + ShapeToString(y_));
      if (!IsDenseInOrder(zt, kChannelsLast)) return ctx.Error("cpu FusedSeparableConv was handed the residual in a layout it did not declare");
      z = zt.data<float>();
      if (ctx.input_exclusive(kZ)) {  // the block's shortcut dies here: write over it
        y = zt;
        KILN_RETURN_IF_ERROR(ctx.SetOutput(0, Datum(y)));
      }
    }
    if (!y.defined()) {
      KILN_ASSIGN_OR_RETURN(y, ctx.AllocOutput(0, DType::kFloat32, y_, kChannelsLast));
    }
    conv_->Run(x.data<float>(), y.data<float>(), z);
    return Status::Ok();
  }

 private:
  Shape x_, y_;
  std::unique_ptr<SeparableConv> conv_;
};

// A constant float32 tensor of `shape` in slot i, or null.
const Tensor* ConstantOf(const runtime::KernelInit& init, size_t i, const Shape& shape) {
  if (!init.node.HasInput(i)) return nullptr;
  const Tensor* t = init.constant(i);
  return t && t->dtype() == DType::kFloat32 && t->shape() == shape ? t : nullptr;
}

using FastKernel = std::unique_ptr<SeparableKernel>;
FastKernel Declined() { return FastKernel(); }

// The fast kernel for this node, or null when it does not apply (then the
// composition runs it). Errors only for a node that is itself invalid.
Result<FastKernel> MakeFast(const runtime::KernelInit& init) {
  const ir::Node& n = init.node;
  const ir::TypeInfo* xt = init.input_type(kX);
  const char* env = std::getenv("KILN_CPU_SEPARABLE");
  if ((env && std::string(env) == "0") || !SeparableConv::Available() || !xt || xt->kind != ir::TypeInfo::Kind::kTensor || xt->dtype != DType::kFloat32 || !xt->shape ||
      xt->shape->size() != 4)
    return Declined();
  Shape xs;
  for (const ir::Dim& d : *xt->shape) {
    if (!d.known()) return Declined();
    xs.push_back(d.value);
  }
  const Tensor* wd = init.constant(kWd);
  if (!wd || wd->dtype() != DType::kFloat32 || wd->rank() != 4) return Declined();
  const int64_t m = wd->shape()[0], k = wd->shape()[2];
  if (wd->shape()[1] != 1 || wd->shape()[3] != k || k > 15) return Declined();
  const bool expand = n.HasInput(kWe);
  const Tensor* we = expand ? ConstantOf(init, kWe, {m, xs[1], 1, 1}) : nullptr;
  if (expand ? !we : m != xs[1]) return Declined();
  const Tensor* wp = init.constant(kWp);
  if (!wp || wp->dtype() != DType::kFloat32 || wp->rank() != 4 || wp->shape()[1] != m || wp->shape()[2] != 1 || wp->shape()[3] != 1)
    return Declined();
  const int64_t oc = wp->shape()[0];
  const Tensor* be = ConstantOf(init, kBe, {m});
  const Tensor* bd = ConstantOf(init, kBd, {m});
  const Tensor* bp = ConstantOf(init, kBp, {oc});
  if ((n.HasInput(kBe) && !be) || (n.HasInput(kBd) && !bd) || (n.HasInput(kBp) && !bp)) return Declined();

  KILN_ASSIGN_OR_RETURN(ops::ConvAttrs attrs, ops::ParseConv(n, 11));
  if (attrs.sp.kernel_shape.empty()) attrs.sp.kernel_shape = {k, k};
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(n, attrs.sp, 2));
  if (attrs.sp.kernel_shape != std::vector<int64_t>{k, k} || attrs.sp.dilations != std::vector<int64_t>{1, 1}) return Declined();
  KILN_ASSIGN_OR_RETURN(auto geo, ops::ForwardGeometry(n, attrs.sp, {xs[2], xs[3]}, false));
  if (geo[0].out <= 0 || geo[1].out <= 0) return Declined();

  SeparableShape s;
  s.n = xs[0];
  s.ih = xs[2];
  s.iw = xs[3];
  s.ic = xs[1];
  s.m = m;
  s.expand = expand;
  s.k = k;
  s.sh = attrs.sp.strides[0];
  s.sw = attrs.sp.strides[1];
  s.pad_top = geo[0].pad_begin;
  s.pad_left = geo[1].pad_begin;
  s.oh = geo[0].out;
  s.ow = geo[1].out;
  s.oc = oc;
  const Shape ys = {s.n, oc, s.oh, s.ow};
  KILN_RETURN_IF_ERROR(CheckInt32Extent(n, "input", xs));
  KILN_RETURN_IF_ERROR(CheckInt32Extent(n, "output", ys));
  SeparableConv::Step e, d, p;
  KILN_ASSIGN_OR_RETURN(e.act, ops::ParseActivation(n, "expand_"));
  KILN_ASSIGN_OR_RETURN(d.act, ops::ParseActivation(n, "depthwise_"));
  KILN_ASSIGN_OR_RETURN(p.act, ops::ParseActivation(n, ""));
  e.w = we ? we->data<float>() : nullptr;
  e.bias = be ? be->data<float>() : nullptr;
  d.w = wd->data<float>();
  d.bias = bd ? bd->data<float>() : nullptr;
  p.w = wp->data<float>();
  p.bias = bp ? bp->data<float>() : nullptr;
  return FastKernel(std::make_unique<SeparableKernel>(xs, ys, std::make_unique<SeparableConv>(s, e, d, p)));
}

Result<runtime::Kernel> MakeSeparable(const runtime::KernelInit& init) {
  KILN_ASSIGN_OR_RETURN(FastKernel fast, MakeFast(init));
  if (!fast) return runtime::ComposeSeparable(Kernels(), init);
  std::shared_ptr<const SeparableKernel> kernel = std::move(fast);
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(kZ + 1);
  layouts.inputs[kX].orders = {kChannelsLast};
  layouts.inputs[kZ].orders = {kChannelsLast};
  layouts.output_order = [](const std::vector<DimOrder>&) { return kChannelsLast; };
  return runtime::Kernel([kernel](runtime::KernelContext& ctx) { return kernel->Run(ctx); }, std::move(layouts));
}

}  // namespace

void RegisterSeparableKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory(ops::kKilnDomain, "FusedSeparableConv", MakeSeparable);
}

}  // namespace kiln::cpu
