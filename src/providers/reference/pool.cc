// Reference kernels of the pool ops: every output cell visits every tap of
// its (dilated) window; taps in the padding are skipped (MaxPool, LpPool) or
// counted only by AveragePool's count_include_pad.
#include <cmath>
#include <limits>

#include "ops/pool.h"
#include "providers/reference/conv_util.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

using ops::AxisGeometry;

struct PoolPlan {
  int64_t planes = 0;  // N * C
  Shape in_sp, out_sp;
  ops::PoolAttrs a;
  std::vector<AxisGeometry> geo;
};

Result<PoolPlan> PlanPool(runtime::KernelContext& ctx, const Tensor& x) {
  PoolPlan p;
  KILN_ASSIGN_OR_RETURN(p.a, ops::ParsePool(ctx.node(), ctx.opset()));
  if (x.rank() < 3) return ctx.Error("input X must have rank >= 3, got " + ShapeToString(x.shape()));
  p.planes = x.dim(0) * x.dim(1);
  p.in_sp.assign(x.shape().begin() + 2, x.shape().end());
  KILN_ASSIGN_OR_RETURN(p.geo, ops::PoolGeometry(ctx.node(), p.a, p.in_sp));
  for (const auto& g : p.geo) p.out_sp.push_back(g.out);
  return p;
}

// Calls f(tap_offset_in_plane, tap_spatial_index) for the taps of output cell
// `o` inside the input, and returns how many taps lie inside the padded
// extent [-pad_begin, in + pad_end) (count_include_pad's divisor).
template <typename F>
int64_t ForEachTap(const PoolPlan& p, const std::vector<int64_t>& o, const std::vector<std::vector<int64_t>>& taps, F&& f) {
  const size_t n = p.in_sp.size();
  int64_t in_padded = 0;
  std::vector<int64_t> pos(n);
  for (const auto& t : taps) {
    bool inside = true, padded = true;
    int64_t off = 0;
    for (size_t d = 0; d < n; ++d) {
      pos[d] = o[d] * p.a.sp.strides[d] + t[d] * p.a.sp.dilations[d] - p.geo[d].pad_begin;
      if (pos[d] < 0 || pos[d] >= p.in_sp[d]) inside = false;
      if (pos[d] < -p.geo[d].pad_begin || pos[d] >= p.in_sp[d] + p.geo[d].pad_end) padded = false;
      off = off * p.in_sp[d] + pos[d];
    }
    if (padded) ++in_padded;
    if (inside) f(off, pos);
  }
  return in_padded;
}

// Flat index of a spatial position within its plane; storage_order 1
// (MaxPool opset 8+) numbers the spatial dims column-major.
int64_t IndexInPlane(const std::vector<int64_t>& pos, const Shape& in_sp, int64_t storage_order) {
  int64_t off = 0;
  if (storage_order == 0) {
    for (size_t d = 0; d < pos.size(); ++d) off = off * in_sp[d] + pos[d];
  } else {
    for (size_t d = pos.size(); d-- > 0;) off = off * in_sp[d] + pos[d];
  }
  return off;
}

// MaxPool: the largest tap (first one on ties) and, when asked, its index in
// the flattened input (padding not counted). Computed in the input type so
// int8/uint8 (opset 12) stay exact.
Status MaxPool(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(PoolPlan p, PlanPool(ctx, x));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  Tensor ind;
  const bool want_indices = ctx.has_output(1);
  if (want_indices) { KILN_ASSIGN_OR_RETURN(ind, ctx.AllocOutput(1)); }
  const auto outs = AllIndices(p.out_sp);
  const auto taps = AllIndices(p.a.sp.kernel_shape);
  const int64_t in_plane = DimProduct(p.in_sp, 0, p.in_sp.size());
  const int64_t out_plane = static_cast<int64_t>(outs.size());
  return VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    for (int64_t pl = 0; pl < p.planes; ++pl) {
      for (int64_t ol = 0; ol < out_plane; ++ol) {
        bool found = false;
        double best = 0;
        int64_t best_off = 0;
        std::vector<int64_t> best_pos;
        ForEachTap(p, outs[static_cast<size_t>(ol)], taps, [&](int64_t off, const std::vector<int64_t>& pos) {
          const double v = ToDouble(xp[pl * in_plane + off]);
          if (!found || v > best) {
            found = true;
            best = v;
            best_off = off;
            best_pos = pos;
          }
        });
        const int64_t yi = pl * out_plane + ol;
        if (found) {
          yp[yi] = xp[pl * in_plane + best_off];
        } else if constexpr (std::is_integral_v<T>) {
          yp[yi] = std::numeric_limits<T>::lowest();  // a window of padding only
        } else {
          yp[yi] = FromDouble<T>(-std::numeric_limits<double>::infinity());
        }
        if (want_indices)
          ind.data<int64_t>()[yi] = found ? pl * in_plane + IndexInPlane(best_pos, p.in_sp, p.a.storage_order) : -1;
      }
    }
  });
}

