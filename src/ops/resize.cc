// Resize (opsets 10-19) and Upsample (7-9): attribute parsing, the output
// geometry and shape inference. The interpolation itself lives in the
// providers; everything that decides an output length or a coordinate is here.
#include "ops/resize.h"

#include <cmath>
#include <set>
#include <string>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {
namespace {

using Coord = ResizeAttrs::Coord;
using Mode = ResizeAttrs::Mode;

Result<Mode> ParseMode(const ir::Node& node, const std::string& s, bool allow_cubic) {
  if (s == "nearest") return Mode::kNearest;
  // Upsample-1 spelled it "bilinear"; later models still carry it.
  if (s == "linear" || s == "bilinear") return Mode::kLinear;
  if (s == "cubic" && allow_cubic) return Mode::kCubic;
  return node.Invalid("unsupported mode '" + s + "'" + (allow_cubic ? "" : " (this opset has nearest and linear)"));
}

Result<Coord> ParseCoord(const ir::Node& node, const std::string& s, int64_t opset) {
  if (s == "half_pixel") return Coord::kHalfPixel;
  if (s == "pytorch_half_pixel") return Coord::kPytorchHalfPixel;
  if (s == "align_corners") return Coord::kAlignCorners;
  if (s == "asymmetric") return Coord::kAsymmetric;
  if (s == "tf_crop_and_resize") return Coord::kTfCropAndResize;
  if (s == "tf_half_pixel_for_nn") {
    if (opset >= 13) return node.Invalid("coordinate_transformation_mode 'tf_half_pixel_for_nn' was removed in opset 13");
    return Coord::kTfHalfPixelForNn;
  }
  if (s == "half_pixel_symmetric") {
    if (opset < 19) return node.Invalid("coordinate_transformation_mode 'half_pixel_symmetric' needs opset 19");
    return Coord::kHalfPixelSymmetric;
  }
  return node.Invalid("unsupported coordinate_transformation_mode '" + s + "'");
}

Result<ResizeAttrs::Nearest> ParseNearest(const ir::Node& node, const std::string& s) {
  if (s == "round_prefer_floor") return ResizeAttrs::Nearest::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return ResizeAttrs::Nearest::kRoundPreferCeil;
  if (s == "floor") return ResizeAttrs::Nearest::kFloor;
  if (s == "ceil") return ResizeAttrs::Nearest::kCeil;
  return node.Invalid("unsupported nearest_mode '" + s + "'");
}

// Values of an optional input tensor as doubles; nullopt when not given
// (absent or empty, which opset 11-13 models use for "no scales"/"no roi").
std::optional<std::vector<double>> Values(const Tensor* t) {
  if (!t || !t->defined() || t->numel() == 0) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(t->numel()));
  for (int64_t i = 0; i < t->numel(); ++i) v[static_cast<size_t>(i)] = t->GetAsDouble(i);
  return v;
}

Result<std::vector<int64_t>> ResolveAxes(const ir::Node& node, const ResizeAttrs& attrs, int64_t rank) {
  std::vector<int64_t> axes;
  if (attrs.axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  std::set<int64_t> seen;
  for (int64_t a : attrs.axes) {
    KILN_ASSIGN_OR_RETURN(int64_t d, NormalizeAxis(node, a, rank));
    if (!seen.insert(d).second) return node.Invalid("axes has axis " + std::to_string(a) + " twice");
    axes.push_back(d);
  }
  return axes;
}

constexpr double kMaxDim = 4611686018427387904.0;  // 2^62: keeps floor() and int64 casts defined

}  // namespace

