// Reference kernels of Resize and Upsample: the ONNX spec's n-dimensional
// separable interpolation, computed point by point. For every output
// coordinate of every axis the source coordinate (ops/resize.cc) is turned
// into taps (input index, weight); an output element is the sum over the
// cartesian product of its axes' taps, in double. Indices are those of the
// row-major input buffer the kernel receives, never of a view.
#include <algorithm>
#include <cmath>
#include <map>

#include "ops/resize.h"
#include "providers/reference/families.h"
#include "providers/reference/resize_common.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

using ops::ResizeAttrs;
using Mode = ResizeAttrs::Mode;

struct Tap {
  int64_t index;
  double weight;
};
// The taps of one output coordinate along one axis; `outside` marks a
// tf_crop_and_resize coordinate outside the input (extrapolation_value).
struct AxisPoint {
  bool outside = false;
  std::vector<Tap> taps;
};

int64_t NearestIndex(ResizeAttrs::Nearest mode, int64_t base, double ratio) {
  if (ratio == 1) return base + 1;  // the coordinate is an integer
  switch (mode) {
    case ResizeAttrs::Nearest::kRoundPreferFloor: return ratio <= 0.5 ? base : base + 1;
    case ResizeAttrs::Nearest::kRoundPreferCeil: return ratio < 0.5 ? base : base + 1;
    case ResizeAttrs::Nearest::kFloor: return base;
    case ResizeAttrs::Nearest::kCeil: return base + 1;
  }
  return base;
}

AxisPoint ComputeAxisPoint(const ResizeAttrs& attrs, const ops::ResizeAxis& ax, int64_t x) {
  AxisPoint p;
  double xo = ops::ResizeSourceCoordinate(attrs, ax, x);
  const double last = static_cast<double>(ax.in - 1);
  if (!std::isfinite(xo) || (attrs.coord == ResizeAttrs::Coord::kTfCropAndResize && (xo < 0 || xo > last))) {
    // tf_crop_and_resize returns extrapolation_value outside the input, as
    // TF's CropAndResize does.
    p.outside = true;
    return p;
  }
  // Only tf_crop_and_resize can leave [-0.5, in - 0.5]; the clamp keeps the
  // integer arithmetic below defined and does not change which edge is read.
  xo = std::clamp(xo, -1e12, 1e12);
  // The spec's neighbours are those nearest to xo preferring smaller
  // indices, so the fractional part lies in (0, 1]: an integer coordinate
  // has ratio 1 over the pixel to its left.
  int64_t base = static_cast<int64_t>(std::floor(xo));
  double ratio = xo - static_cast<double>(base);
  if (ratio == 0) {
    base -= 1;
    ratio = 1;
  }
  std::vector<Tap> raw;
  if (attrs.mode == Mode::kNearest) {
    raw.push_back({NearestIndex(attrs.nearest, base, ratio), 1.0});
  } else if (!attrs.antialias) {
    if (attrs.mode == Mode::kLinear) {
      raw.push_back({base, 1 - ratio});
      raw.push_back({base + 1, ratio});
    } else {
      for (int64_t i = -1; i <= 2; ++i)
        raw.push_back({base + i, CubicKernel(static_cast<double>(i) - ratio, attrs.cubic_coeff_a)});
    }
  } else {
    // Opset 18 antialias: the filter is stretched by 1 / scale when
    // downsampling (the scale is capped at 1), its support grows to match,
    // and the weights are normalized to sum to 1.
    const double s = std::min(ax.scale, 1.0);
    const double support = attrs.mode == Mode::kLinear ? 1.0 : 2.0;
    const int64_t start = static_cast<int64_t>(std::floor(-support / s)) + 1;
    const int64_t count = 2 - 2 * start;
    double sum = 0;
    for (int64_t j = 0; j < count; ++j) {
      const double arg = (static_cast<double>(start + j) - ratio) * s;
      const double w = attrs.mode == Mode::kLinear ? std::clamp(1 - std::fabs(arg), 0.0, 1.0)
                                                  : CubicKernel(arg, attrs.cubic_coeff_a);
      raw.push_back({base + start + j, w});
      sum += w;
    }
    for (Tap& t : raw) t.weight /= sum;
  }
  if (attrs.exclude_outside) {
    // Weights of taps outside the input become 0; the rest renormalize.
    double sum = 0;
    for (Tap& t : raw) {
      if (t.index < 0 || t.index >= ax.in) t.weight = 0;
      sum += t.weight;
    }
    for (Tap& t : raw) t.weight /= sum;
  }
  // Outside indices read the edge (the spec pads in 'edge' mode); taps that
  // land on the same index merge, zero weights drop.
  std::map<int64_t, double> merged;
  for (const Tap& t : raw) merged[std::clamp<int64_t>(t.index, 0, ax.in - 1)] += t.weight;
  for (const auto& [i, w] : merged)
    if (w != 0.0) p.taps.push_back({i, w});
  return p;
}

