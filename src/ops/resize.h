// Resize (opsets 10-19) and Upsample (7-9): attributes and the output
// geometry shared by shape inference and every provider's kernel, so the two
// can never disagree on an output length or on the scale a coordinate
// transformation uses.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

struct ResizeAttrs {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Coord {
    kHalfPixel,
    kHalfPixelSymmetric,  // opset 19
    kPytorchHalfPixel,
    kAlignCorners,
    kAsymmetric,
    kTfHalfPixelForNn,    // opset 11 only (removed at 13)
    kTfCropAndResize,
  };
  enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
  enum class KeepAspect { kStretch, kNotLarger, kNotSmaller };  // opset 18

  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0.0;
  bool antialias = false;               // opset 18; linear and cubic only
  KeepAspect keep_aspect = KeepAspect::kStretch;
  std::vector<int64_t> axes;            // opset 18, as written (may be negative); empty = all axes

  // Where the optional inputs are (-1 = this opset has no such input).
  int roi_input = -1;
  int scales_input = -1;
  int sizes_input = -1;
  std::optional<std::vector<float>> scales_attr;  // Upsample-7: scales is an attribute
};

// Resize: opset 10 (X, scales; asymmetric coordinates, floor nearest, like
// Upsample), 11 (roi, sizes, coordinate modes, cubic), 13 (roi/scales
// optional), 18 (axes, antialias, keep_aspect_ratio_policy), 19
// (half_pixel_symmetric).
Result<ResizeAttrs> ParseResize(const ir::Node& node, int64_t opset);
// Upsample-7 (scales attribute) and Upsample-9 (scales input).
Result<ResizeAttrs> ParseUpsample(const ir::Node& node, int64_t opset);

// One resized axis: what the coordinate transformation needs.
struct ResizeAxis {
  int64_t in = 0;
  int64_t out = 0;
  double scale = 1.0;            // the scale coordinates are transformed with
  double length_resized = 0.0;   // scale * in, unrounded (see resize.cc)
  double roi_start = 0.0;        // tf_crop_and_resize only, normalized
  double roi_end = 1.0;
  bool scale_is_out_over_in = false;  // from `sizes` (stretch): scale is exactly out / in
};

struct ResizeGeometry {
  Shape out_shape;
  std::vector<ResizeAxis> axes;  // one per input dim (untouched dims: scale 1)
};

// The concrete inputs that determine the geometry. Null or empty tensors
// mean "not given" (an empty-string input or an empty initializer).
struct ResizeInputs {
  const Tensor* roi = nullptr;
  const Tensor* scales = nullptr;
  const Tensor* sizes = nullptr;
  bool roi_unknown = false;  // inference only: roi is given but its value is not known yet
};

Result<ResizeGeometry> ComputeResizeGeometry(const ir::Node& node, const ResizeAttrs& attrs, const Shape& in,
                                             const ResizeInputs& inputs);

// The input-space coordinate of output index x along one axis (before any
// rounding or neighbour selection).
double ResizeSourceCoordinate(const ResizeAttrs& attrs, const ResizeAxis& axis, int64_t x);

}  // namespace kiln::ops
