// Reference kernels of the Conv family: Conv, ConvTranspose, ConvInteger,
// QLinearConv. The spec literally: a sum over every (channel, kernel tap) of
// every output position, in double (float ops) or int64 (integer ops).
#include <cmath>
#include <limits>

#include "ops/conv.h"
#include "providers/reference/conv_util.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

using ops::AxisGeometry;

// Geometry of one forward convolution, checked against the real tensors.
struct ForwardPlan {
  int64_t batch = 0, c = 0, m = 0, group = 1;
  Shape in_sp, k_sp, out_sp;
  ops::SpatialAttrs sp;
  std::vector<AxisGeometry> geo;
};

Result<ForwardPlan> PlanForward(runtime::KernelContext& ctx, const Tensor& x, const Tensor& w) {
  KILN_ASSIGN_OR_RETURN(ops::ConvAttrs a, ops::ParseConv(ctx.node(), ctx.opset()));
  if (x.rank() < 3) return ctx.Error("input X must have rank >= 3, got " + ShapeToString(x.shape()));
  if (w.rank() != x.rank()) return ctx.Error("W " + ShapeToString(w.shape()) + " must have the rank of X " + ShapeToString(x.shape()));
  ForwardPlan p;
  const size_t n = static_cast<size_t>(x.rank() - 2);
  p.batch = x.dim(0);
  p.c = x.dim(1);
  p.m = w.dim(0);
  p.group = a.group;
  p.in_sp.assign(x.shape().begin() + 2, x.shape().end());
  p.k_sp.assign(w.shape().begin() + 2, w.shape().end());
  if (p.c != w.dim(1) * a.group || p.m % a.group != 0)
    return ctx.Error("X " + ShapeToString(x.shape()) + " and W " + ShapeToString(w.shape()) + " do not fit group " +
                     std::to_string(a.group));
  if (a.sp.kernel_shape.empty()) a.sp.kernel_shape = p.k_sp;
  if (a.sp.kernel_shape != p.k_sp) return ctx.Error("kernel_shape disagrees with W " + ShapeToString(w.shape()));
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(ctx.node(), a.sp, n));
  KILN_ASSIGN_OR_RETURN(p.geo, ops::ForwardGeometry(ctx.node(), a.sp, p.in_sp, false));
  for (const auto& g : p.geo) p.out_sp.push_back(g.out);
  p.sp = a.sp;
  return p;
}

// y[b, oc, o] = sum over ic, k of x[b, g*Cg+ic, o*s + k*d - pad_begin] * w[oc, ic, k];
// taps that land in the padding contribute nothing (zero, or the zero point
// for the integer ops, whose inputs arrive with it already subtracted).
template <typename T>
std::vector<T> ConvLoop(const ForwardPlan& p, const std::vector<T>& x, const std::vector<T>& w) {
  const int64_t in_plane = DimProduct(p.in_sp, 0, p.in_sp.size());
  const int64_t k_plane = DimProduct(p.k_sp, 0, p.k_sp.size());
  const int64_t out_plane = DimProduct(p.out_sp, 0, p.out_sp.size());
  const int64_t cg = p.c / p.group, mg = p.m / p.group;
  const auto outs = AllIndices(p.out_sp);
  const auto taps = AllIndices(p.k_sp);
  const size_t n = p.in_sp.size();
  std::vector<T> y(static_cast<size_t>(p.batch * p.m * out_plane), T{0});
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t oc = 0; oc < p.m; ++oc) {
      const int64_t g = oc / mg;
      for (size_t ol = 0; ol < outs.size(); ++ol) {
        const auto& o = outs[ol];
        T acc{0};
        for (int64_t ic = 0; ic < cg; ++ic) {
          const int64_t xbase = (b * p.c + g * cg + ic) * in_plane;
          const int64_t wbase = (oc * cg + ic) * k_plane;
          for (size_t kl = 0; kl < taps.size(); ++kl) {
            int64_t off = 0;
            bool inside = true;
            for (size_t d = 0; d < n && inside; ++d) {
              const int64_t pos = o[d] * p.sp.strides[d] + taps[kl][d] * p.sp.dilations[d] - p.geo[d].pad_begin;
              inside = pos >= 0 && pos < p.in_sp[d];
              off = off * p.in_sp[d] + pos;
            }
            if (inside) acc += x[static_cast<size_t>(xbase + off)] * w[static_cast<size_t>(wbase + static_cast<int64_t>(kl))];
          }
        }
        y[static_cast<size_t>((b * p.m + oc) * out_plane + static_cast<int64_t>(ol))] = acc;
      }
    }
  }
  return y;
}

Status CheckBias(runtime::KernelContext& ctx, const Tensor& bias, int64_t m) {
  if (bias.rank() != 1 || bias.dim(0) != m)
    return ctx.Error("bias B " + ShapeToString(bias.shape()) + " must have one value per output channel (" + std::to_string(m) + ")");
  return Status::Ok();
}