Result<ResizeAttrs> ParseResize(const ir::Node& node, int64_t opset) {
  ResizeAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "nearest"));
  KILN_ASSIGN_OR_RETURN(a.mode, ParseMode(node, mode, opset >= 11));
  if (opset < 11) {
    // Resize-10 has no coordinate modes: it maps x_resized / scale and takes
    // the floor for nearest, exactly as Upsample-9 did.
    a.coord = Coord::kAsymmetric;
    a.nearest = ResizeAttrs::Nearest::kFloor;
    a.scales_input = 1;
    return a;
  }
  a.roi_input = 1;
  a.scales_input = 2;
  a.sizes_input = 3;
  KILN_ASSIGN_OR_RETURN(std::string coord, node.GetString("coordinate_transformation_mode", "half_pixel"));
  KILN_ASSIGN_OR_RETURN(a.coord, ParseCoord(node, coord, opset));
  KILN_ASSIGN_OR_RETURN(std::string nearest, node.GetString("nearest_mode", "round_prefer_floor"));
  KILN_ASSIGN_OR_RETURN(a.nearest, ParseNearest(node, nearest));
  KILN_ASSIGN_OR_RETURN(float cubic_a, node.GetFloat("cubic_coeff_a", -0.75f));
  a.cubic_coeff_a = cubic_a;
  KILN_ASSIGN_OR_RETURN(int64_t exclude, node.GetInt("exclude_outside", 0));
  if (exclude != 0 && exclude != 1) return node.Invalid("exclude_outside must be 0 or 1, got " + std::to_string(exclude));
  a.exclude_outside = exclude == 1;
  KILN_ASSIGN_OR_RETURN(float extrapolation, node.GetFloat("extrapolation_value", 0.0f));
  a.extrapolation_value = extrapolation;
  if (opset >= 18) {
    KILN_ASSIGN_OR_RETURN(int64_t antialias, node.GetInt("antialias", 0));
    if (antialias != 0 && antialias != 1) return node.Invalid("antialias must be 0 or 1, got " + std::to_string(antialias));
    // The spec defines antialiasing for linear and cubic only; nearest ignores it.
    a.antialias = antialias == 1 && a.mode != Mode::kNearest;
    KILN_ASSIGN_OR_RETURN(a.axes, node.GetInts("axes", {}));
    KILN_ASSIGN_OR_RETURN(std::string keep, node.GetString("keep_aspect_ratio_policy", "stretch"));
    if (keep == "stretch") a.keep_aspect = ResizeAttrs::KeepAspect::kStretch;
    else if (keep == "not_larger") a.keep_aspect = ResizeAttrs::KeepAspect::kNotLarger;
    else if (keep == "not_smaller") a.keep_aspect = ResizeAttrs::KeepAspect::kNotSmaller;
    else return node.Invalid("unsupported keep_aspect_ratio_policy '" + keep + "'");
  }
  return a;
}

Result<ResizeAttrs> ParseUpsample(const ir::Node& node, int64_t opset) {
  ResizeAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "nearest"));
  KILN_ASSIGN_OR_RETURN(a.mode, ParseMode(node, mode, false));
  // Upsample maps x_resized / scale and floors for nearest (its own test data:
  // scale 3 repeats every element 3 times).
  a.coord = Coord::kAsymmetric;
  a.nearest = ResizeAttrs::Nearest::kFloor;
  if (opset >= 9) {
    a.scales_input = 1;
  } else {
    if (!node.FindAttr("scales")) return node.Invalid("attribute 'scales' is required at opset " + std::to_string(opset));
    KILN_ASSIGN_OR_RETURN(a.scales_attr, node.GetFloats("scales"));
  }
  return a;
}

