// Reference kernels of GridSample and RoiAlign, computed point by point in
// double from the spec text, with the ONNX reference implementation settling
// what the text leaves open.
//
// GridSample: every output point denormalizes its grid vector (x first, so
// grid component r-1-k addresses spatial axis k), rounds it (nearest), moves
// a location outside the sampling border into it (border: clamp to the
// edge pixels, reflection: fold about the border), then takes the taps of
// each axis (1 nearest, 2 linear, 4 cubic) and sums their tensor product.
// Tap indices outside the input read 0 (zeros), the edge pixel (border) or
// the reflected pixel (reflection). N-D (opset 20) is the same separable
// product over every spatial axis.
//
// RoiAlign: each bin of an RoI holds a grid of sampling points whose value is
// the bilinear interpolation of the feature map (Mask R-CNN); avg pools their
// mean, max their maximum. The spec's text ("the value of the sampled
// locations are computed directly through bilinear interpolation") is
// followed for max too: onnx's Python reference and ONNX Runtime's default
// instead take the max over the four *weighted corner terms* w_i * v_i of each
// point, which onnx/onnx#4764 and onnxruntime#6146 report as a bug; kiln
// follows the text, so max mode differs from those two by design.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/sampling.h"
#include "providers/reference/families.h"
#include "providers/reference/resize_common.h"
#include "providers/reference/util.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {
namespace {

using ops::GridSampleAttrs;
using ops::RoiAlignAttrs;
using GsMode = GridSampleAttrs::Mode;
using GsPadding = GridSampleAttrs::Padding;

// Reads a float tensor (grid, rois) as doubles.
Result<std::vector<double>> ReadFloats(runtime::KernelContext& ctx, const Tensor& t, const char* what) {
  if (!DTypeIsFloat(t.dtype()))
    return ctx.Error(std::string(what) + " must be a float tensor, got " + DTypeName(t.dtype()));
  std::vector<double> v(static_cast<size_t>(t.numel()));
  KILN_RETURN_IF_ERROR(VisitNumeric(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = ToDouble(p[i]);
  }));
  return v;
}

// ---------------------------------------------------------------- GridSample

constexpr double kCubicA = -0.75;  // GridSample's cubic coefficient (PyTorch's), not an attribute
// Locations are kept within +-kFar before becoming integers; farther ones
// read only padding either way.
constexpr double kFar = 1e12;

// Normalized [-1, 1] -> input pixel coordinate. align_corners=1: -1 and 1
// are the centers of the corner pixels; 0: their outer edges.
double Denormalize(double n, int64_t len, bool align_corners) {
  const double d = static_cast<double>(len);
  return align_corners ? (n + 1) / 2 * (d - 1) : ((n + 1) * d - 1) / 2;
}

