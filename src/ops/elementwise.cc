// Elementwise ops, unary part: math functions, activations, Clip; and the
// family's shared helpers (dtype classes). Binary ops live in
// elementwise_binary.cc, Cast/CastLike in elementwise_cast.cc.
#include "ops/elementwise.h"

#include <limits>

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

bool InDTypeClass(DType t, DTypeClass c) {
  const bool f = DTypeIsFloat(t), s = DTypeIsSignedInt(t), u = DTypeIsUnsignedInt(t);
  switch (c) {
    case DTypeClass::kFloat: return f;
    case DTypeClass::kSignedNumeric: return f || s;
    case DTypeClass::kNumeric: return f || s || u;
    case DTypeClass::kUnsigned: return u;
    case DTypeClass::kBool: return t == DType::kBool;
    case DTypeClass::kNumericOrBool: return f || s || u || t == DType::kBool;
    case DTypeClass::kAny: return t != DType::kUndefined;
  }
  return false;
}

Status CheckInputClass(const InferContext& ctx, size_t i, DTypeClass c) {
  if (!ctx.has_input(i)) return Status::Ok();
  const ir::TypeInfo& ti = ctx.input_type(i);
  if (ti.kind == ir::TypeInfo::Kind::kUnknown) return Status::Ok();
  if (ti.kind != ir::TypeInfo::Kind::kTensor)
    return ctx.Error("input " + std::to_string(i) + " ('" + ctx.node().inputs[i] + "') must be a tensor, got " + ti.ToString());
  if (ti.dtype == DType::kUndefined || InDTypeClass(ti.dtype, c)) return Status::Ok();
  return ctx.Error("input " + std::to_string(i) + " ('" + ctx.node().inputs[i] + "') has unsupported dtype " +
                   DTypeName(ti.dtype));
}

Status CheckSameDType(const InferContext& ctx, size_t i, size_t j) {
  DType a = ctx.input_dtype(i), b = ctx.input_dtype(j);
  if (a == DType::kUndefined || b == DType::kUndefined || a == b) return Status::Ok();
  return ctx.Error("inputs " + std::to_string(i) + " and " + std::to_string(j) + " must have the same dtype, got " +
                   DTypeName(a) + " and " + DTypeName(b));
}

Result<ActivationAttrs> ParseActivation(const ir::Node& node, int64_t opset) {
  ActivationAttrs a;
  const std::string& op = node.op_type;
  float def_alpha = 0, def_beta = 0;
  if (op == "LeakyRelu") def_alpha = 0.01f;
  else if (op == "Elu" || op == "Celu" || op == "ThresholdedRelu") def_alpha = 1.0f;
  else if (op == "HardSigmoid") { def_alpha = 0.2f; def_beta = 0.5f; }
  else if (op == "Selu") def_alpha = 1.67326319217681884765625f;
  KILN_ASSIGN_OR_RETURN(a.alpha, node.GetFloat("alpha", def_alpha));
  KILN_ASSIGN_OR_RETURN(a.beta, node.GetFloat("beta", def_beta));
  KILN_ASSIGN_OR_RETURN(a.gamma, node.GetFloat("gamma", 1.05070102214813232421875f));
  KILN_ASSIGN_OR_RETURN(a.bias, node.GetFloat("bias", 0.0f));
  KILN_ASSIGN_OR_RETURN(a.lambd, node.GetFloat("lambd", 0.5f));
  KILN_ASSIGN_OR_RETURN(int64_t pos, node.GetInt("detect_positive", 1));
  KILN_ASSIGN_OR_RETURN(int64_t neg, node.GetInt("detect_negative", 1));
  a.detect_positive = pos != 0;
  a.detect_negative = neg != 0;
  // Celu divides by alpha (max(0,x) + min(0, alpha*(exp(x/alpha)-1))).
  if (op == "Celu" && a.alpha == 0.0f) return node.Invalid("attribute 'alpha' must not be 0");
  return a;
}

Result<ClipAttrs> ParseClip(const ir::Node& node, int64_t opset) {
  ClipAttrs a;
  if (opset >= 11) return a;  // Clip-11: min and max became optional inputs
  if (node.FindAttr("min")) {
    KILN_ASSIGN_OR_RETURN(float v, node.GetFloat("min", 0.0f));
    a.min = v;
  }
  if (node.FindAttr("max")) {
    KILN_ASSIGN_OR_RETURN(float v, node.GetFloat("max", 0.0f));
    a.max = v;
  }
  return a;
}

namespace {

// Output 0: input 0's dims with dtype `out` (undefined: input 0's dtype).
InferFn UnaryInfer(DTypeClass cls, DType out = DType::kUndefined) {
  return [cls, out](InferContext& ctx) -> Status {
    KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
    KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 0, cls));
    if (ctx.num_outputs() < 1) return ctx.Error("expects 1 output");
    const ir::Dims* d = ctx.input_dims(0);
    DType t = out == DType::kUndefined ? ctx.input_dtype(0) : out;
    SetOutputDims(ctx, 0, t, d ? std::optional<ir::Dims>(*d) : std::nullopt);
    return Status::Ok();
  };
}

