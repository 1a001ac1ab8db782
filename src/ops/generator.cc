// Generator ops: attributes and shape inference of Constant,
// ConstantOfShape, Range and EyeLike.
#include "ops/generator.h"

#include <cmath>

#include "ops/families.h"
#include "ops/infer_util.h"
#include "support/dtype_dispatch.h"

namespace kiln::ops {

Result<Tensor> ParseConstant(const ir::Node& node, int64_t opset) {
  static const char* const kNames[] = {"value", "sparse_value", "value_float", "value_floats",
                                       "value_int", "value_ints", "value_string", "value_strings"};
  const ir::Attribute* found = nullptr;
  for (const char* n : kNames) {
    const ir::Attribute* a = node.FindAttr(n);
    if (!a) continue;
    if (found) return node.Invalid("has both '" + found->name + "' and '" + a->name + "'; exactly one value attribute is allowed");
    found = a;
  }
  if (!found) return node.Invalid("has no value attribute (value, sparse_value, value_float(s), value_int(s), value_string(s))");
  const std::string& n = found->name;
  using T = ir::Attribute::Type;
  auto wrong = [&](const char* want) {
    return node.Invalid("attribute '" + n + "' has type " + ir::AttributeTypeName(found->type) + ", expected " + want);
  };
  if (n == "value") {
    if (found->type != T::kTensor) return wrong("tensor");
    if (!found->t.defined()) return node.Invalid("attribute 'value' holds no tensor");
    return found->t;
  }
  if (n == "sparse_value") {
    // The importer densifies the SparseTensorProto into a.t (opset 11).
    if (found->type != T::kSparseTensor && found->type != T::kTensor) return wrong("sparse tensor");
    if (!found->t.defined()) return node.Invalid("attribute 'sparse_value' holds no tensor");
    return found->t;
  }
  // value_* forms: opset 12.
  if (n == "value_float") {
    if (found->type != T::kFloat) return wrong("float");
    return Tensor::FromVector<float>(DType::kFloat32, {}, {found->f});
  }
  if (n == "value_floats") {
    if (found->type != T::kFloats) return wrong("floats");
    return Tensor::FromVector<float>(DType::kFloat32, {static_cast<int64_t>(found->floats.size())}, found->floats);
  }
  if (n == "value_int") {
    if (found->type != T::kInt) return wrong("int");
    return Tensor::FromVector<int64_t>(DType::kInt64, {}, {found->i});
  }
  if (n == "value_ints") {
    if (found->type != T::kInts) return wrong("ints");
    return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(found->ints.size())}, found->ints);
  }
  if (n == "value_string") {
    if (found->type != T::kString) return wrong("string");
    return Tensor::FromVector<std::string>(DType::kString, {}, {found->s});
  }
  if (found->type != T::kStrings) return wrong("strings");
  return Tensor::FromVector<std::string>(DType::kString, {static_cast<int64_t>(found->strings.size())}, found->strings);
}

Result<ConstantOfShapeAttrs> ParseConstantOfShape(const ir::Node& node, int64_t opset) {
  ConstantOfShapeAttrs a;
  if (!node.FindAttr("value")) {
    a.value = Tensor::FromVector<float>(DType::kFloat32, {1}, {0.0f});
    return a;
  }
  KILN_ASSIGN_OR_RETURN(a.value, node.GetTensor("value"));
  if (a.value.numel() != 1)
    return node.Invalid("attribute 'value' must hold exactly one element, got " + a.value.Describe());
  if (a.value.dtype() == DType::kString) return node.Invalid("attribute 'value' cannot be a string tensor");
  return a;
}

Result<EyeLikeAttrs> ParseEyeLike(const ir::Node& node, int64_t opset) {
  EyeLikeAttrs a;
  KILN_ASSIGN_OR_RETURN(a.k, node.GetInt("k", 0));
  if (node.FindAttr("dtype")) {
    KILN_ASSIGN_OR_RETURN(int64_t dt, node.GetInt("dtype", 0));
    if (!DTypeIsKnown(static_cast<int>(dt)) || dt == static_cast<int64_t>(DType::kString))
      return node.Invalid("attribute 'dtype' = " + std::to_string(dt) + " is not a supported numeric dtype");
    a.dtype = static_cast<DType>(dt);
  }
  return a;
}