// AveragePool: mean of the taps inside the input; count_include_pad (opset 7)
// divides by the taps inside the padded extent instead.
Status AveragePool(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(PoolPlan p, PlanPool(ctx, x));
  const std::vector<double> xv = ReadDoubles(x);
  const auto outs = AllIndices(p.out_sp);
  const auto taps = AllIndices(p.a.sp.kernel_shape);
  const int64_t in_plane = DimProduct(p.in_sp, 0, p.in_sp.size());
  std::vector<double> y(static_cast<size_t>(p.planes) * outs.size());
  for (int64_t pl = 0; pl < p.planes; ++pl) {
    for (size_t ol = 0; ol < outs.size(); ++ol) {
      double sum = 0;
      int64_t count = 0;
      const int64_t padded = ForEachTap(p, outs[ol], taps, [&](int64_t off, const std::vector<int64_t>&) {
        sum += xv[static_cast<size_t>(pl * in_plane + off)];
        ++count;
      });
      const int64_t div = p.a.count_include_pad ? padded : count;
      y[static_cast<size_t>(pl) * outs.size() + ol] = div > 0 ? sum / static_cast<double>(div) : 0.0;
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  WriteDoubles(out, y);
  return Status::Ok();
}

// LpPool: (sum |x|^p)^(1/p) over the taps inside the input (padding is zero).
Status LpPool(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(PoolPlan p, PlanPool(ctx, x));
  const std::vector<double> xv = ReadDoubles(x);
  const auto outs = AllIndices(p.out_sp);
  const auto taps = AllIndices(p.a.sp.kernel_shape);
  const int64_t in_plane = DimProduct(p.in_sp, 0, p.in_sp.size());
  std::vector<double> y(static_cast<size_t>(p.planes) * outs.size());
  for (int64_t pl = 0; pl < p.planes; ++pl) {
    for (size_t ol = 0; ol < outs.size(); ++ol) {
      double sum = 0;
      ForEachTap(p, outs[ol], taps, [&](int64_t off, const std::vector<int64_t>&) {
        sum += std::pow(std::fabs(xv[static_cast<size_t>(pl * in_plane + off)]), p.a.p);
      });
      y[static_cast<size_t>(pl) * outs.size() + ol] = std::pow(sum, 1.0 / p.a.p);
    }
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  WriteDoubles(out, y);
  return Status::Ok();
}

enum class GlobalKind { kMax, kAverage, kLp };

// Global pools reduce each whole [N, C] plane to one value.
Status GlobalPool(runtime::KernelContext& ctx, GlobalKind kind) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) return ctx.Error("input X must have rank >= 3, got " + ShapeToString(x.shape()));
  KILN_ASSIGN_OR_RETURN(ops::PoolAttrs a, ops::ParsePool(ctx.node(), ctx.opset()));
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t plane = DimProduct(x.shape(), 2, x.shape().size());
  const std::vector<double> xv = ReadDoubles(x);
  std::vector<double> y(static_cast<size_t>(planes));
  for (int64_t pl = 0; pl < planes; ++pl) {
    double acc = kind == GlobalKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < plane; ++i) {
      const double v = xv[static_cast<size_t>(pl * plane + i)];
      if (kind == GlobalKind::kMax) acc = (i == 0 || v > acc) ? v : acc;
      else if (kind == GlobalKind::kAverage) acc += v;
      else acc += std::pow(std::fabs(v), a.p);
    }
    if (kind == GlobalKind::kAverage) acc = plane > 0 ? acc / static_cast<double>(plane) : 0.0;
    if (kind == GlobalKind::kLp) acc = std::pow(acc, 1.0 / a.p);
    y[static_cast<size_t>(pl)] = acc;
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  WriteDoubles(out, y);
  return Status::Ok();
}

// MaxUnpool: zeros, then X[i] goes to flat position I[i]. The indices count
// positions of the default output ((in-1)*stride + kernel - pads); a larger
// output_shape input keeps each value at the same spatial coordinates, the
// extra cells at the end of each axis (backend test maxunpool_export_with_output_shape).
Status MaxUnpool(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  if (x.rank() < 3) return ctx.Error("input X must have rank >= 3, got " + ShapeToString(x.shape()));
  if (ind.shape() != x.shape())
    return ctx.Error("indices I " + ShapeToString(ind.shape()) + " must have the shape of X " + ShapeToString(x.shape()));
  KILN_ASSIGN_OR_RETURN(ops::PoolAttrs a, ops::ParsePool(ctx.node(), ctx.opset()));
  const size_t n = static_cast<size_t>(x.rank() - 2);
  KILN_RETURN_IF_ERROR(ops::ResolveSpatial(ctx.node(), a.sp, n));
  Shape def_sp;
  for (size_t d = 0; d < n; ++d)
    def_sp.push_back((x.dim(static_cast<int>(d) + 2) - 1) * a.sp.strides[d] + a.sp.kernel_shape[d] - a.sp.pads[d] - a.sp.pads[d + n]);
  for (int64_t v : def_sp)
    if (v < 0) return ctx.Error("pads crop the unpooled shape below zero");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  if (out.dim(0) != x.dim(0) || out.dim(1) != x.dim(1))
    return ctx.Error("output_shape " + ShapeToString(out.shape()) + " must keep the batch and channel dims of X " + ShapeToString(x.shape()));
  const Shape out_sp(out.shape().begin() + 2, out.shape().end());
  const int64_t def_plane = DimProduct(def_sp, 0, n), out_plane = DimProduct(out_sp, 0, n);
  const int64_t planes = x.dim(0) * x.dim(1);
  const std::vector<double> xv = ReadDoubles(x);
  const std::vector<int64_t> iv = ReadInts(ind);
  std::vector<double> y(static_cast<size_t>(out.numel()), 0.0);
  for (size_t i = 0; i < iv.size(); ++i) {
    if (iv[i] < 0 || iv[i] >= planes * def_plane)
      return ctx.Error("index " + std::to_string(iv[i]) + " is outside the unpooled shape " + ShapeToString(def_sp) + " of " +
                       std::to_string(planes) + " planes");
    // Coordinates in the default output, re-linearized in the real one.
    int64_t rest = iv[i] % def_plane, off = 0, stride = 1;
    std::vector<int64_t> pos(n);
    for (size_t d = n; d-- > 0;) {
      pos[d] = rest % def_sp[d];
      rest /= def_sp[d];
    }
    for (size_t d = n; d-- > 0;) {
      if (pos[d] >= out_sp[d])
        return ctx.Error("index " + std::to_string(iv[i]) + " falls outside output_shape " + ShapeToString(out.shape()));
      off += pos[d] * stride;
      stride *= out_sp[d];
    }
    y[static_cast<size_t>((iv[i] / def_plane) * out_plane + off)] = xv[i];
  }
  WriteDoubles(out, y);
  return Status::Ok();
}

}  // namespace

void RegisterPoolKernels(runtime::KernelRegistry& r) {
  r.Register("", "MaxPool", MaxPool);
  r.Register("", "AveragePool", AveragePool);
  r.Register("", "LpPool", LpPool);
  r.Register("", "GlobalMaxPool", [](runtime::KernelContext& c) { return GlobalPool(c, GlobalKind::kMax); });
  r.Register("", "GlobalAveragePool", [](runtime::KernelContext& c) { return GlobalPool(c, GlobalKind::kAverage); });
  r.Register("", "GlobalLpPool", [](runtime::KernelContext& c) { return GlobalPool(c, GlobalKind::kLp); });
  r.Register("", "MaxUnpool", MaxUnpool);
}

}  // namespace kiln::reference
