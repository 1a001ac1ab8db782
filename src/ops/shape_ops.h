// Shape-only ops (Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Expand,
// Identity): attributes and the dims computations shared by shape inference
// and the reference kernels, so both always agree on the output shape.
// The dims functions work on partially known dims (load time) and on fully
// known ones (run time); the kernels call them with concrete shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Elements of an integer tensor (any int dtype, any strides) as int64. int64
// is read exactly (INT64_MAX is a common Slice end). Fails for other dtypes.
Result<std::vector<int64_t>> TensorInts(const ir::Node& node, const Tensor& t, const char* what);

struct ReshapeAttrs {
  bool allowzero = false;                     // opset 14
  std::optional<std::vector<int64_t>> shape;  // the `shape` attribute of opset 1-4
};
Result<ReshapeAttrs> ParseReshape(const ir::Node& node, int64_t opset);
// Output dims of Reshape: 0 copies the input dim (unless allowzero), -1 is
// inferred from the element count. Unknown dims stay unknown unless the
// unknown input dims cancel out against copied ones.
Result<ir::Dims> ReshapeDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& shape, bool allowzero);

struct FlattenAttrs {
  int64_t axis = 1;
};
Result<FlattenAttrs> ParseFlatten(const ir::Node& node, int64_t opset);
// [prod(in[:axis]), prod(in[axis:])]; axis in [-r, r] (negative from opset 11).
Result<ir::Dims> FlattenDims(const ir::Node& node, const ir::Dims& in, int64_t axis, int64_t opset);

// Squeeze/Unsqueeze: `axes` is an attribute before opset 13, an input from 13.
struct AxesAttrs {
  std::optional<std::vector<int64_t>> axes;
};
Result<AxesAttrs> ParseSqueeze(const ir::Node& node, int64_t opset);
Result<AxesAttrs> ParseUnsqueeze(const ir::Node& node, int64_t opset);
// Without axes every size-1 dim goes: nullopt when some dim is unknown.
Result<std::optional<ir::Dims>> SqueezeDims(const ir::Node& node, const ir::Dims& in,
                                            const std::optional<std::vector<int64_t>>& axes);
Result<ir::Dims> UnsqueezeDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& axes);

struct ShapeAttrs {
  int64_t start = 0;             // opset 15
  std::optional<int64_t> end;    // opset 15; none = rank
};
Result<ShapeAttrs> ParseShape(const ir::Node& node, int64_t opset);
// Clamped [start, end) of the dims Shape returns for an input of this rank.
std::pair<int64_t, int64_t> ShapeRange(const ShapeAttrs& a, int64_t rank);

// Expand: bidirectional (numpy) broadcast of the input dims and `shape`.
Result<ir::Dims> ExpandDims(const ir::Node& node, const ir::Dims& in, const std::vector<int64_t>& shape);

}  // namespace kiln::ops
