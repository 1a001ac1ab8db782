// Conv and FusedConv (2-D, float32) on oneDNN. The factory runs once per
// node at session creation: it declines what it cannot run exactly (other
// ranks or dtypes, weights or bias that are not constant, an activation
// oneDNN cannot express), so those nodes fall back to the reference kernel.
// Weights are reordered into the layout the primitive wants once per input
// shape, and primitives are cached per input shape; a static input shape
// builds its primitive right away, so Run only executes.
//
// Data layout: channels-last (NHWC storage of the logical NCHW tensor) in
// and out; oneDNN's direct (brgemm) convolutions are several times faster on
// it than on plain NCHW, and it is a strided view, so kernels that index
// through strides read it as is. The residual input must be channels-last
// too (it is copied into dst for the sum post-op). The executor converts
// anything else before the kernel runs (KernelLayouts below).
//
// Winograd: a 3x3, stride-1, undilated, ungrouped Conv runs kiln's own
// Winograd kernel (winograd.h) where its rule prefers it (at least 24 input
// channels, outputs of 20x20 and more, channels not too wide; 0.5-0.7x
// oneDNN's direct time there; 2x2 tiles from 12x12 with 64-256 channels).
// Elsewhere, with at least 32 input and output channels, it runs oneDNN's
// Winograd kernel (F(2,3) or F(4,3), oneDNN's choice), which needs 2.25-4x
// fewer multiplies. That one works on oneDNN's blocked layout only
// (nChw16c): src is reordered in, and the result
// comes back to channels-last through kiln's own epilogue pass
// (conv_epilogue.h), which also adds the residual and applies the activation
// and post_affine, since the Winograd kernel takes no eltwise post-op but
// ReLU. Measured at 1 thread (oneDNN 2.6, AVX-512), reorders included:
// 0.42-0.65x the direct kernel's time from 32 to 256 channels, 0.77x at 24,
// 0.9-1.3x at 12-16 (hence the 32 floor), 0.85x at 512 channels on 7x7.
// Its error against the direct kernel was ~2e-6 relative. KILN_CPU_WINOGRAD=0
// turns both off, =onednn leaves oneDNN's only, =kiln / =kiln2 hand kiln's
// kernel every shape it can run, with 4x4 / 2x2 tiles (for A/B timing and
// tests).
//
// kiln's own kernels also take, in this order after Winograd: an unpadded
// stride-1 1x1 with more than 128 input channels (pointwise_conv.h; a
// strided one through the gather below), then short reductions and narrow
// outputs (direct_conv.h). Each header says where it beats oneDNN.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ops/conv.h"
#include "ops/fused.h"
#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/direct_conv.h"
#include "providers/cpu/pointwise_conv.h"
#include "providers/cpu/winograd.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/shape_cache.h"

namespace kiln::cpu {
namespace {

using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct ConvPrimitive {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  PackedWeights weights;  // reordered into pd.weights_desc()
  dnnl::memory bias;
  Shape out_shape;
  dnnl::memory::desc src_md, dst_md;  // channels-last x and y, built once
  // Winograd (see the top): src reordered into pd's blocked layout, dst
  // brought back by BlockedToChannelsLast with `block` channels per block.
  bool blocked = false;
  int64_t block = 0;
  dnnl::reorder::primitive_desc to_blocked_pd;
  dnnl::reorder to_blocked;
  // kiln's own kernels (direct_conv.h, pointwise_conv.h, winograd.h)
  // instead of any oneDNN primitive; at most one is set.
  std::shared_ptr<const DirectConv> direct;
  std::shared_ptr<const PointwiseConv> pointwise;
  std::shared_ptr<const WinogradConv> winograd;
  // A strided 1x1 Conv without padding runs as the unit-stride one on the
  // input's every sh-th row and sw-th column, gathered first (see
  // ConvKernel::unit_): sub_shape is that gathered input, empty otherwise.
  Shape sub_shape;
  int64_t sh = 1, sw = 1;
};

// Read at each primitive build (session creation), so tests can compare both paths.
bool WinogradEnabled() {
  const char* v = std::getenv("KILN_CPU_WINOGRAD");
  return !(v && std::string(v) == "0");
}

// sub [n, oh, ow, c] = x [n, ih, iw, c] at rows 0, sh, 2 sh, ... and
// columns 0, sw, ...: both channels-last, one memcpy of c values per pixel.
void GatherStrided(const float* x, const Shape& xs, int64_t sh, int64_t sw, const Shape& sub, float* out) {
  const int64_t c = xs[1], ih = xs[2], iw = xs[3], oh = sub[2], ow = sub[3];
  const size_t bytes = static_cast<size_t>(c) * sizeof(float);
  ParallelFor(sub[0] * oh, sub[0] * oh * ow * c, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / oh, oy = r % oh;
      const float* src = x + ((n * ih + oy * sh) * iw) * c;
      float* dst = out + r * ow * c;
      for (int64_t ox = 0; ox < ow; ++ox) std::memcpy(dst + ox * c, src + ox * sw * c, bytes);
    }
  });
}

