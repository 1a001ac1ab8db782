// GridSample (opsets 16-19: 4-D, bilinear/nearest/bicubic; 20+: N-D,
// linear/nearest/cubic) and RoiAlign (10: output_half_pixel; 16: the
// coordinate_transformation_mode attribute): typed attributes shared by shape
// inference and the kernels.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

struct GridSampleAttrs {
  enum class Mode { kLinear, kNearest, kCubic };
  enum class Padding { kZeros, kBorder, kReflection };
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};
Result<GridSampleAttrs> ParseGridSample(const ir::Node& node, int64_t opset);

struct RoiAlignAttrs {
  bool max_mode = false;      // mode "max" (else "avg")
  bool half_pixel = false;    // coordinate_transformation_mode "half_pixel" (default from opset 16)
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t sampling_ratio = 0; // 0: adaptive, ceil(roi size / output size)
  double spatial_scale = 1.0;
};
Result<RoiAlignAttrs> ParseRoiAlign(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
