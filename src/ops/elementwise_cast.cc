// Cast and CastLike: attributes and shape inference.
#include <string>

#include "ops/elementwise.h"
#include "ops/infer_util.h"

namespace kiln::ops {
namespace {

// Cast-1 named the target type as a string ("FLOAT"); Cast-6 made it the
// TensorProto.DataType number.
DType DTypeFromOnnxName(const std::string& s) {
  struct N { const char* name; DType t; };
  static const N kNames[] = {
      {"FLOAT", DType::kFloat32}, {"UINT8", DType::kUint8},   {"INT8", DType::kInt8},       {"UINT16", DType::kUint16},
      {"INT16", DType::kInt16},   {"INT32", DType::kInt32},   {"INT64", DType::kInt64},     {"STRING", DType::kString},
      {"BOOL", DType::kBool},     {"FLOAT16", DType::kFloat16}, {"DOUBLE", DType::kFloat64}, {"UINT32", DType::kUint32},
      {"UINT64", DType::kUint64}, {"BFLOAT16", DType::kBFloat16},
  };
  for (const N& n : kNames)
    if (s == n.name) return n.t;
  return DType::kUndefined;
}

}  // namespace

Result<CastAttrs> ParseCast(const ir::Node& node, int64_t opset) {
  CastAttrs a;
  const ir::Attribute* to = node.FindAttr("to");
  if (!to) return node.Invalid("missing required attribute 'to'");
  if (to->type == ir::Attribute::Type::kString) {
    a.to = DTypeFromOnnxName(to->s);
    if (a.to == DType::kUndefined) return node.Invalid("attribute 'to' names an unknown type '" + to->s + "'");
    return a;
  }
  KILN_ASSIGN_OR_RETURN(int64_t t, node.GetInt("to", 0));
  if (t > 0 && t < 1000 && DTypeIsKnown(static_cast<int>(t))) a.to = static_cast<DType>(t);
  if (a.to == DType::kUndefined)
    return node.Error(StatusCode::kUnimplemented, "attribute 'to' = " + std::to_string(t) + " is not a supported dtype");
  // bfloat16 joined Cast's types in opset 13.
  if (a.to == DType::kBFloat16 && opset < 13) return node.Invalid("casting to bfloat16 needs opset 13 or newer");
  return a;
}

namespace {

Status CheckCastable(const InferContext& ctx, size_t i) {
  const ir::TypeInfo& t = ctx.input_type(i);
  if (t.kind != ir::TypeInfo::Kind::kTensor && t.kind != ir::TypeInfo::Kind::kUnknown)
    return ctx.Error("input " + std::to_string(i) + " must be a tensor, got " + t.ToString());
  return Status::Ok();
}

Status InferCast(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  if (!ctx.has_input(0)) return ctx.Error("expects 1 input");
  KILN_RETURN_IF_ERROR(CheckCastable(ctx, 0));
  KILN_ASSIGN_OR_RETURN(CastAttrs a, ParseCast(ctx.node(), ctx.opset()));
  const ir::Dims* d = ctx.input_dims(0);
  SetOutputDims(ctx, 0, a.to, d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

Status InferCastLike(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 2));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("expects 2 inputs");
  KILN_RETURN_IF_ERROR(CheckCastable(ctx, 0));
  KILN_RETURN_IF_ERROR(CheckCastable(ctx, 1));
  const ir::Dims* d = ctx.input_dims(0);
  SetOutputDims(ctx, 0, ctx.input_dtype(1), d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

}  // namespace

void RegisterElementwiseCastOps(OpRegistry& r) {
  r.Register({"", "Cast", 1, 1000, InferCast});
  r.Register({"", "CastLike", 15, 1000, InferCastLike});
}

}  // namespace kiln::ops
