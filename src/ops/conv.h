// Attributes of the windowed ops (Conv family here, the pools in pool.h)
// and the output geometry they share, parsed once and used by both shape
// inference and the kernels so the two can never disagree.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

// kernel_shape/strides/dilations/pads/auto_pad as written in the node.
// Empty vectors mean "absent"; ResolveSpatial fills the defaults.
struct SpatialAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // [b1..bn, e1..en]
};

// Reads the five attributes (wrong types or unknown auto_pad fail).
Result<SpatialAttrs> ParseSpatial(const ir::Node& node);
// Fills defaults for `n` spatial dims (kernel_shape must already be set) and
// checks lengths and ranges: kernel, strides, dilations >= 1, pads >= 0.
Status ResolveSpatial(const ir::Node& node, SpatialAttrs& a, size_t n);

// One spatial axis of a forward window op (Conv, pools). in < 0 = unknown,
// then out = -1 and the pads are those of the attribute (or -1 for SAME).
struct AxisGeometry {
  int64_t out = -1;
  int64_t pad_begin = 0;
  int64_t pad_end = 0;
};
// ceil_mode only matters for the pools (opset 10+): a window that would start
// inside the end padding is dropped, as PyTorch and onnxruntime do.
Result<AxisGeometry> ForwardAxis(const ir::Node& node, const SpatialAttrs& a, size_t axis, int64_t in, bool ceil_mode);
// The output dim of `axis` for an input dim not known at load time, in
// terms of its name: with a named input dim P, the output keeps P where the
// window preserves the size (stride 1, pads covering the dilated kernel)
// and is otherwise named by a canonical formula ("floor((P-1)/2)+1"), so
// two windows that give the same size from P, such as a 3x3 stride-2 conv
// padded by 1 and a 1x1 stride-2 one, give the same name. Passes may then
// prove two dynamic shapes equal (a residual Add of a ResNet-like block).
// An unnamed input dim, or a pool's ceil_mode with stride > 1, gives an
// unnamed, unknown dim. `a` must be resolved (ResolveSpatial).
ir::Dim SymbolicWindowDim(const ir::Dim& in, const SpatialAttrs& a, size_t axis, bool ceil_mode);
// Every axis; in_spatial entries < 0 are unknown.
Result<std::vector<AxisGeometry>> ForwardGeometry(const ir::Node& node, const SpatialAttrs& a,
                                                  const std::vector<int64_t>& in_spatial, bool ceil_mode);

struct ConvAttrs {
  SpatialAttrs sp;
  int64_t group = 1;
};
Result<ConvAttrs> ParseConv(const ir::Node& node, int64_t opset);

struct ConvTransposeAttrs {
  SpatialAttrs sp;
  int64_t group = 1;
  std::vector<int64_t> output_padding;  // empty: zeros
  std::vector<int64_t> output_shape;    // empty: computed from pads
};
Result<ConvTransposeAttrs> ParseConvTranspose(const ir::Node& node, int64_t opset);
// Output size and the pads (cropping) of one ConvTranspose axis; in < 0 = unknown.
Result<AxisGeometry> TransposeAxis(const ir::Node& node, const ConvTransposeAttrs& a, size_t axis, int64_t in);

}  // namespace kiln::ops