Status CheckScalarBound(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return Status::Ok();
  const ir::Dims* d = ctx.input_dims(i);
  if (!d) return Status::Ok();
  // Clip-11: min/max are scalars; a one-element 1-D tensor is accepted too.
  if (d->empty() || (d->size() == 1 && (!(*d)[0].known() || (*d)[0].value == 1))) return Status::Ok();
  return ctx.Error("input " + std::to_string(i) + " ('" + ctx.node().inputs[i] + "') must be a scalar, got shape " +
                   ir::DimsToString(*d));
}

Status InferClip(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, ctx.opset() >= 11 ? 3 : 1));
  KILN_RETURN_IF_ERROR(ParseClip(ctx.node(), ctx.opset()).status());
  // Clip-6 is float only; Clip-12 allows every numeric type.
  KILN_RETURN_IF_ERROR(CheckInputClass(ctx, 0, ctx.opset() >= 12 ? DTypeClass::kNumeric : DTypeClass::kFloat));
  for (size_t i = 1; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    KILN_RETURN_IF_ERROR(CheckSameDType(ctx, 0, i));
    KILN_RETURN_IF_ERROR(CheckScalarBound(ctx, i));
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

void RegisterElementwiseUnaryOps(OpRegistry& r) {
  using C = DTypeClass;
  struct U { const char* name; int64_t min_opset; C cls; DType out; };
  const U kUnary[] = {
      {"Abs", 1, C::kNumeric, DType::kUndefined},
      {"Neg", 1, C::kSignedNumeric, DType::kUndefined},
      {"Reciprocal", 1, C::kFloat, DType::kUndefined},
      {"Sqrt", 1, C::kFloat, DType::kUndefined},
      {"Exp", 1, C::kFloat, DType::kUndefined},
      {"Log", 1, C::kFloat, DType::kUndefined},
      {"Ceil", 1, C::kFloat, DType::kUndefined},
      {"Floor", 1, C::kFloat, DType::kUndefined},
      {"Round", 11, C::kFloat, DType::kUndefined},
      {"Sign", 9, C::kNumeric, DType::kUndefined},
      {"Sin", 7, C::kFloat, DType::kUndefined},
      {"Cos", 7, C::kFloat, DType::kUndefined},
      {"Tan", 7, C::kFloat, DType::kUndefined},
      {"Asin", 7, C::kFloat, DType::kUndefined},
      {"Acos", 7, C::kFloat, DType::kUndefined},
      {"Atan", 7, C::kFloat, DType::kUndefined},
      {"Sinh", 9, C::kFloat, DType::kUndefined},
      {"Cosh", 9, C::kFloat, DType::kUndefined},
      {"Asinh", 9, C::kFloat, DType::kUndefined},
      {"Acosh", 9, C::kFloat, DType::kUndefined},
      {"Atanh", 9, C::kFloat, DType::kUndefined},
      {"Erf", 9, C::kNumeric, DType::kUndefined},
      {"IsNaN", 9, C::kFloat, DType::kBool},
      {"IsInf", 10, C::kFloat, DType::kBool},
      {"Not", 1, C::kBool, DType::kUndefined},
      // Activations. Relu-14 added the signed integer types.
      {"Relu", 1, C::kSignedNumeric, DType::kUndefined},
      {"LeakyRelu", 1, C::kFloat, DType::kUndefined},
      {"Sigmoid", 1, C::kFloat, DType::kUndefined},
      {"HardSigmoid", 1, C::kFloat, DType::kUndefined},
      {"HardSwish", 14, C::kFloat, DType::kUndefined},
      {"Tanh", 1, C::kFloat, DType::kUndefined},
      {"Elu", 1, C::kFloat, DType::kUndefined},
      {"Selu", 1, C::kFloat, DType::kUndefined},
      {"Celu", 12, C::kFloat, DType::kUndefined},
      {"Softplus", 1, C::kFloat, DType::kUndefined},
      {"Softsign", 1, C::kFloat, DType::kUndefined},
      {"ThresholdedRelu", 10, C::kFloat, DType::kUndefined},
      {"Shrink", 9, C::kNumeric, DType::kUndefined},
      {"Mish", 18, C::kFloat, DType::kUndefined},
  };
  for (const U& u : kUnary) {
    const std::string op = u.name;
    InferFn base = UnaryInfer(u.cls, u.out);
    const bool has_attrs = op == "LeakyRelu" || op == "Elu" || op == "Celu" || op == "ThresholdedRelu" ||
                           op == "HardSigmoid" || op == "Selu" || op == "Shrink" || op == "IsInf";
    InferFn fn = base;
    if (has_attrs) {
      fn = [base](InferContext& ctx) -> Status {
        KILN_RETURN_IF_ERROR(ParseActivation(ctx.node(), ctx.opset()).status());
        return base(ctx);
      };
    }
    r.Register({"", op, u.min_opset, 1000, fn});
  }
  r.Register({"", "Clip", 1, 1000, InferClip});
}

void RegisterElementwiseOps(OpRegistry& r) {
  RegisterElementwiseUnaryOps(r);
  RegisterElementwiseBinaryOps(r);
  RegisterElementwiseCastOps(r);
}

}  // namespace kiln::ops
