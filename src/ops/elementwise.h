// Elementwise ops: attribute structs shared by shape inference (ops/) and the
// kernels of every provider. Each Parse* reads a node's attributes once, with
// the defaults and opset rules of the spec, and fails naming the node.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/op_registry.h"

namespace kiln::ops {

// Attributes of the unary activations and IsInf; each op reads the fields it
// uses, filled with that op's spec defaults (LeakyRelu alpha 0.01, Elu alpha 1,
// HardSigmoid alpha 0.2 beta 0.5, Selu alpha/gamma, Shrink bias 0 lambd 0.5...).
struct ActivationAttrs {
  float alpha = 0;
  float beta = 0;
  float gamma = 0;
  float bias = 0;
  float lambd = 0;
  bool detect_positive = true;  // IsInf
  bool detect_negative = true;  // IsInf
};
Result<ActivationAttrs> ParseActivation(const ir::Node& node, int64_t opset);

// Clip bounds from attributes (opset < 11). From opset 11 they are optional
// inputs 1 and 2 and these stay unset.
struct ClipAttrs {
  std::optional<float> min;
  std::optional<float> max;
};
Result<ClipAttrs> ParseClip(const ir::Node& node, int64_t opset);

// Binary ops. Before opset 7 (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal,
// Greater, Less) broadcasting was opt-in with `broadcast`/`axis`: B's shape
// must be a contiguous run of A's, at `axis` (default: suffix). From opset 7
// broadcasting is multidirectional (numpy).
struct BinaryAttrs {
  bool legacy = false;            // opset < 7: limited broadcast rules below
  bool legacy_broadcast = false;  // `broadcast` attribute
  std::optional<int64_t> axis;    // `axis` attribute
  bool fmod = false;              // Mod
  bool shift_left = true;         // BitShift direction
};
Result<BinaryAttrs> ParseBinary(const ir::Node& node, int64_t opset);

// Legacy (opset < 7) broadcast: the shape B is read as, padded with 1s to
// A's rank so numpy rules then give A's shape. For the modern rules, or when
// B already has A's rank, returns b unchanged.
Result<ir::Dims> LegacyBroadcastDims(const ir::Node& node, const BinaryAttrs& a, const ir::Dims& a_dims,
                                     const ir::Dims& b_dims);
Result<Shape> LegacyBroadcastShape(const ir::Node& node, const BinaryAttrs& a, const Shape& a_shape,
                                   const Shape& b_shape);

// PRelu before opset 7 has no numpy broadcasting: a slope of one element is
// shared, a 1-D slope of X.shape[1] elements is per channel (axis 1). Returns
// the shape the slope is read as (padded with 1s); from opset 7 the slope is
// broadcast unidirectionally and is returned unchanged.
Result<ir::Dims> PReluSlopeDims(const ir::Node& node, int64_t opset, const ir::Dims& x, const ir::Dims& slope);
Result<Shape> PReluSlopeShape(const ir::Node& node, int64_t opset, const Shape& x, const Shape& slope);

// Cast (`to`) and CastLike (target dtype from input 1).
struct CastAttrs {
  DType to = DType::kUndefined;
};
Result<CastAttrs> ParseCast(const ir::Node& node, int64_t opset);

// Dtype classes of the spec's type constraints, for inference checks.
enum class DTypeClass {
  kFloat,          // float16, bfloat16, float, double
  kSignedNumeric,  // kFloat + int8..int64
  kNumeric,        // every number type (not bool, not string)
  kUnsigned,       // uint8..uint64
  kBool,
  kNumericOrBool,
  kAny,            // any tensor type, string included
};
bool InDTypeClass(DType t, DTypeClass c);
// Error naming the node unless input i's dtype is in the class (skipped when
// the input is absent or its dtype unknown).
Status CheckInputClass(const InferContext& ctx, size_t i, DTypeClass c);
// Error unless inputs i and j have the same dtype (when both are known).
Status CheckSameDType(const InferContext& ctx, size_t i, size_t j);

// Registration of the pieces of the family (one per file).
void RegisterElementwiseUnaryOps(OpRegistry& r);   // elementwise.cc
void RegisterElementwiseBinaryOps(OpRegistry& r);  // elementwise_binary.cc
void RegisterElementwiseCastOps(OpRegistry& r);    // elementwise_cast.cc

}  // namespace kiln::ops