class ConvKernel {
 public:
  ConvKernel(const ir::Node& node, ops::ConvAttrs attrs, ops::ActivationAttrs act, bool residual, Tensor w, Tensor b)
      : node_(node), attrs_(std::move(attrs)), act_(act), residual_(residual), w_(w.Contiguous()), b_(b) {
    const auto& sp = attrs_.sp;
    if (w_.shape()[2] == 1 && w_.shape()[3] == 1 && (sp.strides[0] > 1 || sp.strides[1] > 1)) {
      ops::ConvAttrs unit = attrs_;
      unit.sp.auto_pad = ops::AutoPad::kNotSet;
      unit.sp.strides = {1, 1};
      unit.sp.dilations = {1, 1};
      unit.sp.pads = {0, 0, 0, 0};
      unit_ = std::make_unique<ConvKernel>(node_, std::move(unit), act_, residual_, w_, b_);
    }
  }

  Result<std::shared_ptr<const ConvPrimitive>> Get(const Shape& x) {
    if (static_ && x == static_shape_) return static_;  // set before any run, never changed: no lock
    return cache_.Get(x, [this](const Shape& s) { return Build(s); });
  }

  // The primitive for the shape known at session creation, built now.
  Status BuildStatic(const Shape& x) {
    KILN_ASSIGN_OR_RETURN(static_, Get(x));
    static_shape_ = x;
    return Status::Ok();
  }

