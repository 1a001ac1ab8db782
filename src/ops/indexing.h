// Indexing ops (Gather*, Scatter*, OneHot, NonZero, Unique): typed
// attributes parsed once, shared by shape inference and the kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Gather / GatherElements: axis (not yet normalized: needs the data rank).
struct GatherAttrs {
  int64_t axis = 0;
};
Result<GatherAttrs> ParseGather(const ir::Node& node, int64_t opset);

// GatherND (opset 12 adds batch_dims).
struct GatherNDAttrs {
  int64_t batch_dims = 0;
};
Result<GatherNDAttrs> ParseGatherND(const ir::Node& node, int64_t opset);

// How Scatter* combines an update with the value already there. Opset 16
// adds add/mul, opset 18 max/min; "none" overwrites.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
const char* ScatterReductionName(ScatterReduction r);

// Scatter (opset 9-10), ScatterElements (axis + reduction), ScatterND (reduction only).
struct ScatterAttrs {
  int64_t axis = 0;
  ScatterReduction reduction = ScatterReduction::kNone;
};
Result<ScatterAttrs> ParseScatter(const ir::Node& node, int64_t opset);

// OneHot: axis in [-r-1, r] of the output rank r+1 (default -1, innermost).
struct OneHotAttrs {
  int64_t axis = -1;
};
Result<OneHotAttrs> ParseOneHot(const ir::Node& node, int64_t opset);

// Unique (opset 11): no axis means the flattened input.
struct UniqueAttrs {
  std::optional<int64_t> axis;
  bool sorted = true;
};
Result<UniqueAttrs> ParseUnique(const ir::Node& node, int64_t opset);

// The number of distinct elements (no axis) or distinct slices along axis
// (axis already normalized) of x. NaNs compare equal to each other (numpy).
Result<int64_t> CountUnique(const Tensor& x, std::optional<int64_t> axis);

}  // namespace kiln::ops
