// kiln's fused ops (domain com.kiln, opset 1, see fused.h): the activation
// attributes and shape inference. Inference delegates to the schema of the op
// each one extends (Conv, ConvTranspose, Gemm, MatMul), so a fused node can never infer a
// shape its unfused form would not.
#include "ops/fused.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/families.h"
#include "ops/infer_util.h"
#include "support/check.h"

namespace kiln::ops {
namespace {

// The ai.onnx opset whose Conv/Gemm/MatMul the fused ops extend: Gemm's C is
// optional and always broadcasts (opset 11+). The fused ops exist only in
// graphs kiln rewrote, so one fixed version is their meaning.
constexpr int64_t kInnerOpset = 13;

struct ActivationName {
  Activation kind;
  const char* name;
  size_t num_params;
};
constexpr ActivationName kActivations[] = {
    {Activation::kNone, "", 0},           {Activation::kRelu, "Relu", 0},
    {Activation::kClip, "Clip", 2},       {Activation::kLeakyRelu, "LeakyRelu", 1},
    {Activation::kSigmoid, "Sigmoid", 0}, {Activation::kSiLU, "SiLU", 0},
    {Activation::kHardSigmoid, "HardSigmoid", 2}, {Activation::kHardSwish, "HardSwish", 0},
    {Activation::kTanh, "Tanh", 0},
};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

Result<ActivationAttrs> ParseActivation(const ir::Node& node) { return ParseActivation(node, ""); }

Result<ActivationAttrs> ParseActivation(const ir::Node& node, const std::string& prefix) {
  const std::string act_attr = prefix + "activation", params_attr = prefix + "activation_params",
                    affine_attr = prefix + "post_affine";
  KILN_ASSIGN_OR_RETURN(std::string name, node.GetString(act_attr, ""));
  KILN_ASSIGN_OR_RETURN(std::vector<float> params, node.GetFloats(params_attr));
  const ActivationName* found = nullptr;
  for (const auto& a : kActivations)
    if (name == a.name) found = &a;
  if (!found) return node.Invalid("unknown " + act_attr + " '" + name + "'");
  ActivationAttrs a;
  a.kind = found->kind;
  KILN_ASSIGN_OR_RETURN(std::vector<float> affine, node.GetFloats(affine_attr));
  if (!affine.empty()) {
    if (affine.size() != 2) return node.Invalid(affine_attr + " takes [scale, shift], got " + std::to_string(affine.size()) + " values");
    a.post_scale = affine[0];
    a.post_shift = affine[1];
  }
  if (params.empty()) {
    // Absent parameters take the ONNX defaults of the op they stand for.
    if (a.kind == Activation::kClip) {
      a.alpha = -std::numeric_limits<float>::infinity();
      a.beta = std::numeric_limits<float>::infinity();
    }
    if (a.kind == Activation::kLeakyRelu) a.alpha = 0.01f;
    if (a.kind == Activation::kHardSigmoid) { a.alpha = 0.2f; a.beta = 0.5f; }
    return a;
  }
  if (params.size() != found->num_params)
    return node.Invalid(act_attr + " '" + name + "' takes " + std::to_string(found->num_params) + " " + params_attr + ", got " +
                        std::to_string(params.size()));
  if (params.size() > 0) a.alpha = params[0];
  if (params.size() > 1) a.beta = params[1];
  return a;
}

std::vector<ir::Attribute> ActivationToAttributes(const ActivationAttrs& a) { return ActivationToAttributes(a, ""); }

std::vector<ir::Attribute> ActivationToAttributes(const ActivationAttrs& a, const std::string& prefix) {
  std::vector<ir::Attribute> out;
  if (a.has_post_affine()) out.push_back(ir::Attribute::Floats(prefix + "post_affine", {a.post_scale, a.post_shift}));
  for (const auto& n : kActivations) {
    if (n.kind != a.kind || a.kind == Activation::kNone) continue;
    out.push_back(ir::Attribute::String(prefix + "activation", n.name));
    if (n.num_params == 1) out.push_back(ir::Attribute::Floats(prefix + "activation_params", {a.alpha}));
    if (n.num_params == 2) out.push_back(ir::Attribute::Floats(prefix + "activation_params", {a.alpha, a.beta}));
  }
  return out;
}

namespace {
double ApplyKind(const ActivationAttrs& a, double x) {
  switch (a.kind) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0 ? x : 0.0;
    case Activation::kClip: return std::min(std::max(x, static_cast<double>(a.alpha)), static_cast<double>(a.beta));
    case Activation::kLeakyRelu: return x < 0 ? static_cast<double>(a.alpha) * x : x;
    case Activation::kSigmoid: return Sigmoid(x);
    case Activation::kSiLU: return x * Sigmoid(x);
    case Activation::kHardSigmoid:
      return std::max(0.0, std::min(1.0, static_cast<double>(a.alpha) * x + static_cast<double>(a.beta)));
    case Activation::kHardSwish: return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
    case Activation::kTanh: return std::tanh(x);
  }
  return x;
}
}  // namespace

double ApplyActivation(const ActivationAttrs& a, double x) {
  const double y = ApplyKind(a, x);
  return a.has_post_affine() ? static_cast<double>(a.post_scale) * y + static_cast<double>(a.post_shift) : y;
}

namespace {

// Runs the inference of the unfused op on the node's first `n_inputs`
// inputs (the node without its fused extras) and copies its output type.
Status InferInner(InferContext& ctx, const InferFn& inner_infer, const char* op_type, size_t n_inputs) {
  ir::Node inner = ctx.node();
  inner.op_type = op_type;
  inner.domain.clear();
  if (inner.inputs.size() > n_inputs) inner.inputs.resize(n_inputs);
  inner.attrs.erase("activation");
  inner.attrs.erase("activation_params");
  std::vector<const ir::TypeInfo*> types;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inner.inputs.size(); ++i) {
    types.push_back(inner.HasInput(i) ? &ctx.input_type(i) : nullptr);
    values.push_back(i < ctx.input_values().size() ? ctx.input_values()[i] : nullptr);
  }
  InferContext ictx(inner, kInnerOpset, types, values);
  Status s = inner_infer(ictx);
  if (ictx.read_unknown_value()) ctx.note_unknown_value_read();
  if (!s.ok()) return s.WithContext(ctx.node().Describe());
  if (!ictx.outputs().empty()) ctx.set_output(0, ictx.outputs()[0]);
  return Status::Ok();
}

// Dims of the fused extra input `i` (Z, Bias) against the output: Z must have
// the output's shape exactly; Bias must broadcast to it without growing it.
Status CheckExtra(InferContext& ctx, size_t i, bool exact, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const DType dt = ctx.input_dtype(0);
  if (ctx.input_dtype(i) != DType::kUndefined && dt != DType::kUndefined && ctx.input_dtype(i) != dt)
    return ctx.Error(std::string(what) + " has dtype " + DTypeName(ctx.input_dtype(i)) + ", expected " + DTypeName(dt));
  const ir::Dims* e = ctx.input_dims(i);
  const ir::TypeInfo& out = ctx.outputs()[0];
  if (!e || out.kind != ir::TypeInfo::Kind::kTensor || !out.shape) return Status::Ok();
  const ir::Dims& y = *out.shape;
  if (exact ? e->size() != y.size() : e->size() > y.size())
    return ctx.Error(std::string(what) + " " + ir::DimsToString(*e) + " does not fit the output " + ir::DimsToString(y));
  for (size_t k = 0; k < e->size(); ++k) {
    const ir::Dim& d = (*e)[k];
    const ir::Dim& o = y[k + y.size() - e->size()];
    if (!d.known() || !o.known()) continue;
    if (d.value != o.value && (exact || d.value != 1))
      return ctx.Error(std::string(what) + " " + ir::DimsToString(*e) + " does not fit the output " + ir::DimsToString(y));
  }
  return Status::Ok();
}

const std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

}  // namespace