Result<int64_t> RangeLength(const ir::Node& node, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  for (const Tensor* t : {&start, &limit, &delta})
    if (t->numel() != 1) return node.Invalid("start, limit and delta must be scalars, got " + t->Describe());
  const DType dt = start.dtype();
  if (limit.dtype() != dt || delta.dtype() != dt)
    return node.Invalid("start, limit and delta must have the same dtype");
  if (DTypeIsSignedInt(dt) && dt != DType::kInt8) {
    // Exact integer ceil division: floats would lose int64 precision.
    auto get = [](const Tensor& t) -> __int128 {
      switch (t.dtype()) {
        case DType::kInt16: return t.data<int16_t>()[0];
        case DType::kInt32: return t.data<int32_t>()[0];
        default: return t.data<int64_t>()[0];
      }
    };
    const __int128 s = get(start), l = get(limit), d = get(delta);
    if (d == 0) return node.Invalid("delta must not be zero");
    const __int128 diff = l - s;
    __int128 q = diff / d;
    if (q * d != diff && ((diff < 0) == (d < 0))) ++q;  // round toward +inf
    if (q < 0) q = 0;
    if (q > (__int128{1} << 62)) return node.Error(StatusCode::kResourceExhausted, "range is too long");
    return static_cast<int64_t>(q);
  }
  if (dt != DType::kFloat32 && dt != DType::kFloat64)
    return node.Invalid(std::string("Range does not support dtype ") + DTypeName(dt));
  // In the inputs' own precision, as the opset 11 function body computes it.
  double n;
  if (dt == DType::kFloat32) {
    const float s = start.data<float>()[0], l = limit.data<float>()[0], d = delta.data<float>()[0];
    if (d == 0) return node.Invalid("delta must not be zero");
    n = std::ceil(static_cast<double>((l - s) / d));
  } else {
    const double s = start.data<double>()[0], l = limit.data<double>()[0], d = delta.data<double>()[0];
    if (d == 0) return node.Invalid("delta must not be zero");
    n = std::ceil((l - s) / d);
  }
  if (std::isnan(n)) return node.Invalid("start, limit and delta must be finite");
  if (n <= 0) return 0;
  if (n > 4.0e18) return node.Error(StatusCode::kResourceExhausted, "range is too long");
  return static_cast<int64_t>(n);
}

namespace {

Status InferConstant(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(0, 0));
  KILN_ASSIGN_OR_RETURN(Tensor v, ParseConstant(ctx.node(), ctx.opset()));
  ctx.set_output(0, v.dtype(), v.shape());
  return Status::Ok();
}

Status InferConstantOfShape(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kInt64}));
  KILN_ASSIGN_OR_RETURN(ConstantOfShapeAttrs a, ParseConstantOfShape(ctx.node(), ctx.opset()));
  const DType dt = a.value.dtype();
  const ir::Dims* in = ctx.input_dims(0);
  if (in && in->size() != 1) return ctx.Error("input 0 (shape) must be 1-D, got " + ir::DimsToString(*in));
  if (auto shape = ctx.input_ints(0)) {
    for (int64_t d : *shape)
      if (d < 0) return ctx.Error("shape " + ShapeToString(*shape) + " has a negative dimension");
    ctx.set_output(0, dt, *shape);
    return Status::Ok();
  }
  if (in && (*in)[0].known()) ctx.set_output(0, dt, UnknownDims(static_cast<size_t>((*in)[0].value)));
  else ctx.set_output(0, dt, std::nullopt);
  return Status::Ok();
}

Status InferRange(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64}));
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input_dtype(i) != DType::kUndefined && ctx.input_dtype(0) != DType::kUndefined && ctx.input_dtype(i) != ctx.input_dtype(0))
      return ctx.Error("start, limit and delta must have the same dtype");
  ir::Dim n;
  const Tensor *s = ctx.input_value(0), *l = ctx.input_value(1), *d = ctx.input_value(2);
  if (s && l && d && s->defined() && l->defined() && d->defined()) {
    KILN_ASSIGN_OR_RETURN(int64_t len, RangeLength(ctx.node(), *s, *l, *d));
    n = ir::Dim::Known(len);
  }
  ctx.set_output(0, ctx.input_dtype(0), ir::Dims{n});
  return Status::Ok();
}

Status InferEyeLike(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_ASSIGN_OR_RETURN(EyeLikeAttrs a, ParseEyeLike(ctx.node(), ctx.opset()));
  const ir::Dims* in = ctx.input_dims(0);
  if (in && in->size() != 2) return ctx.Error("input 0 must be 2-D, got " + ir::DimsToString(*in));
  const DType dt = a.dtype ? *a.dtype : ctx.input_dtype(0);
  if (dt == DType::kString) return ctx.Error("EyeLike does not support string tensors");
  ctx.set_output(0, dt, in ? std::optional<ir::Dims>(*in) : std::nullopt);
  return Status::Ok();
}

}  // namespace

void RegisterGeneratorOps(OpRegistry& r) {
  // Constant 1/9/11/12/13: 11 adds sparse_value, 12 the value_* forms.
  r.Register({"", "Constant", 1, 1000, InferConstant});
  r.Register({"", "ConstantOfShape", 9, 1000, InferConstantOfShape});
  r.Register({"", "Range", 11, 1000, InferRange});
  r.Register({"", "EyeLike", 9, 1000, InferEyeLike});
}

}  // namespace kiln::ops