  Status Run(runtime::KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() != 4) return ctx.Error("cpu Conv expects float32 NCHW input, got " + x.Describe());
    if (!IsDenseInOrder(x, kChannelsLast)) return ctx.Error(std::string("cpu Conv was handed input X in a layout it did not declare: ") + x.Describe());
    KILN_ASSIGN_OR_RETURN(auto p, Get(x.shape()));
    const float* xd = x.data<float>();
    Tensor gathered;
    if (!p->sub_shape.empty()) {
      KILN_ASSIGN_OR_RETURN(gathered, ctx.AllocScratch(DType::kFloat32, p->sub_shape, kChannelsLast, false));
      GatherStrided(xd, x.shape(), p->sh, p->sw, p->sub_shape, gathered.data<float>());
      xd = gathered.data<float>();
    }
    const float* residual = nullptr;
    Tensor y;
    if (residual_) {
      const Tensor& z = ctx.input(3);
      if (z.shape() != p->out_shape || z.dtype() != DType::kFloat32)
        return ctx.Error("residual input " + z.Describe() + " must be float32 " + ShapeToString(p->out_shape));
      if (!IsDenseInOrder(z, kChannelsLast)) return ctx.Error("cpu Conv was handed the residual input in a layout it did not declare");
      residual = z.data<float>();
      // The output is written over the residual where nothing else reads it
      // any more (a ResNet or inverted-residual block's shortcut): oneDNN's
      // sum post-op adds onto dst, and kiln's kernels read each residual
      // value before writing the output value at its place. Not on the
      // blocked (oneDNN Winograd) path, whose epilogue gathers first.
      if (!p->blocked && ctx.input_exclusive(3)) {
        y = z;
        KILN_RETURN_IF_ERROR(ctx.SetOutput(0, Datum(y)));
      }
    }
    if (!y.defined()) {
      KILN_ASSIGN_OR_RETURN(y, ctx.AllocOutput(0, DType::kFloat32, p->out_shape, kChannelsLast));
      // oneDNN's direct kernel's sum post-op adds onto dst (both channels-last).
      if (residual && !p->blocked && !p->direct && !p->winograd && !p->pointwise) std::memcpy(y.raw(), residual, y.nbytes());
    }
    if (p->pointwise) {
      p->pointwise->Run(xd, y.data<float>(), residual);
      return Status::Ok();
    }
    if (p->direct) {
      p->direct->Run(xd, y.data<float>(), residual);
      return Status::Ok();
    }
    if (p->winograd) {
      p->winograd->Run(xd, y.data<float>(), residual);
      return Status::Ok();
    }
    return Guard(node_, [&] {
      dnnl::memory src(p->src_md, Engine(), const_cast<float*>(xd));
      if (p->blocked) {
        thread_local BigVector<uint8_t> src_buf, dst_buf;
        dnnl::memory bsrc(p->pd.src_desc(), Engine(), ThreadBuffer(src_buf, p->pd.src_desc().get_size()));
        dnnl::memory bdst(p->pd.dst_desc(), Engine(), ThreadBuffer(dst_buf, p->pd.dst_desc().get_size()));
        Execute(p->to_blocked, p->to_blocked_pd, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, bsrc}});
        Execute(p->prim, p->pd, {{DNNL_ARG_SRC, bsrc}, {DNNL_ARG_WEIGHTS, p->weights.memory}, {DNNL_ARG_BIAS, p->bias}, {DNNL_ARG_DST, bdst}});
        const Shape& o = p->out_shape;
        BlockedToChannelsLast(y.data<float>(), static_cast<const float*>(bdst.get_data_handle()), residual,
                              {o[0], o[1], o[2] * o[3], p->block}, act_);
        return;
      }
      dnnl::memory dst(p->dst_md, Engine(), y.raw());
      Execute(p->prim, p->pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, p->weights.memory}, {DNNL_ARG_BIAS, p->bias}, {DNNL_ARG_DST, dst}});
    });
  }

 private:
  Result<std::shared_ptr<const ConvPrimitive>> Build(const Shape& x) {
    const Shape& ws = w_.shape();
    const int64_t g = attrs_.group;
    if (x[1] != ws[1] * g)
      return node_.Invalid("input has " + std::to_string(x[1]) + " channels, W expects " + std::to_string(ws[1] * g));
    KILN_ASSIGN_OR_RETURN(auto geo, ops::ForwardGeometry(node_, attrs_.sp, {x[2], x[3]}, false));
    // Strided 1x1 without padding: the unit-stride primitive on the
    // gathered input. oneDNN's strided 1x1 took 1.2 or 1.8 ms from process
    // to process for resnet50's layer3 downsample (512->1024, 28x28 ->
    // 14x14), gathered 1.07-1.16 ms; the gather copies a quarter of x.
    if (unit_ && geo[0].pad_begin == 0 && geo[0].pad_end == 0 && geo[1].pad_begin == 0 && geo[1].pad_end == 0) {
      const Shape sub = {x[0], x[1], geo[0].out, geo[1].out};
      KILN_ASSIGN_OR_RETURN(auto u, unit_->Get(sub));
      auto p = std::make_shared<ConvPrimitive>(*u);
      p->sub_shape = sub;
      p->sh = attrs_.sp.strides[0];
      p->sw = attrs_.sp.strides[1];
      return std::shared_ptr<const ConvPrimitive>(p);
    }
    auto p = std::make_shared<ConvPrimitive>();
    p->out_shape = {x[0], ws[0], geo[0].out, geo[1].out};
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "input", x));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "output", p->out_shape));
    KILN_RETURN_IF_ERROR(CheckInt32Extent(node_, "weights", ws));
    KILN_RETURN_IF_ERROR(Guard(node_, [&] {
      p->src_md = dnnl::memory::desc(Dims(x), dt::f32, tag::nhwc);
      p->dst_md = dnnl::memory::desc(Dims(p->out_shape), dt::f32, tag::nhwc);
    }));
    dnnl::memory::dims strides = {attrs_.sp.strides[0], attrs_.sp.strides[1]};
    dnnl::memory::dims dil = {attrs_.sp.dilations[0] - 1, attrs_.sp.dilations[1] - 1};
    dnnl::memory::dims pad_l = {geo[0].pad_begin, geo[1].pad_begin};
    dnnl::memory::dims pad_r = {geo[0].pad_end, geo[1].pad_end};
    dnnl::memory::dims wdims = g == 1 ? Dims(ws) : dnnl::memory::dims{g, ws[0] / g, ws[1], ws[2], ws[3]};
    const tag wtag = g == 1 ? tag::oihw : tag::goihw;
    const double flops = 2.0 * static_cast<double>(x[0]) * static_cast<double>(ws[0]) * static_cast<double>(geo[0].out) *
                         static_cast<double>(geo[1].out) * static_cast<double>(ws[1]) * static_cast<double>(ws[2]) *
                         static_cast<double>(ws[3]);
    const float* bias = b_.defined() ? b_.data<float>() : nullptr;
    if (g == 1 && ws[2] == 3 && ws[3] == 3 && attrs_.sp.strides[0] == 1 && attrs_.sp.strides[1] == 1 && attrs_.sp.dilations[0] == 1 &&
        attrs_.sp.dilations[1] == 1) {
      const WinogradShape wg{x[0], x[2], x[3], x[1], geo[0].out, geo[1].out, ws[0], geo[0].pad_begin, geo[1].pad_begin};
      if (const int tile = WinogradConv::PreferredTile(wg)) {
        p->winograd = std::make_shared<const WinogradConv>(wg, tile, w_.data<float>(), bias, act_);
        return std::shared_ptr<const ConvPrimitive>(p);
      }
    }
    const bool unpadded = geo[0].pad_begin == 0 && geo[0].pad_end == 0 && geo[1].pad_begin == 0 && geo[1].pad_end == 0;
    if (g == 1 && ws[2] == 1 && ws[3] == 1 && attrs_.sp.strides[0] == 1 && attrs_.sp.strides[1] == 1 && unpadded) {
      const PointwiseShape pw{x[0] * x[2] * x[3], x[1], ws[0]};
      if (PointwiseConv::Preferred(pw)) {
        p->pointwise = std::make_shared<const PointwiseConv>(pw, w_.data<float>(), bias, act_);
        return std::shared_ptr<const ConvPrimitive>(p);
      }
    }
    if (g == 1 && attrs_.sp.dilations[0] == 1 && attrs_.sp.dilations[1] == 1) {
      const DirectConvShape d{x[0], x[2], x[3], x[1], geo[0].out, geo[1].out, ws[0], ws[2], ws[3],
                              attrs_.sp.strides[0], attrs_.sp.strides[1], geo[0].pad_begin, geo[1].pad_begin};
      if (DirectConv::Preferred(d)) {
        p->direct = std::make_shared<const DirectConv>(d, w_.data<float>(), bias, act_);
        return std::shared_ptr<const ConvPrimitive>(p);
      }
    }
    SerialScope serial(flops < kSerialFlops);
    Status s = Guard(node_, [&] {
      const dnnl::memory::desc& src_md = p->src_md;
      const dnnl::memory::desc& dst_md = p->dst_md;
      dnnl::memory::desc w_any(wdims, dt::f32, tag::any);
      dnnl::memory::desc b_md({ws[0]}, dt::f32, tag::x);
      dnnl::post_ops po;
      if (residual_) po.append_sum(1.f);
      AppendActivation(act_, po);
      dnnl::primitive_attr attr;
      attr.set_post_ops(po);
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      const bool has_bias = b_.defined();
      if (WinogradFits(ws) && TryWinograd(*p, x, wdims, wtag, strides, dil, pad_l, pad_r)) return;
      auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                            src_md, w_any, b_md, dst_md, strides, dil, pad_l, pad_r)
                           : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                                            src_md, w_any, dst_md, strides, dil, pad_l, pad_r);
      p->pd = dnnl::convolution_forward::primitive_desc(desc, attr, Engine());
      p->prim = dnnl::convolution_forward(p->pd);
      p->weights = PackWeights({wdims, dt::f32, wtag}, p->pd.weights_desc(), w_.raw());
      if (has_bias) p->bias = BiasMemory(b_);
    });
    KILN_RETURN_IF_ERROR(s);
    return std::shared_ptr<const ConvPrimitive>(p);
  }

  bool WinogradFits(const Shape& ws) const {
    const auto& sp = attrs_.sp;
    return WinogradEnabled() && attrs_.group == 1 && ws[2] == 3 && ws[3] == 3 && sp.strides[0] == 1 && sp.strides[1] == 1 &&
           sp.dilations[0] == 1 && sp.dilations[1] == 1 && ws[0] >= 32 && ws[1] >= 32;
  }

  // The Winograd primitive and its input reorder into *p; false (p
  // untouched) when oneDNN has no Winograd kernel for it (CPU, padding) or
  // picks a layout other than channel blocks. No post-ops: residual,
  // activation and post_affine run in the epilogue. Bias goes through the
  // primitive (Winograd requires one: zeros if absent).
  bool TryWinograd(ConvPrimitive& p, const Shape& x, const dnnl::memory::dims& wdims, tag wtag, const dnnl::memory::dims& strides,
                   const dnnl::memory::dims& dil, const dnnl::memory::dims& pad_l, const dnnl::memory::dims& pad_r) {
    try {
      dnnl::memory::desc src_any(Dims(x), dt::f32, tag::any), dst_any(Dims(p.out_shape), dt::f32, tag::any);
      dnnl::memory::desc w_any(wdims, dt::f32, tag::any), b_md({p.out_shape[1]}, dt::f32, tag::x);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, src_any, w_any,
                                           b_md, dst_any, strides, dil, pad_l, pad_r);
      dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
      int64_t block = 0;
      for (auto [t, b] : {std::pair{tag::nChw16c, 16}, std::pair{tag::nChw8c, 8}})
        if (pd.dst_desc() == dnnl::memory::desc(Dims(p.out_shape), dt::f32, t)) block = b;
      if (block == 0) return false;
      dnnl::memory::desc src_nhwc(Dims(x), dt::f32, tag::nhwc);
      dnnl::reorder::primitive_desc in_pd(Engine(), src_nhwc, Engine(), pd.src_desc(), attr);
      p.pd = pd;
      p.prim = dnnl::convolution_forward(pd);
      p.to_blocked_pd = in_pd;
      p.to_blocked = dnnl::reorder(in_pd);
      p.weights = PackWeights({wdims, dt::f32, wtag}, pd.weights_desc(), w_.raw());
      p.bias = b_.defined() ? BiasMemory(b_) : BiasMemory(Tensor::Zeros(DType::kFloat32, {p.out_shape[1]}));
      p.blocked = true;
      p.block = block;
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }

  const ir::Node& node_;
  ops::ConvAttrs attrs_;
  ops::ActivationAttrs act_;
  bool residual_;
  Tensor w_, b_;
  ShapeCache<ConvPrimitive> cache_;
  std::shared_ptr<const ConvPrimitive> static_;
  Shape static_shape_;
  // The same Conv at unit stride, for strided 1x1 kernels (see Build).
  std::unique_ptr<ConvKernel> unit_;
};

