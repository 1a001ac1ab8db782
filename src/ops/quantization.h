// Quantization ops: attributes shared by shape inference and the kernels.
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// QuantizeLinear / DequantizeLinear. Opset 10 is per-tensor only; opset 13
// added per-axis scales along `axis` (default 1); opset 21 blocked scales
// (block_size) and QuantizeLinear's output_dtype; DequantizeLinear got
// output_dtype in opset 23.
struct QuantAttrs {
  int64_t axis = 1;
  int64_t block_size = 0;  // 0: per tensor / per axis; > 0: blocked along axis
  DType output_dtype = DType::kUndefined;  // unset: from the zero point (Q) or the scale (DQ)
};
Result<QuantAttrs> ParseQuant(const ir::Node& node, int64_t opset);

// How a scale (and zero point) of `scale_shape` applies to x: per tensor
// (one element), per axis (a 1-D tensor of x.shape[axis] elements) or, with
// block_size > 0, blocked (x's rank, ceil(x.shape[axis] / block_size) along
// axis, x's dims elsewhere). Returns the normalized axis, or -1 for per
// tensor; fails naming the node.
Result<int64_t> QuantAxis(const ir::Node& node, const QuantAttrs& a, const Shape& x, const Shape& scale);

}  // namespace kiln::ops
