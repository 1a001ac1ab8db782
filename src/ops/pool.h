// Attributes of the pooling ops (MaxPool, AveragePool, LpPool, MaxUnpool and
// the Global* forms), shared by shape inference and the kernels. The window
// geometry itself is that of Conv (ops/conv.h).
#pragma once

#include <cstdint>

#include "ir/graph.h"
#include "kiln/status.h"
#include "ops/conv.h"

namespace kiln::ops {

struct PoolAttrs {
  SpatialAttrs sp;                 // kernel_shape is required for every windowed pool
  bool ceil_mode = false;          // opset 10+
  bool count_include_pad = false;  // AveragePool opset 7+
  int64_t storage_order = 0;       // MaxPool opset 8+: 0 row major, 1 column major Indices
  double p = 2.0;                  // LpPool / GlobalLpPool: float in opset 1, int from opset 2
};

// Parses the attributes of any pool op; windowed ones need kernel_shape.
Result<PoolAttrs> ParsePool(const ir::Node& node, int64_t opset);
// Parses and resolves the attributes for `n` spatial dims and computes the
// per-axis geometry (in_spatial entries < 0 unknown).
Result<std::vector<AxisGeometry>> PoolGeometry(const ir::Node& node, PoolAttrs& a, const std::vector<int64_t>& in_spatial);

}  // namespace kiln::ops