void RegisterFusedOps(OpRegistry& r) {
  // The unfused schemas are registered first (ops/register.cc), so their
  // inference functions can be copied here.
  const OpSchema* conv = r.Find("", "Conv", kInnerOpset);
  const OpSchema* gemm = r.Find("", "Gemm", kInnerOpset);
  const OpSchema* matmul = r.Find("", "MatMul", kInnerOpset);
  const OpSchema* deconv = r.Find("", "ConvTranspose", kInnerOpset);
  KILN_CHECK(conv && gemm && matmul && deconv);
  InferFn conv_infer = conv->infer, gemm_infer = gemm->infer, matmul_infer = matmul->infer, deconv_infer = deconv->infer;

  r.Register({kKilnDomain, "FusedConv", 1, 1, [conv_infer](InferContext& ctx) -> Status {
                KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 4));
                KILN_RETURN_IF_ERROR(ParseActivation(ctx.node()).status());
                KILN_RETURN_IF_ERROR(InferInner(ctx, conv_infer, "Conv", 3));
                return CheckExtra(ctx, 3, /*exact=*/true, "residual Z");
              }});
  r.Register({kKilnDomain, "FusedConvTranspose", 1, 1, [deconv_infer](InferContext& ctx) -> Status {
                KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
                KILN_RETURN_IF_ERROR(ParseActivation(ctx.node()).status());
                return InferInner(ctx, deconv_infer, "ConvTranspose", 3);
              }});
  r.Register({kKilnDomain, "FusedGemm", 1, 1, [gemm_infer](InferContext& ctx) -> Status {
                KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
                KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
                KILN_RETURN_IF_ERROR(ParseActivation(ctx.node()).status());
                return InferInner(ctx, gemm_infer, "Gemm", 3);
              }});
  r.Register({kKilnDomain, "FusedMatMul", 1, 1, [matmul_infer](InferContext& ctx) -> Status {
                KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
                KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
                KILN_RETURN_IF_ERROR(ParseActivation(ctx.node()).status());
                KILN_RETURN_IF_ERROR(InferInner(ctx, matmul_infer, "MatMul", 2));
                return CheckExtra(ctx, 2, /*exact=*/false, "Bias");
              }});
}

}  // namespace kiln::ops