Status Conv(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(ForwardPlan p, PlanForward(ctx, x, w));
  std::vector<double> y = ConvLoop(p, ReadDoubles(x), ReadDoubles(w));
  if (ctx.has_input(2)) {
    const Tensor& bias = ctx.input(2);
    KILN_RETURN_IF_ERROR(CheckBias(ctx, bias, p.m));
    const std::vector<double> bv = ReadDoubles(bias);
    const size_t plane = static_cast<size_t>(DimProduct(p.out_sp, 0, p.out_sp.size()));
    for (size_t i = 0; i < y.size(); ++i) y[i] += bv[(i / plane) % static_cast<size_t>(p.m)];
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  WriteDoubles(out, y);
  return Status::Ok();
}

// A zero point: a scalar (or 1-element tensor), or for W one per output
// channel. Absent = 0.
Result<std::vector<int64_t>> ZeroPoints(runtime::KernelContext& ctx, size_t i, int64_t per_channel, const char* what) {
  if (!ctx.has_input(i)) return std::vector<int64_t>(static_cast<size_t>(per_channel), 0);
  const Tensor& z = ctx.input(i);
  std::vector<int64_t> v = ReadInts(z);
  if (z.rank() > 1 || (v.size() != 1 && static_cast<int64_t>(v.size()) != per_channel))
    return ctx.Error(std::string(what) + " " + ShapeToString(z.shape()) + " must be a scalar or have " + std::to_string(per_channel) +
                     " values");
  if (v.size() == 1) v.assign(static_cast<size_t>(per_channel), v[0]);
  return v;
}

// Integer inputs with their zero points subtracted: x per tensor, w per output channel.
Status CenteredInts(runtime::KernelContext& ctx, const ForwardPlan& p, const Tensor& x, const Tensor& w, size_t xzp_i,
                    size_t wzp_i, std::vector<int64_t>* xc, std::vector<int64_t>* wc) {
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> xzp, ZeroPoints(ctx, xzp_i, 1, "x_zero_point"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> wzp, ZeroPoints(ctx, wzp_i, p.m, "w_zero_point"));
  *xc = ReadInts(x);
  for (auto& v : *xc) v -= xzp[0];
  *wc = ReadInts(w);
  const size_t per_oc = wc->size() / static_cast<size_t>(std::max<int64_t>(p.m, 1));
  for (size_t i = 0; i < wc->size(); ++i) (*wc)[i] -= wzp[i / per_oc];
  return Status::Ok();
}

// ConvInteger (opset 10): int32 sum of (x - x_zero_point) * (w - w_zero_point).
Status ConvInteger(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(ForwardPlan p, PlanForward(ctx, x, w));
  std::vector<int64_t> xc, wc;
  KILN_RETURN_IF_ERROR(CenteredInts(ctx, p, x, w, 2, 3, &xc, &wc));
  std::vector<int64_t> y = ConvLoop(p, xc, wc);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  int32_t* o = out.data<int32_t>();
  for (size_t i = 0; i < y.size(); ++i) o[i] = static_cast<int32_t>(y[i]);  // wraps like int32 accumulation
  return Status::Ok();
}

Result<std::vector<double>> Scales(runtime::KernelContext& ctx, size_t i, int64_t per_channel, const char* what) {
  const Tensor& t = ctx.input(i);
  std::vector<double> v = ReadDoubles(t);
  if (t.rank() > 1 || (v.size() != 1 && static_cast<int64_t>(v.size()) != per_channel))
    return ctx.Error(std::string(what) + " " + ShapeToString(t.shape()) + " must be a scalar or have " + std::to_string(per_channel) +
                     " values");
  if (v.size() == 1) v.assign(static_cast<size_t>(per_channel), v[0]);
  return v;
}

// QLinearConv (opset 10): y = saturate(round_half_even(acc * x_scale * w_scale / y_scale) + y_zero_point)
// with acc = sum (x - x_zp)(w - w_zp) + B.
Status QLinearConv(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(3);
  KILN_ASSIGN_OR_RETURN(ForwardPlan p, PlanForward(ctx, x, w));
  std::vector<int64_t> xc, wc;
  KILN_RETURN_IF_ERROR(CenteredInts(ctx, p, x, w, 2, 5, &xc, &wc));
  KILN_ASSIGN_OR_RETURN(std::vector<double> xs, Scales(ctx, 1, 1, "x_scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> ws, Scales(ctx, 4, p.m, "w_scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<double> ys, Scales(ctx, 6, 1, "y_scale"));
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> yzp, ZeroPoints(ctx, 7, 1, "y_zero_point"));
  std::vector<int64_t> bias(static_cast<size_t>(p.m), 0);
  if (ctx.has_input(8)) {
    KILN_RETURN_IF_ERROR(CheckBias(ctx, ctx.input(8), p.m));
    bias = ReadInts(ctx.input(8));
  }
  std::vector<int64_t> acc = ConvLoop(p, xc, wc);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  const bool is_signed = out.dtype() == DType::kInt8;
  const double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  const size_t plane = static_cast<size_t>(DimProduct(p.out_sp, 0, p.out_sp.size()));
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t oc = (i / plane) % static_cast<size_t>(p.m);
    const double real = static_cast<double>(acc[i] + bias[oc]) * (xs[0] * ws[oc] / ys[0]);
    const double q = std::clamp(std::nearbyint(real) + static_cast<double>(yzp[0]), lo, hi);  // default rounding: half to even
    if (is_signed) out.data<int8_t>()[i] = static_cast<int8_t>(q);
    else out.data<uint8_t>()[i] = static_cast<uint8_t>(q);
  }
  return Status::Ok();
}