bool IsFloat4D(const ir::TypeInfo* t) {
  return t && t->kind == ir::TypeInfo::Kind::kTensor && t->dtype == DType::kFloat32 && t->shape && t->shape->size() == 4;
}

Result<runtime::Kernel> MakeConv(const runtime::KernelInit& init, bool fused) {
  const ir::Node& n = init.node;
  const Tensor* w = init.constant(1);
  if (!IsFloat4D(init.input_type(0)) || !w || w->dtype() != DType::kFloat32 || w->rank() != 4) return runtime::Kernel();
  Tensor b;
  if (n.HasInput(2)) {
    if (!init.constant(2) || init.constant(2)->dtype() != DType::kFloat32) return runtime::Kernel();
    b = *init.constant(2);
    if (b.numel() != w->shape()[0]) return n.Invalid("bias has " + std::to_string(b.numel()) + " values, W has " + std::to_string(w->shape()[0]) + " output channels");
  }
  KILN_ASSIGN_OR_RETURN(ops::ConvAttrs attrs, ops::ParseConv(n, fused ? 11 : init.opset));
  if (attrs.sp.kernel_shape.empty()) attrs.sp.kernel_shape = {w->shape()[2], w->shape()[3]};
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(n, attrs.sp, 2));
  if (attrs.sp.kernel_shape[0] != w->shape()[2] || attrs.sp.kernel_shape[1] != w->shape()[3]) return runtime::Kernel();
  if (attrs.group <= 0 || w->shape()[0] % attrs.group != 0) return runtime::Kernel();
  ops::ActivationAttrs act;
  bool residual = false;
  if (fused) {
    KILN_ASSIGN_OR_RETURN(act, ops::ParseActivation(n));
    residual = n.HasInput(3);
    dnnl::post_ops probe;
    if (!AppendActivation(act, probe)) return runtime::Kernel();
  }
  auto kernel = std::make_shared<ConvKernel>(n, attrs, act, residual, *w, b);
  // A fully static input shape: build the primitive and pack the weights now.
  const ir::Dims& xd = *init.input_type(0)->shape;
  bool static_shape = true;
  Shape xs;
  for (const ir::Dim& d : xd) {
    static_shape = static_shape && d.known();
    xs.push_back(d.value);
  }
  if (static_shape) KILN_RETURN_IF_ERROR(kernel->BuildStatic(xs));
  runtime::KernelLayouts layouts;
  layouts.inputs.resize(4);
  layouts.inputs[0].orders = {kChannelsLast};
  layouts.inputs[3].orders = {kChannelsLast};
  layouts.output_order = [](const std::vector<DimOrder>&) { return kChannelsLast; };
  return runtime::Kernel([kernel](runtime::KernelContext& ctx) { return kernel->Run(ctx); }, std::move(layouts));
}

}  // namespace

void RegisterConvKernels(runtime::KernelRegistry& r) {
  r.RegisterFactory("", "Conv", [](const runtime::KernelInit& i) { return MakeConv(i, false); });
  r.RegisterFactory(ops::kKilnDomain, "FusedConv", [](const runtime::KernelInit& i) { return MakeConv(i, true); });
}

}  // namespace kiln::cpu