Result<ResizeGeometry> ComputeResizeGeometry(const ir::Node& node, const ResizeAttrs& attrs, const Shape& in,
                                             const ResizeInputs& inputs) {
  const int64_t rank = static_cast<int64_t>(in.size());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ResolveAxes(node, attrs, rank));
  const size_t n = axes.size();

  std::optional<std::vector<double>> scales = Values(inputs.scales);
  if (attrs.scales_attr) scales = std::vector<double>(attrs.scales_attr->begin(), attrs.scales_attr->end());
  std::optional<std::vector<double>> sizes = Values(inputs.sizes);
  if (scales && sizes) return node.Invalid("only one of 'scales' and 'sizes' may be given");
  if (!scales && !sizes) return node.Invalid("one of 'scales' and 'sizes' must be given (and not empty)");

  ResizeGeometry g;
  g.out_shape = in;
  for (int64_t d : in) g.axes.push_back({d, d, 1.0, static_cast<double>(d), 0.0, 1.0});

  if (scales) {
    if (scales->size() != n)
      return node.Invalid("scales has " + std::to_string(scales->size()) + " values, expected " + std::to_string(n) +
                          " (one per resized axis)");
    for (size_t i = 0; i < n; ++i) {
      const double s = (*scales)[i];
      if (!std::isfinite(s) || s <= 0) return node.Invalid("scales[" + std::to_string(i) + "] = " + std::to_string(s) + " must be > 0");
      ResizeAxis& ax = g.axes[static_cast<size_t>(axes[i])];
      ax.scale = s;
      ax.length_resized = s * static_cast<double>(ax.in);
      if (ax.length_resized >= kMaxDim) return node.Invalid("scales[" + std::to_string(i) + "] makes the output too large");
      // floor(input_dimension * scale). The spec (13+) multiplies by
      // (roi_end - roi_start) for tf_crop_and_resize too, but ONNX's shape
      // inference, its reference and its test data all ignore roi here.
      ax.out = static_cast<int64_t>(std::floor(ax.length_resized));
    }
  } else {
    if (sizes->size() != n)
      return node.Invalid("sizes has " + std::to_string(sizes->size()) + " values, expected " + std::to_string(n) +
                          " (one per resized axis)");
    for (size_t i = 0; i < n; ++i) {
      if ((*sizes)[i] < 0) return node.Invalid("sizes[" + std::to_string(i) + "] is negative");
      if (in[static_cast<size_t>(axes[i])] == 0 && (*sizes)[i] != 0)
        return node.Invalid("cannot resize the empty axis " + std::to_string(axes[i]) + " to " +
                            std::to_string(static_cast<int64_t>((*sizes)[i])));
    }
    if (attrs.keep_aspect == ResizeAttrs::KeepAspect::kStretch) {
      for (size_t i = 0; i < n; ++i) {
        ResizeAxis& ax = g.axes[static_cast<size_t>(axes[i])];
        ax.out = static_cast<int64_t>((*sizes)[i]);
        ax.scale = ax.in > 0 ? static_cast<double>(ax.out) / static_cast<double>(ax.in) : 1.0;
        ax.scale_is_out_over_in = ax.in > 0 && ax.out > 0;
        ax.length_resized = static_cast<double>(ax.out);
      }
    } else {
      // Opset 18: one scale for all resized axes, the smallest (not_larger)
      // or largest (not_smaller) ratio; lengths round half up.
      double scale = 0;
      for (size_t i = 0; i < n; ++i) {
        const int64_t d_in = in[static_cast<size_t>(axes[i])];
        if (d_in == 0) return node.Invalid("keep_aspect_ratio_policy cannot resize the empty axis " + std::to_string(axes[i]));
        const double r = (*sizes)[i] / static_cast<double>(d_in);
        if (i == 0) scale = r;
        else scale = attrs.keep_aspect == ResizeAttrs::KeepAspect::kNotLarger ? std::min(scale, r) : std::max(scale, r);
      }
      for (size_t i = 0; i < n; ++i) {
        ResizeAxis& ax = g.axes[static_cast<size_t>(axes[i])];
        ax.scale = scale;
        ax.length_resized = scale * static_cast<double>(ax.in);
        ax.out = static_cast<int64_t>(ax.length_resized + 0.5);
      }
    }
  }

  if (attrs.coord == Coord::kTfCropAndResize && !inputs.roi_unknown) {
    std::optional<std::vector<double>> roi = Values(inputs.roi);
    if (!roi) return node.Invalid("coordinate_transformation_mode 'tf_crop_and_resize' needs a non-empty 'roi' input");
    if (roi->size() != 2 * n)
      return node.Invalid("roi has " + std::to_string(roi->size()) + " values, expected " + std::to_string(2 * n) +
                          " (starts then ends of each resized axis)");
    for (size_t i = 0; i < n; ++i) {
      const double s = (*roi)[i], e = (*roi)[n + i];
      if (!std::isfinite(s) || !std::isfinite(e)) return node.Invalid("roi values must be finite");
      g.axes[static_cast<size_t>(axes[i])].roi_start = s;
      g.axes[static_cast<size_t>(axes[i])].roi_end = e;
    }
  }
  for (size_t d = 0; d < in.size(); ++d) g.out_shape[d] = g.axes[d].out;
  return g;
}