// The spec's nearest: halfway points round to the even index.
double RoundHalfEven(double x) {
  const double f = std::floor(x);
  const double d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

// Reflects x by the border [lo, hi] until it lies inside ("x = -3.5 reflects
// by border -1 and becomes 1.5, then by border 1 and becomes 0.5").
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;  // one pixel with align_corners=1: everything maps onto it
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

// One spatial axis of one sampling point: its taps as input indices (-1:
// outside with zeros padding, reads 0) and weights.
struct AxisTaps {
  int count = 0;
  int64_t index[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

struct GsAxis {
  int64_t len = 0;
  double lo = 0, hi = 0;  // the sampling border: [-0.5, len-0.5], or [0, len-1] with align_corners
};

// Where tap index i reads under the padding mode (-1: a zero).
int64_t PadIndex(int64_t i, const GsAxis& ax, GsPadding padding) {
  if (i >= 0 && i < ax.len) return i;
  switch (padding) {
    case GsPadding::kZeros: return -1;
    case GsPadding::kBorder: return std::clamp<int64_t>(i, 0, ax.len - 1);
    case GsPadding::kReflection: {
      // The reflection of an integer by these borders is an integer.
      const double r = Reflect(static_cast<double>(i), ax.lo, ax.hi);
      return std::clamp<int64_t>(static_cast<int64_t>(r), 0, ax.len - 1);
    }
  }
  return -1;
}

// The taps of one axis for normalized coordinate g; false when the location
// is undefined (NaN, or an infinite location reflected).
bool ComputeAxisTaps(const GridSampleAttrs& a, const GsAxis& ax, double g, AxisTaps& t) {
  if (std::isnan(g)) return false;
  double x = Denormalize(g, ax.len, a.align_corners);
  if (a.mode == GsMode::kNearest) x = RoundHalfEven(x);
  // A location outside the border is moved onto it (border) or folded into
  // it (reflection) before the taps are taken; zeros leaves it.
  if (x < ax.lo || x > ax.hi) {
    if (a.padding == GsPadding::kBorder) x = std::clamp(x, 0.0, static_cast<double>(ax.len - 1));
    else if (a.padding == GsPadding::kReflection) x = Reflect(x, ax.lo, ax.hi);
  }
  if (std::isnan(x)) return false;
  x = std::clamp(x, -kFar, kFar);
  const double base = std::floor(x);
  const double frac = x - base;
  const int64_t b = static_cast<int64_t>(base);
  switch (a.mode) {
    case GsMode::kNearest:
      t.count = 1;
      t.index[0] = b;  // x is already an integer
      t.weight[0] = 1;
      break;
    case GsMode::kLinear:
      t.count = 2;
      t.index[0] = b, t.weight[0] = 1 - frac;
      t.index[1] = b + 1, t.weight[1] = frac;
      break;
    case GsMode::kCubic:
      t.count = 4;
      for (int j = 0; j < 4; ++j) {
        t.index[j] = b - 1 + j;
        t.weight[j] = CubicKernel(static_cast<double>(j - 1) - frac, kCubicA);
      }
      break;
  }
  for (int j = 0; j < t.count; ++j) t.index[j] = PadIndex(t.index[j], ax, a.padding);
  return true;
}

template <typename T>
T UndefinedValue() {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, Float16> ||
                std::is_same_v<T, BFloat16>)
    return FromDouble<T>(std::numeric_limits<double>::quiet_NaN());
  else
    return T{};
}

Status GridSample(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(GridSampleAttrs attrs, ops::ParseGridSample(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (!x.defined()) return ctx.Error("input 0 (X) must be a tensor");
  if (!grid.defined()) return ctx.Error("input 1 (grid) must be a tensor");
  const int rank = x.rank();
  if (rank < 3) return ctx.Error("X must have rank >= 3 (N, C, D1, ...), got " + ShapeToString(x.shape()));
  if (ctx.opset() < 20 && rank != 4)
    return ctx.Error("X must have rank 4 at opset " + std::to_string(ctx.opset()) + ", got " + ShapeToString(x.shape()));
  if (grid.rank() != rank)
    return ctx.Error("grid " + ShapeToString(grid.shape()) + " must have the rank of X " + ShapeToString(x.shape()));
  const size_t r = static_cast<size_t>(rank - 2);
  if (grid.dim(rank - 1) != static_cast<int64_t>(r))
    return ctx.Error("grid " + ShapeToString(grid.shape()) + " must end in " + std::to_string(r) +
                     " (one coordinate per spatial dim of X " + ShapeToString(x.shape()) + ")");
  if (grid.dim(0) != x.dim(0))
    return ctx.Error("X " + ShapeToString(x.shape()) + " and grid " + ShapeToString(grid.shape()) + " differ in batch");

  const int64_t batch = x.dim(0), channels = x.dim(1);
  Shape out_shape = {batch, channels};
  Shape out_sp(grid.shape().begin() + 1, grid.shape().end() - 1);
  out_shape.insert(out_shape.end(), out_sp.begin(), out_sp.end());
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, x.dtype(), out_shape));
  if (y.numel() == 0) return Status::Ok();

  std::vector<GsAxis> axes(r);
  for (size_t k = 0; k < r; ++k) {
    GsAxis& ax = axes[k];
    ax.len = x.dim(static_cast<int>(k) + 2);
    if (ax.len == 0 && attrs.padding != GsPadding::kZeros)
      return ctx.Error("cannot sample X " + ShapeToString(x.shape()) + " with an empty spatial dim under padding_mode " +
                       (attrs.padding == GsPadding::kBorder ? "border" : "reflection"));
    ax.lo = attrs.align_corners ? 0.0 : -0.5;
    ax.hi = attrs.align_corners ? static_cast<double>(ax.len) - 1 : static_cast<double>(ax.len) - 0.5;
  }
  if (attrs.mode != GsMode::kNearest && x.dtype() == DType::kString)
    return ctx.Unsupported("linear and cubic modes need a numeric X, got string");
  KILN_ASSIGN_OR_RETURN(std::vector<double> g, ReadFloats(ctx, grid, "grid"));

  const Shape in_sp(x.shape().begin() + 2, x.shape().end());
  const std::vector<int64_t> in_strides = ContiguousStrides(in_sp);
  const int64_t in_plane = DimProduct(in_sp, 0, r);
  const int64_t out_plane = DimProduct(out_sp, 0, r);
  std::vector<AxisTaps> taps(r);
  std::vector<int> k(r);

  // Calls f(defined, taps) for every (n, output point), then the kernel
  // loops the channels over the shared taps.
  auto for_each_point = [&](auto&& f) {
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t p = 0; p < out_plane; ++p) {
        const double* gv = &g[static_cast<size_t>((n * out_plane + p) * static_cast<int64_t>(r))];
        bool defined = true;
        for (size_t d = 0; d < r; ++d) defined = ComputeAxisTaps(attrs, axes[d], gv[r - 1 - d], taps[d]) && defined;
        f(n, p, defined);
      }
    }
  };

  if (attrs.mode == GsMode::kNearest) {
    // Nearest copies elements exactly (int64 beyond 2^53, strings, bools).
    return VisitAll(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x.data<T>();
      T* dst = y.data<T>();
      for_each_point([&](int64_t n, int64_t p, bool defined) {
        int64_t off = 0;
        for (size_t d = 0; d < r && off >= 0; ++d)
          off = taps[d].index[0] < 0 ? -1 : off + taps[d].index[0] * in_strides[d];
        for (int64_t c = 0; c < channels; ++c) {
          T& out = dst[(n * channels + c) * out_plane + p];
          if (!defined) out = UndefinedValue<T>();
          else if (off < 0) out = T{};  // zeros padding
          else out = src[(n * channels + c) * in_plane + off];
        }
      });
    });
  }

  return VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    for_each_point([&](int64_t n, int64_t p, bool defined) {
      for (int64_t c = 0; c < channels; ++c) {
        T& out = dst[(n * channels + c) * out_plane + p];
        if (!defined) {
          out = CastInterpolated<T>(std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        const T* plane = src + (n * channels + c) * in_plane;
        // Sum over the cartesian product of the axes' taps; a tap reading
        // zeros padding contributes nothing.
        double acc = 0;
        std::fill(k.begin(), k.end(), 0);
        for (bool done = false; !done;) {
          double w = 1;
          int64_t off = 0;
          for (size_t d = 0; d < r && off >= 0; ++d) {
            const int64_t i = taps[d].index[k[d]];
            w *= taps[d].weight[k[d]];
            off = i < 0 ? -1 : off + i * in_strides[d];
          }
          if (off >= 0) acc += w * ToDouble(plane[off]);
          done = true;
          for (size_t d = r; d-- > 0;) {
            if (++k[d] < taps[d].count) { done = false; break; }
            k[d] = 0;
          }
        }
        out = CastInterpolated<T>(acc);
      }
    });
  });
}

