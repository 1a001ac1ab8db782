// Generator ops (Constant, ConstantOfShape, Range, EyeLike): typed
// attributes parsed once, shared by shape inference and the kernels.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Constant: the tensor its one value attribute describes (value,
// sparse_value densified by the importer, value_float(s), value_int(s),
// value_string(s)). Exactly one must be present.
Result<Tensor> ParseConstant(const ir::Node& node, int64_t opset);

// ConstantOfShape (9/20): a one-element tensor; float32 0 when absent.
struct ConstantOfShapeAttrs {
  Tensor value;
};
Result<ConstantOfShapeAttrs> ParseConstantOfShape(const ir::Node& node, int64_t opset);

// EyeLike (9): diagonal offset k, output dtype (input's when absent).
struct EyeLikeAttrs {
  int64_t k = 0;
  std::optional<DType> dtype;
};
Result<EyeLikeAttrs> ParseEyeLike(const ir::Node& node, int64_t opset);

// Range (11): max(ceil((limit - start) / delta), 0) elements. The three
// inputs are one-element tensors of the same dtype; delta must be non-zero.
Result<int64_t> RangeLength(const ir::Node& node, const Tensor& start, const Tensor& limit, const Tensor& delta);

}  // namespace kiln::ops
