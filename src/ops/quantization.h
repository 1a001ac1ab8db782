// Quantization ops: attributes shared by shape inference and the kernels.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// QuantizeLinear / DequantizeLinear. Opset 10 is per-tensor only; opset 13
// added per-axis scales along `axis` (default 1).
struct QuantAttrs {
  int64_t axis = 1;
};
Result<QuantAttrs> ParseQuant(const ir::Node& node, int64_t opset);

// How a scale (and zero point) of `scale_shape` applies to x: per tensor
// (one element) or per axis (a 1-D tensor of x.shape[axis] elements).
// Returns the normalized axis, or -1 for per tensor; fails naming the node.
Result<int64_t> QuantAxis(const ir::Node& node, const QuantAttrs& a, const Shape& x, const Shape& scale);

}  // namespace kiln::ops
