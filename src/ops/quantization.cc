// Quantization ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear.
#include "ops/quantization.h"

#include "ops/elementwise.h"
#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<QuantAttrs> ParseQuant(const ir::Node& node, int64_t opset) {
  QuantAttrs a;
  if (opset >= 13) {
    KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", 1));
  }
  if (opset >= 21) {
    KILN_ASSIGN_OR_RETURN(a.block_size, node.GetInt("block_size", 0));
    if (a.block_size < 0) return node.Invalid("block_size " + std::to_string(a.block_size) + " must be >= 0");
  }
  const bool quantize = node.op_type == "QuantizeLinear";
  if (opset >= (quantize ? 21 : 23)) {
    KILN_ASSIGN_OR_RETURN(int64_t od, node.GetInt("output_dtype", 0));
    if (od != 0) {
      const DType t = static_cast<DType>(od);
      // Q: a quantized type (int4/float8 are not kiln dtypes); DQ: a float type.
      const bool ok = DTypeIsKnown(static_cast<int>(od)) &&
                      (quantize ? (t == DType::kUint8 || t == DType::kInt8 || t == DType::kUint16 || t == DType::kInt16)
                                : (t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16));
      if (!ok) return node.Invalid("output_dtype " + std::to_string(od) + " is not a valid output type");
      a.output_dtype = t;
    }
  }
  return a;
}

Result<int64_t> QuantAxis(const ir::Node& node, const QuantAttrs& a, const Shape& x, const Shape& scale) {
  int64_t n = 1;
  for (int64_t d : scale) n *= d;
  if (scale.size() <= 1 && n == 1) return -1;  // per tensor
  if (a.block_size > 0) {
    // Blocked (opset 21): scale[axis] = ceil(x[axis] / block_size), other dims as x.
    KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, a.axis, static_cast<int64_t>(x.size())));
    bool ok = scale.size() == x.size();
    for (size_t d = 0; ok && d < x.size(); ++d)
      ok = static_cast<int64_t>(d) == axis ? scale[d] == (x[d] + a.block_size - 1) / a.block_size : scale[d] == x[d];
    if (!ok)
      return node.Invalid("blocked scale shape " + ShapeToString(scale) + " does not fit x " + ShapeToString(x) + " with block_size " +
                          std::to_string(a.block_size) + " along axis " + std::to_string(axis));
    return axis;
  }
  if (scale.size() != 1)
    return node.Invalid("scale must be a scalar or a 1-D tensor, got shape " + ShapeToString(scale));
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(node, a.axis, static_cast<int64_t>(x.size())));
  if (x[static_cast<size_t>(axis)] != scale[0])
    return node.Invalid("scale has " + std::to_string(scale[0]) + " elements, axis " + std::to_string(axis) +
                        " of the input has " + std::to_string(x[static_cast<size_t>(axis)]));
  return axis;
}

namespace {

// Checks scale and zero point shapes against x when all are known.
Status CheckQuantParams(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(QuantAttrs a, ParseQuant(ctx.node(), ctx.opset()));
  auto x = KnownShape(ctx, 0);
  auto s = KnownShape(ctx, 1);
  if (x && s) {
    if (ctx.opset() < 13 && !s->empty() && !(s->size() == 1 && (*s)[0] == 1))
      return ctx.Error("scale must be a scalar before opset 13, got shape " + ShapeToString(*s));
    KILN_RETURN_IF_ERROR(QuantAxis(ctx.node(), a, *x, *s).status());
  }
  if (ctx.has_input(2)) {
    auto z = KnownShape(ctx, 2);
    if (s && z && *s != *z)
      return ctx.Error("zero point shape " + ShapeToString(*z) + " differs from scale shape " + ShapeToString(*s));
  }
  return Status::Ok();
}

Status InferQuantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("expects inputs x and y_scale");
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kBFloat16,
                                           DType::kFloat64}));
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 1, DTypeClass::kFloat));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, {DType::kUint8, DType::kInt8}));
  KILN_RETURN_IF_ERROR(CheckQuantParams(ctx));
  // The output has the zero point's type, else output_dtype (opset 21), else uint8.
  KILN_ASSIGN_OR_RETURN(QuantAttrs a, ParseQuant(ctx.node(), ctx.opset()));
  DType out = a.output_dtype != DType::kUndefined ? a.output_dtype : DType::kUint8;
  if (ctx.has_input(2)) {
    const DType zt = ctx.input_dtype(2);
    if (a.output_dtype != DType::kUndefined && zt != DType::kUndefined && zt != a.output_dtype)
      return ctx.Error(std::string("output_dtype ") + DTypeName(a.output_dtype) + " differs from the zero point's dtype " + DTypeName(zt));
    out = zt;
  }
  const ir::Dims* d = ctx.input_dims(0);
  SetOutputDims(ctx, 0, out, d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

Status InferDequantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ctx.Error("expects inputs x and x_scale");
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kUint8, DType::kInt8, DType::kInt32}));
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 1, DTypeClass::kFloat));
  KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 0, 2));
  KILN_RETURN_IF_ERROR(CheckQuantParams(ctx));
  // y has the scale's type (float32 until opset 19 added float16/bfloat16),
  // or output_dtype (opset 23).
  KILN_ASSIGN_OR_RETURN(QuantAttrs a, ParseQuant(ctx.node(), ctx.opset()));
  DType out = ctx.input_dtype(1) == DType::kUndefined ? DType::kFloat32 : ctx.input_dtype(1);
  if (a.output_dtype != DType::kUndefined) out = a.output_dtype;
  const ir::Dims* d = ctx.input_dims(0);
  SetOutputDims(ctx, 0, out, d ? std::optional<ir::Dims>(*d) : std::nullopt);
  return Status::Ok();
}

Status InferDynamicQuantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  if (!ctx.has_input(0)) return ctx.Error("expects input x");
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32}));
  const ir::Dims* d = ctx.input_dims(0);
  SetOutputDims(ctx, 0, DType::kUint8, d ? std::optional<ir::Dims>(*d) : std::nullopt);
  SetOutputDims(ctx, 1, DType::kFloat32, ir::Dims{});
  SetOutputDims(ctx, 2, DType::kUint8, ir::Dims{});
  return Status::Ok();
}

}  // namespace

void RegisterQuantizationOps(OpRegistry& r) {
  r.Register({"", "QuantizeLinear", 10, 1000, InferQuantize});
  r.Register({"", "DequantizeLinear", 10, 1000, InferDequantize});
  r.Register({"", "DynamicQuantizeLinear", 11, 1000, InferDynamicQuantize});
}

}  // namespace kiln::ops