// ------------------------------------------------------------------ RoiAlign

// The bilinear taps of one sampling point.
struct Sample {
  bool inside = false;  // false: the point lies beyond the map and reads 0
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// Bilinear interpolation at (y, x) as in the Mask R-CNN / Detectron code the
// spec follows: points more than one pixel beyond the map read 0, the others
// are clamped onto it.
Sample BilinearSample(double y, double x, int64_t height, int64_t width) {
  Sample s;
  if (height == 0 || width == 0) return s;
  if (y < -1.0 || y > static_cast<double>(height) || x < -1.0 || x > static_cast<double>(width)) return s;
  s.inside = true;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = static_cast<double>(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = static_cast<double>(x_low);
  } else {
    x_high = x_low + 1;
  }
  const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
  const double hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = y_low * width + x_low, s.w[0] = hy * hx;
  s.pos[1] = y_low * width + x_high, s.w[1] = hy * lx;
  s.pos[2] = y_high * width + x_low, s.w[2] = ly * hx;
  s.pos[3] = y_high * width + x_high, s.w[3] = ly * lx;
  return s;
}

// Sampling points per RoI (all bins, one channel) beyond which kiln refuses
// the RoI rather than loop for hours: 2^26 is an adaptive 8192 x 8192 grid,
// which only absurd coordinates produce.
constexpr double kMaxSamplesPerRoi = double(1 << 26);

// One RoI in feature-map coordinates: its corner, bin size and sampling grid.
struct RoiGeometry {
  double start_h = 0, start_w = 0, bin_h = 0, bin_w = 0;
  int64_t grid_h = 0, grid_w = 0;
};

Result<RoiGeometry> ComputeRoiGeometry(runtime::KernelContext& ctx, const RoiAlignAttrs& a, const double* box, int64_t i) {
  RoiGeometry g;
  // half_pixel shifts the scaled box by -0.5 (pixel centers at integers);
  // output_half_pixel (opset 10 behaviour) does not. No rounding anywhere.
  const double offset = a.half_pixel ? 0.5 : 0.0;
  g.start_w = box[0] * a.spatial_scale - offset;
  g.start_h = box[1] * a.spatial_scale - offset;
  const double end_w = box[2] * a.spatial_scale - offset;
  const double end_h = box[3] * a.spatial_scale - offset;
  double roi_w = end_w - g.start_w, roi_h = end_h - g.start_h;
  if (!std::isfinite(g.start_w) || !std::isfinite(g.start_h) || !std::isfinite(roi_w) || !std::isfinite(roi_h))
    return ctx.Error("rois[" + std::to_string(i) + "] has a non-finite coordinate");
  if (!a.half_pixel) {
    // output_half_pixel forces a malformed (smaller than 1x1) RoI to 1x1.
    roi_w = std::max(roi_w, 1.0);
    roi_h = std::max(roi_h, 1.0);
  }
  const double oh = static_cast<double>(a.output_height), ow = static_cast<double>(a.output_width);
  g.bin_h = roi_h / oh;
  g.bin_w = roi_w / ow;
  // sampling_ratio 0: an adaptive ceil(roi size / output size) points per
  // bin along each axis (none for an empty or inverted half_pixel RoI).
  const double gh = a.sampling_ratio > 0 ? static_cast<double>(a.sampling_ratio) : std::max(0.0, std::ceil(roi_h / oh));
  const double gw = a.sampling_ratio > 0 ? static_cast<double>(a.sampling_ratio) : std::max(0.0, std::ceil(roi_w / ow));
  if (gh * gw * oh * ow > kMaxSamplesPerRoi)
    return ctx.Error("rois[" + std::to_string(i) + "] needs a " + std::to_string(static_cast<long long>(gh)) + " x " +
                     std::to_string(static_cast<long long>(gw)) + " sampling grid per bin, too large to sample");
  g.grid_h = static_cast<int64_t>(gh);
  g.grid_w = static_cast<int64_t>(gw);
  return g;
}

Status RoiAlign(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(RoiAlignAttrs a, ops::ParseRoiAlign(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bi = ctx.input(2);
  if (!x.defined() || !rois.defined() || !bi.defined()) return ctx.Error("inputs X, rois and batch_indices must be tensors");
  if (x.rank() != 4) return ctx.Error("X must have rank 4 (N, C, H, W), got " + ShapeToString(x.shape()));
  if (!DTypeIsFloat(x.dtype())) return ctx.Error(std::string("X must be a float tensor, got ") + DTypeName(x.dtype()));
  if (rois.rank() != 2 || rois.dim(1) != 4)
    return ctx.Error("rois must have shape (num_rois, 4), got " + ShapeToString(rois.shape()));
  if (rois.dtype() != x.dtype())
    return ctx.Error(std::string("rois has dtype ") + DTypeName(rois.dtype()) + ", X has " + DTypeName(x.dtype()));
  if (bi.dtype() != DType::kInt64) return ctx.Error(std::string("batch_indices must be int64, got ") + DTypeName(bi.dtype()));
  if (bi.rank() != 1 || bi.dim(0) != rois.dim(0))
    return ctx.Error("batch_indices " + ShapeToString(bi.shape()) + " must have shape (num_rois,) = (" +
                     std::to_string(rois.dim(0)) + ",)");
  const int64_t num_rois = rois.dim(0), batch = x.dim(0), channels = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t oh = a.output_height, ow = a.output_width;
  const int64_t* batch_index = bi.data<int64_t>();
  for (int64_t i = 0; i < num_rois; ++i)
    if (batch_index[i] < 0 || batch_index[i] >= batch)
      return ctx.Error("batch_indices[" + std::to_string(i) + "] = " + std::to_string(batch_index[i]) +
                       " is out of range for X with batch " + std::to_string(batch));
  KILN_ASSIGN_OR_RETURN(std::vector<double> box, ReadFloats(ctx, rois, "rois"));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, x.dtype(), {num_rois, channels, oh, ow}));
  if (y.numel() == 0) return Status::Ok();

  // The geometry of every RoI, checked before any work.
  std::vector<RoiGeometry> geo(static_cast<size_t>(num_rois));
  for (int64_t i = 0; i < num_rois; ++i) {
    KILN_ASSIGN_OR_RETURN(geo[static_cast<size_t>(i)], ComputeRoiGeometry(ctx, a, &box[static_cast<size_t>(4 * i)], i));
  }

  const int64_t in_plane = height * width, out_plane = oh * ow;
  return VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    for (int64_t i = 0; i < num_rois; ++i) {
      const RoiGeometry& r = geo[static_cast<size_t>(i)];
      const int64_t per_bin = r.grid_h * r.grid_w;
      // avg divides by the number of sampling points, those beyond the map
      // included (they read 0).
      const double count = static_cast<double>(std::max<int64_t>(per_bin, 1));
      for (int64_t c = 0; c < channels; ++c) {
        const T* plane = src + (batch_index[i] * channels + c) * in_plane;
        T* out = dst + (i * channels + c) * out_plane;
        for (int64_t ph = 0; ph < oh; ++ph) {
          for (int64_t pw = 0; pw < ow; ++pw) {
            // Sampling points of bin (ph, pw): (iy + 0.5) / grid_h of the way
            // through the bin, and likewise in x.
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < r.grid_h; ++iy) {
              const double yy = r.start_h + static_cast<double>(ph) * r.bin_h +
                                (static_cast<double>(iy) + 0.5) * r.bin_h / static_cast<double>(r.grid_h);
              for (int64_t ix = 0; ix < r.grid_w; ++ix) {
                const double xx = r.start_w + static_cast<double>(pw) * r.bin_w +
                                  (static_cast<double>(ix) + 0.5) * r.bin_w / static_cast<double>(r.grid_w);
                const Sample sm = BilinearSample(yy, xx, height, width);
                double v = 0;
                if (sm.inside)
                  for (int j = 0; j < 4; ++j) v += sm.w[j] * ToDouble(plane[sm.pos[j]]);
                if (!a.max_mode) acc += v;
                else if (first || v > acc || std::isnan(v)) acc = v;
                first = false;
              }
            }
            // An empty sampling grid gives 0 in both modes.
            out[ph * ow + pw] = FromDouble<T>(a.max_mode ? acc : acc / count);
          }
        }
      }
    }
  });
}

}  // namespace

void RegisterSamplingKernels(runtime::KernelRegistry& r) {
  r.Register("", "GridSample", GridSample);
  r.Register("", "RoiAlign", RoiAlign);
}

}  // namespace kiln::reference
