// Shared pieces of shape inference: broadcasting, axes, common patterns.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"
#include "ops/op_registry.h"

namespace kiln::ops {

// Multidirectional (numpy) broadcasting of two shapes. Unknown dims stay
// unknown unless the other side fixes them; incompatible known dims fail.
Result<ir::Dims> BroadcastDims(const ir::Dims& a, const ir::Dims& b);
// Broadcast of every present tensor input; nullopt when a rank is unknown.
Result<std::optional<ir::Dims>> BroadcastInputs(const InferContext& ctx, size_t first = 0, size_t last = SIZE_MAX);

// Normalizes axis in [-rank, rank) to [0, rank); errors name the node.
Result<int64_t> NormalizeAxis(const InferContext& ctx, int64_t axis, int64_t rank);
Result<int64_t> NormalizeAxis(const ir::Node& node, int64_t axis, int64_t rank);

// Output i = type of input j (dtype and dims).
void PropagateInput(InferContext& ctx, size_t input = 0, size_t output = 0);
// Output i has input j's dtype and the given dims.
void SetOutputDims(InferContext& ctx, size_t output, DType dtype, std::optional<ir::Dims> dims);

// Concrete shape of input i when every dim is known.
std::optional<Shape> KnownShape(const InferContext& ctx, size_t i);
// Converts dims to a concrete shape when all are known.
std::optional<Shape> ToShape(const ir::Dims& d);
// A dims vector of `rank` unknown dims.
ir::Dims UnknownDims(size_t rank);

// a * b + c for output dims, as an error naming the node when it overflows
// int64 (a fuzzed model can declare any dims and attributes).
Result<int64_t> CheckedDim(const InferContext& ctx, int64_t a, int64_t b, int64_t c = 0);

// Error unless input i has one of the given dtypes (skipped when unknown).
Status CheckDType(const InferContext& ctx, size_t i, std::initializer_list<DType> allowed);

}  // namespace kiln::ops