// ConvTranspose: every input cell scatters x * w[c, m, k] to output position
// i*s + k*d - pad_begin (the gradient of Conv); pads crop the full output.
Status ConvTranspose(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(ops::ConvTransposeAttrs a, ops::ParseConvTranspose(ctx.node(), ctx.opset()));
  if (x.rank() < 3) return ctx.Error("input X must have rank >= 3, got " + ShapeToString(x.shape()));
  if (w.rank() != x.rank()) return ctx.Error("W " + ShapeToString(w.shape()) + " must have the rank of X " + ShapeToString(x.shape()));
  const size_t n = static_cast<size_t>(x.rank() - 2);
  const int64_t batch = x.dim(0), c = x.dim(1), group = a.group;
  if (w.dim(0) != c || c % group != 0)
    return ctx.Error("X " + ShapeToString(x.shape()) + " and W " + ShapeToString(w.shape()) + " do not fit group " + std::to_string(group));
  const int64_t mg = w.dim(1), m = mg * group, cg = c / group;
  Shape in_sp(x.shape().begin() + 2, x.shape().end());
  Shape k_sp(w.shape().begin() + 2, w.shape().end());
  if (a.sp.kernel_shape.empty()) a.sp.kernel_shape = k_sp;
  if (a.sp.kernel_shape != k_sp) return ctx.Error("kernel_shape disagrees with W " + ShapeToString(w.shape()));
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(ctx.node(), a.sp, n));
  if (!a.output_padding.empty() && a.output_padding.size() != n) return ctx.Error("output_padding has the wrong length");
  if (!a.output_shape.empty() && a.output_shape.size() != n && a.output_shape.size() != n + 2)
    return ctx.Error("output_shape has the wrong length");
  std::vector<AxisGeometry> geo;
  Shape out_sp;
  for (size_t d = 0; d < n; ++d) {
    KILN_ASSIGN_OR_RETURN(AxisGeometry g, ops::TransposeAxis(ctx.node(), a, d, in_sp[d]));
    geo.push_back(g);
    out_sp.push_back(g.out);
  }
  const std::vector<double> xv = ReadDoubles(x), wv = ReadDoubles(w);
  const int64_t in_plane = DimProduct(in_sp, 0, n), k_plane = DimProduct(k_sp, 0, n), out_plane = DimProduct(out_sp, 0, n);
  const auto ins = AllIndices(in_sp);
  const auto taps = AllIndices(k_sp);
  std::vector<double> y(static_cast<size_t>(batch * m * out_plane), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      for (size_t il = 0; il < ins.size(); ++il) {
        const double xval = xv[static_cast<size_t>((b * c + ci) * in_plane + static_cast<int64_t>(il))];
        for (size_t kl = 0; kl < taps.size(); ++kl) {
          int64_t off = 0;
          bool inside = true;
          for (size_t d = 0; d < n && inside; ++d) {
            const int64_t pos = ins[il][d] * a.sp.strides[d] + taps[kl][d] * a.sp.dilations[d] - geo[d].pad_begin;
            inside = pos >= 0 && pos < out_sp[d];
            off = off * out_sp[d] + pos;
          }
          if (!inside) continue;
          for (int64_t mi = 0; mi < mg; ++mi) {
            const int64_t oc = g * mg + mi;
            y[static_cast<size_t>((b * m + oc) * out_plane + off)] +=
                xval * wv[static_cast<size_t>((ci * mg + mi) * k_plane + static_cast<int64_t>(kl))];
          }
        }
      }
    }
  }
  if (ctx.has_input(2)) {
    const Tensor& bias = ctx.input(2);
    KILN_RETURN_IF_ERROR(CheckBias(ctx, bias, m));
    const std::vector<double> bv = ReadDoubles(bias);
    for (size_t i = 0; i < y.size(); ++i) y[i] += bv[(i / static_cast<size_t>(out_plane)) % static_cast<size_t>(m)];
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  WriteDoubles(out, y);
  return Status::Ok();
}

}  // namespace

void RegisterConvKernels(runtime::KernelRegistry& r) {
  r.Register("", "Conv", Conv);
  r.Register("", "ConvTranspose", ConvTranspose);
  r.Register("", "ConvInteger", ConvInteger);
  r.Register("", "QLinearConv", QLinearConv);
}

}  // namespace kiln::reference