double ResizeSourceCoordinate(const ResizeAttrs& attrs, const ResizeAxis& ax, int64_t x) {
  const double xr = static_cast<double>(x);
  const double s = ax.scale;
  const double in = static_cast<double>(ax.in);
  const double len = ax.length_resized;
  // v / scale. With a scale from `sizes`, v * in / out instead: one rounding
  // of the exact ratio, so a coordinate that is exactly a whole number or a
  // half stays exact and nearest_mode's ties and ceil/floor decide as the
  // spec's arithmetic does (dividing by the rounded out / in gave
  // 6.000000000000001 for 7.5 / (15/13) - 0.5 and ceil picked 7; fuzz seed
  // 1455, found by the ONNX Runtime third opinion).
  auto unscale = [&](double v) {
    return ax.scale_is_out_over_in ? v * in / static_cast<double>(ax.out) : v / s;
  };
  // Where a formula needs length_resized it is scale * length_original,
  // unrounded, as in ONNX's reference and test data (opset 13
  // test_resize_downsample_scales_linear_align_corners: 4 -> 2 at scale 0.6
  // divides by 2.4 - 1, giving 3.142857, not 4 as the rounded length would).
  switch (attrs.coord) {
    case Coord::kHalfPixel:
      return unscale(xr + 0.5) - 0.5;
    case Coord::kHalfPixelSymmetric: {
      // Opset 19: centre the implicit roi when the output length was rounded.
      const double adjustment = static_cast<double>(ax.out) / len;
      const double offset = in / 2 * (1 - adjustment);
      return offset + unscale(xr + 0.5) - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      // Spec: 0 for a length-1 output (ONNX's python reference says -0.5;
      // both give the same linear result, the only case its tests cover).
      return len > 1 ? unscale(xr + 0.5) - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return len == 1 ? 0.0 : xr * (in - 1) / (len - 1);
    case Coord::kAsymmetric:
      return unscale(xr);
    case Coord::kTfHalfPixelForNn:
      return unscale(xr + 0.5);
    case Coord::kTfCropAndResize: {
      const double span = (ax.roi_end - ax.roi_start) * (in - 1);
      const double start = ax.roi_start * (in - 1);
      return len == 1 ? start + span / 2 : start + xr * span / (len - 1);
    }
  }
  return 0.0;
}

namespace {

// Resolves the optional inputs for inference. Returns false when one that
// decides the output shape is present but its value is not known yet.
bool ResolveInputs(const InferContext& ctx, const ResizeAttrs& attrs, ResizeInputs* ri) {
  bool known = true;
  auto one = [&](int idx, const Tensor** out, bool shape_relevant) {
    if (idx < 0 || !ctx.has_input(static_cast<size_t>(idx))) return;
    const Tensor* v = ctx.input_value(static_cast<size_t>(idx));
    if (v) { *out = v; return; }
    const ir::Dims* d = ctx.input_dims(static_cast<size_t>(idx));
    if (d && d->size() == 1 && (*d)[0].known() && (*d)[0].value == 0) return;  // empty: not given
    if (shape_relevant) known = false;
    else ri->roi_unknown = true;
  };
  one(attrs.roi_input, &ri->roi, false);
  one(attrs.scales_input, &ri->scales, true);
  one(attrs.sizes_input, &ri->sizes, true);
  return known;
}

Status InferResized(InferContext& ctx, const ResizeAttrs& attrs) {
  if (attrs.scales_input >= 0) KILN_RETURN_IF_ERROR(CheckDType(ctx, static_cast<size_t>(attrs.scales_input), {DType::kFloat32}));
  if (attrs.roi_input >= 0)
    KILN_RETURN_IF_ERROR(CheckDType(ctx, static_cast<size_t>(attrs.roi_input), {DType::kFloat16, DType::kFloat32, DType::kFloat64}));
  if (attrs.sizes_input >= 0) KILN_RETURN_IF_ERROR(CheckDType(ctx, static_cast<size_t>(attrs.sizes_input), {DType::kInt64}));
  const DType dt = ctx.input_dtype(0);
  ResizeInputs ri;
  const bool known = ResolveInputs(ctx, attrs, &ri);
  const ir::Dims* xd = ctx.input_dims(0);
  if (!xd) {
    ctx.set_output(0, dt, std::nullopt);
    return Status::Ok();
  }
  if (std::optional<Shape> in = ToShape(*xd); in && known) {
    KILN_ASSIGN_OR_RETURN(ResizeGeometry g, ComputeResizeGeometry(ctx.node(), attrs, *in, ri));
    ctx.set_output(0, dt, g.out_shape);
    return Status::Ok();
  }
  // Partly known: untouched axes keep their dims; resized ones are known
  // when the scale and the input dim are, or when sizes are (stretch).
  const int64_t rank = static_cast<int64_t>(xd->size());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ResolveAxes(ctx.node(), attrs, rank));
  ir::Dims out = *xd;
  for (int64_t d : axes) out[static_cast<size_t>(d)] = ir::Dim{};
  std::optional<std::vector<double>> scales = Values(ri.scales);
  if (attrs.scales_attr) scales = std::vector<double>(attrs.scales_attr->begin(), attrs.scales_attr->end());
  std::optional<std::vector<double>> sizes = Values(ri.sizes);
  if (known && scales && !sizes && scales->size() == axes.size()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      const ir::Dim& din = (*xd)[static_cast<size_t>(axes[i])];
      const double len = (*scales)[i] * static_cast<double>(din.value);
      if (din.known() && (*scales)[i] > 0 && len < kMaxDim) out[static_cast<size_t>(axes[i])] = ir::Dim::Known(static_cast<int64_t>(std::floor(len)));
    }
  } else if (known && sizes && !scales && sizes->size() == axes.size() &&
             attrs.keep_aspect == ResizeAttrs::KeepAspect::kStretch) {
    for (size_t i = 0; i < axes.size(); ++i)
      if ((*sizes)[i] >= 0) out[static_cast<size_t>(axes[i])] = ir::Dim::Known(static_cast<int64_t>((*sizes)[i]));
  }
  ctx.set_output(0, dt, out);
  return Status::Ok();
}

Status InferResize(InferContext& ctx) {
  if (ctx.opset() < 11) KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  else if (ctx.opset() < 13) KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 4));
  else KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 4));
  if (!ctx.has_input(0)) return ctx.Error("input 0 (X) is required");
  KILN_ASSIGN_OR_RETURN(ResizeAttrs attrs, ParseResize(ctx.node(), ctx.opset()));
  return InferResized(ctx, attrs);
}

Status InferUpsample(InferContext& ctx) {
  if (ctx.opset() >= 9) KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  else KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  if (!ctx.has_input(0)) return ctx.Error("input 0 (X) is required");
  KILN_ASSIGN_OR_RETURN(ResizeAttrs attrs, ParseUpsample(ctx.node(), ctx.opset()));
  return InferResized(ctx, attrs);
}

}  // namespace

void RegisterResizeOps(OpRegistry& r) {
  r.Register({"", "Resize", 10, 1000, InferResize});
  // Upsample-10 is the deprecated Upsample-9, still found in old exports.
  r.Register({"", "Upsample", 7, 10, InferUpsample});
}

}  // namespace kiln::ops
