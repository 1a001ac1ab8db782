// FusedSeparableConv (ops/fused.h) on the cpu provider: kiln's fused block
// kernel (separable_conv.h) where it applies: AVX-512, float32, the
// input's channels known at load time (its batch and size may be dynamic:
// the kernel is then built at the first run of each shape), constant
// weights, an undilated square depthwise window.
// Anything else runs as the composition of the three FusedConv kernels of
// this provider (oneDNN or kiln's own), so a fused block is never slower
// than the unfused convolutions for want of the fast kernel.
// KILN_CPU_SEPARABLE=0 takes the composition everywhere (A/B timing, tests).
//
// Data layout: channels-last in and out, as the cpu Conv (conv.cc); the
// residual Z too, and the output is written over it when nothing else
// reads it (KernelContext::input_exclusive).
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "ops/conv.h"
#include "ops/fused.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/families.h"
#include "providers/cpu/register.h"
#include "providers/cpu/separable_conv.h"
#include "providers/cpu/shape_cache.h"
#include "runtime/compose_separable.h"

namespace kiln::cpu {
namespace {

enum Slot { kX = 0, kWe = 1, kBe = 2, kWd = 3, kBd = 4, kWp = 5, kBp = 6, kZ = 7 };

// What a block's kernel is built from, whatever the input's size: the
// constant weights (kept alive here, as a shape seen later packs them
// again), the window and the activations.
struct BlockSpec {
  Tensor we, be, wd, bd, wp, bp;  // undefined where absent
  ops::ConvAttrs attrs;
  SeparableConv::Step e, d, p;    // activations (weights set per build)
  int64_t ic = 0, m = 0, k = 0, oc = 0;
};

// The fast kernel for one input shape.
struct Built {
  Shape x, y;
  std::unique_ptr<SeparableConv> conv;
};

const float* DataOr(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

// Packs the block for input shape xs ([n, ic, h, w] in ONNX order).
Result<std::shared_ptr<const Built>> Build(const ir::Node& n, const BlockSpec& b, const Shape& xs) {
  KILN_ASSIGN_OR_RETURN(auto geo, ops::ForwardGeometry(n, b.attrs.sp, {xs[2], xs[3]}, false));
  if (geo[0].out <= 0 || geo[1].out <= 0) return n.Invalid("input " + ShapeToString(xs) + " leaves no depthwise output");
  SeparableShape s;
  s.n = xs[0];
  s.ih = xs[2];
  s.iw = xs[3];
  s.ic = xs[1];
  s.m = b.m;
  s.expand = b.we.defined();
  s.k = b.k;
  s.sh = b.attrs.sp.strides[0];
  s.sw = b.attrs.sp.strides[1];
  s.pad_top = geo[0].pad_begin;
  s.pad_left = geo[1].pad_begin;
  s.oh = geo[0].out;
  s.ow = geo[1].out;
  s.oc = b.oc;
  auto built = std::make_shared<Built>();
  built->x = xs;
  built->y = {s.n, b.oc, s.oh, s.ow};
  KILN_RETURN_IF_ERROR(CheckInt32Extent(n, "input", built->x));
  KILN_RETURN_IF_ERROR(CheckInt32Extent(n, "output", built->y));
  SeparableConv::Step e = b.e, d = b.d, p = b.p;
  e.w = DataOr(b.we);
  e.bias = DataOr(b.be);
  d.w = DataOr(b.wd);
  d.bias = DataOr(b.bd);
  p.w = DataOr(b.wp);
  p.bias = DataOr(b.bp);
  built->conv = std::make_unique<SeparableConv>(s, e, d, p);
  return std::shared_ptr<const Built>(built);
}

class SeparableKernel {
 public:
  SeparableKernel(const ir::Node& node, BlockSpec spec) : node_(node), spec_(std::move(spec)) {}

  // The kernel for the shape known at session creation, built now.
  Status BuildStatic(const Shape& x) {
    KILN_ASSIGN_OR_RETURN(static_, Build(node_, spec_, x));
    return Status::Ok();
  }

  Status Run(runtime::KernelContext& ctx) const {
    const Tensor& x = ctx.input(kX);
    if (x.dtype() != DType::kFloat32 || x.rank() != 4 || x.shape()[1] != spec_.ic)
      return ctx.Error("cpu FusedSeparableConv was built for float32 input with " + std::to_string(spec_.ic) + " channels, got " + x.Describe());
    if (!IsDenseInOrder(x, kChannelsLast)) return ctx.Error("cpu FusedSeparableConv was handed input X in a layout it did not declare: " + x.Describe());
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<const Built> b, Get(x.shape()));
    const float* z = nullptr;
    Tensor y;
    if (ctx.has_input(kZ)) {
      const Tensor& zt = ctx.input(kZ);
      if (zt.dtype() != DType::kFloat32 || zt.shape() != b->y)
        return ctx.Error("residual input " + zt.Describe() + " must be float32 " + ShapeToString(b->y));
      if (!IsDenseInOrder(zt, kChannelsLast)) return ctx.Error("cpu FusedSeparableConv was handed the residual in a layout it did not declare");
      z = zt.data<float>();
      if (ctx.input_exclusive(kZ)) {  // the block's shortcut dies here: write over it
        y = zt;
        KILN_RETURN_IF_ERROR(ctx.SetOutput(0, Datum(y)));
      }
    }
    if (!y.defined()) {
      KILN_ASSIGN_OR_RETURN(y, ctx.AllocOutput(0, DType::kFloat32, b->y, kChannelsLast));
    }
    b->conv->Run(x.data<float>(), y.data<float>(), z);
    return Status::Ok();
  }

 private:
  // A dynamic input's kernels are built at the first run of each shape and
  // kept (shape_cache.h; each packs the weights again, as the cpu Conv's
  // primitives do).
  Result<std::shared_ptr<const Built>> Get(const Shape& x) const {
    if (static_ && static_->x == x) return static_;  // set before any run, never changed: no lock
    return cache_.Get(x, [this](const Shape& s) { return Build(node_, spec_, s); });
  }

  const ir::Node node_;
  const BlockSpec spec_;
  std::shared_ptr<const Built> static_;
  mutable ShapeCache<Built> cache_;
};

// A constant float32 tensor of `shape` in slot i, or null.
const Tensor* ConstantOf(const runtime::KernelInit& init, size_t i, const Shape& shape) {
  if (!init.node.HasInput(i)) return nullptr;
  const Tensor* t = init.constant(i);
  return t && t->dtype() == DType::kFloat32 && t->shape() == shape ? t : nullptr;
}

Tensor CopyOr(const Tensor* t) { return t ? t->Contiguous() : Tensor(); }

using FastKernel = std::unique_ptr<SeparableKernel>;
FastKernel Declined() { return FastKernel(); }

// The fast kernel for this node, or null when it does not apply (then the
// composition runs it). Errors only for a node that is itself invalid.
// The input's channels must be known at load time; its batch and size may
// be dynamic (fuse_separable_conv fuses those only with an expansion).
Result<FastKernel> MakeFast(const runtime::KernelInit& init) {
  const ir::Node& n = init.node;
  const ir::TypeInfo* xt = init.input_type(kX);
  const char* env = std::getenv("KILN_CPU_SEPARABLE");
  if ((env && std::string(env) == "0") || !SeparableConv::Available() || !xt || xt->kind != ir::TypeInfo::Kind::kTensor || xt->dtype != DType::kFloat32 || !xt->shape ||
      xt->shape->size() != 4 || !(*xt->shape)[1].known())
    return Declined();
  BlockSpec b;
  b.ic = (*xt->shape)[1].value;
  const Tensor* wd = init.constant(kWd);
  if (!wd || wd->dtype() != DType::kFloat32 || wd->rank() != 4) return Declined();
  b.m = wd->shape()[0];
  b.k = wd->shape()[2];
  const int64_t m = b.m, k = b.k;
  if (wd->shape()[1] != 1 || wd->shape()[3] != k || k > 15) return Declined();
  const bool expand = n.HasInput(kWe);
  const Tensor* we = expand ? ConstantOf(init, kWe, {m, b.ic, 1, 1}) : nullptr;
  if (expand ? !we : m != b.ic) return Declined();
  const Tensor* wp = init.constant(kWp);
  if (!wp || wp->dtype() != DType::kFloat32 || wp->rank() != 4 || wp->shape()[1] != m || wp->shape()[2] != 1 || wp->shape()[3] != 1)
    return Declined();
  b.oc = wp->shape()[0];
  const Tensor* be = ConstantOf(init, kBe, {m});
  const Tensor* bd = ConstantOf(init, kBd, {m});
  const Tensor* bp = ConstantOf(init, kBp, {b.oc});
  if ((n.HasInput(kBe) && !be) || (n.HasInput(kBd) && !bd) || (n.HasInput(kBp) && !bp)) return Declined();

  KILN_ASSIGN_OR_RETURN(b.attrs, ops::ParseConv(n, 11));
  if (b.attrs.sp.kernel_shape.empty()) b.attrs.sp.kernel_shape = {k, k};
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(n, b.attrs.sp, 2));
  if (b.attrs.sp.kernel_shape != std::vector<int64_t>{k, k} || b.attrs.sp.dilations != std::vector<int64_t>{1, 1}) return Declined();
  KILN_ASSIGN_OR_RETURN(b.e.act, ops::ParseActivation(n, "expand_"));
  KILN_ASSIGN_OR_RETURN(b.d.act, ops::ParseActivation(n, "depthwise_"));
  KILN_ASSIGN_OR_RETURN(b.p.act, ops::ParseActivation(n, ""));
  b.we = CopyOr(we);
  b.be = CopyOr(be);
  b.wd = CopyOr(wd);
  b.bd = CopyOr(bd);
  b.wp = CopyOr(wp);
  b.bp = CopyOr(bp);
  auto kernel = std::make_unique<SeparableKernel>(n, std::move(b));
  Shape xs;
  for (const ir::Dim& d : *xt->shape) xs.push_back(d.known() ? d.value : -1);
  if (std::all_of(xs.begin(), xs.end(), [](int64_t v) { return v >= 0; })) {
    Status st = kernel->BuildStatic(xs);
    // A static shape the kernel cannot build (no output, extents beyond
    // int32) is left to the composition, which reports or runs it.
    if (!st.ok()) return Declined();
  }
  return kernel;
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
