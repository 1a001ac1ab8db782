// Reduction family: Reduce*, ArgMax/ArgMin, TopK, Softmax/LogSoftmax/Hardmax,
// CumSum. Attribute structs shared by shape inference (ops/reduction*.cc) and
// the reference kernels (providers/reference/reduction*.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };
// ReduceKind of a Reduce* op name; nullopt for other names.
std::optional<ReduceKind> ReduceKindOf(const std::string& op_type);

// Opset from which the op takes `axes` as its second input instead of an
// attribute: 13 for ReduceSum, 18 for the other Reduce* ops.
int64_t ReduceAxesInputOpset(ReduceKind kind);

struct ReduceAttrs {
  ReduceKind kind = ReduceKind::kSum;
  bool keepdims = true;
  bool noop_with_empty_axes = false;   // opset 13 (ReduceSum) / 18: empty axes means identity
  bool axes_from_input = false;        // axes come from input 1 (when present)
  std::vector<int64_t> axes_attr;      // raw attribute axes (before the input migration)
};
Result<ReduceAttrs> ParseReduce(const ir::Node& node, int64_t opset);

// What a reduction does for one concrete rank and axes list.
struct ReducePlan {
  bool identity = false;               // noop_with_empty_axes with empty axes: output = input
  std::vector<bool> reduced;           // per input axis
};
// `axes` are the raw axes (attribute or input values); errors name the node.
Result<ReducePlan> PlanReduce(const ir::Node& node, const ReduceAttrs& a, const std::vector<int64_t>& axes,
                              int64_t rank);
// Output shape of a planned reduction.
Shape ReducedShape(const ReducePlan& p, const Shape& in, bool keepdims);

// ArgMax / ArgMin (opset 1, 11: negative axis, 12: select_last_index).
struct ArgReduceAttrs {
  bool is_max = true;
  int64_t axis = 0;                    // raw
  bool keepdims = true;
  bool select_last_index = false;
};
Result<ArgReduceAttrs> ParseArgReduce(const ir::Node& node, int64_t opset);

// TopK: k is an attribute before opset 10, input 1 from opset 10; largest and
// sorted appear in opset 11.
struct TopKAttrs {
  int64_t axis = -1;                   // raw
  std::optional<int64_t> k_attr;       // opset 1
  bool largest = true;
  bool sorted = true;
};
Result<TopKAttrs> ParseTopK(const ir::Node& node, int64_t opset);

// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D
// [prod(dims[:axis]), prod(dims[axis:])] and the op runs along the second
// dimension; from opset 13 it runs along the single axis (default -1).
enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };
struct SoftmaxAttrs {
  SoftmaxKind kind = SoftmaxKind::kSoftmax;
  int64_t axis = -1;                   // raw
  bool coerce_2d = false;              // opset < 13
};
Result<SoftmaxAttrs> ParseSoftmax(const ir::Node& node, int64_t opset);

// Splits a shape around an axis for the softmax family: the op works on rows
// of `axis_dim` elements, `inner` apart, `outer` blocks. Axis is normalized.
struct AxisSplit {
  int64_t outer = 1, axis_dim = 1, inner = 1;
};
AxisSplit SplitAtAxis(const Shape& s, int64_t axis);
// The softmax-family split for a concrete shape (handles both behaviours).
Result<AxisSplit> SoftmaxSplit(const ir::Node& node, const SoftmaxAttrs& a, const Shape& s);

// CumSum (opset 11, 14): axis comes from input 1.
struct CumSumAttrs {
  bool exclusive = false;
  bool reverse = false;
};
Result<CumSumAttrs> ParseCumSum(const ir::Node& node, int64_t opset);

}  // namespace kiln::ops