Status RunResize(runtime::KernelContext& ctx, const ResizeAttrs& attrs) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 (X) must be a tensor");
  ops::ResizeInputs ri;
  auto opt = [&](int idx) -> const Tensor* {
    if (idx < 0 || !ctx.input(static_cast<size_t>(idx)).defined()) return nullptr;
    return &ctx.input(static_cast<size_t>(idx));
  };
  ri.roi = opt(attrs.roi_input);
  ri.scales = opt(attrs.scales_input);
  ri.sizes = opt(attrs.sizes_input);
  KILN_ASSIGN_OR_RETURN(ops::ResizeGeometry g, ops::ComputeResizeGeometry(ctx.node(), attrs, x.shape(), ri));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, x.dtype(), g.out_shape));
  if (y.numel() == 0) return Status::Ok();
  for (size_t d = 0; d < g.axes.size(); ++d)
    if (g.axes[d].in == 0) return ctx.Error("cannot resize the empty axis " + std::to_string(d));

  const size_t rank = g.axes.size();
  std::vector<std::vector<AxisPoint>> table(rank);
  for (size_t d = 0; d < rank; ++d)
    for (int64_t o = 0; o < g.axes[d].out; ++o) table[d].push_back(ComputeAxisPoint(attrs, g.axes[d], o));
  const std::vector<int64_t> in_strides = ContiguousStrides(x.shape());
  const double ev = attrs.extrapolation_value;

  if (attrs.mode == Mode::kNearest) {
    // Nearest copies elements exactly (int64 beyond 2^53, strings, bools).
    Status st = Status::Ok();
    Status visit = VisitAll(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      ForEachIndex(g.out_shape, [&](int64_t lin, const std::vector<int64_t>& idx) {
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d) {
          const AxisPoint& p = table[d][static_cast<size_t>(idx[d])];
          if (p.outside) { off = -1; break; }
          off += p.taps[0].index * in_strides[d];
        }
        if (off >= 0) { dst[lin] = src[off]; return; }
        if constexpr (std::is_same_v<T, std::string>) st = ctx.Unsupported("extrapolation_value on a string tensor");
        else dst[lin] = CastInterpolated<T>(ev);
      });
    });
    KILN_RETURN_IF_ERROR(visit);
    return st;
  }

  if (x.dtype() == DType::kString) return ctx.Unsupported("linear and cubic modes need a numeric input, got string");
  return VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    std::vector<const AxisPoint*> pts(rank);
    std::vector<size_t> k(rank);
    ForEachIndex(g.out_shape, [&](int64_t lin, const std::vector<int64_t>& idx) {
      bool outside = false;
      for (size_t d = 0; d < rank; ++d) {
        pts[d] = &table[d][static_cast<size_t>(idx[d])];
        outside = outside || pts[d]->outside;
      }
      if (outside) { dst[lin] = CastInterpolated<T>(ev); return; }
      // Sum over the cartesian product of the axes' taps (an axis without
      // taps, possible only if every weight was 0, makes an empty sum).
      double acc = 0;
      bool done = false;
      for (size_t d = 0; d < rank; ++d) done = done || pts[d]->taps.empty();
      std::fill(k.begin(), k.end(), 0);
      while (!done) {
        double w = 1;
        int64_t off = 0;
        for (size_t d = 0; d < rank; ++d) {
          const Tap& t = pts[d]->taps[k[d]];
          w *= t.weight;
          off += t.index * in_strides[d];
        }
        acc += w * ToDouble(src[off]);
        for (size_t d = rank;; ) {
          if (d == 0) { done = true; break; }
          --d;
          if (++k[d] < pts[d]->taps.size()) break;
          k[d] = 0;
        }
      }
      dst[lin] = CastInterpolated<T>(acc);
    });
  });
}

Status Resize(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ResizeAttrs attrs, ops::ParseResize(ctx.node(), ctx.opset()));
  return RunResize(ctx, attrs);
}

Status Upsample(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ResizeAttrs attrs, ops::ParseUpsample(ctx.node(), ctx.opset()));
  return RunResize(ctx, attrs);
}

}  // namespace

void RegisterResizeKernels(runtime::KernelRegistry& r) {
  r.Register("", "Resize", Resize);
  r.Register("", "Upsample", Upsample);
}

}  // namespace kiln::reference
