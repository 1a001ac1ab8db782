// Training family: attributes and shape inference of Adagrad, Adam, Momentum
// and Gradient (domain ai.onnx.preview.training, opset 1).
#include "ops/training.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<AdagradAttrs> ParseAdagrad(const ir::Node& node) {
  AdagradAttrs a;
  KILN_ASSIGN_OR_RETURN(a.decay_factor, node.GetFloat("decay_factor", 0.0f));
  KILN_ASSIGN_OR_RETURN(a.epsilon, node.GetFloat("epsilon", 1e-6f));
  KILN_ASSIGN_OR_RETURN(a.norm_coefficient, node.GetFloat("norm_coefficient", 0.0f));
  return a;
}

Result<AdamAttrs> ParseAdam(const ir::Node& node) {
  AdamAttrs a;
  KILN_ASSIGN_OR_RETURN(a.alpha, node.GetFloat("alpha", 0.9f));
  KILN_ASSIGN_OR_RETURN(a.beta, node.GetFloat("beta", 0.999f));
  KILN_ASSIGN_OR_RETURN(a.epsilon, node.GetFloat("epsilon", 1e-6f));
  KILN_ASSIGN_OR_RETURN(a.norm_coefficient, node.GetFloat("norm_coefficient", 0.0f));
  KILN_ASSIGN_OR_RETURN(a.norm_coefficient_post, node.GetFloat("norm_coefficient_post", 0.0f));
  return a;
}

Result<MomentumAttrs> ParseMomentum(const ir::Node& node) {
  MomentumAttrs a;
  for (const char* req : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!node.FindAttr(req)) return node.Invalid(std::string("attribute '") + req + "' is required");
  KILN_ASSIGN_OR_RETURN(a.alpha, node.GetFloat("alpha", 0.0f));
  KILN_ASSIGN_OR_RETURN(a.beta, node.GetFloat("beta", 0.0f));
  KILN_ASSIGN_OR_RETURN(a.norm_coefficient, node.GetFloat("norm_coefficient", 0.0f));
  KILN_ASSIGN_OR_RETURN(std::string mode, node.GetString("mode", "standard"));
  if (mode == "nesterov") a.nesterov = true;
  else if (mode != "standard") return node.Invalid("attribute 'mode' must be standard or nesterov, got '" + mode + "'");
  return a;
}

Result<size_t> OptimizerGroupSize(const ir::Node& node, size_t blocks) {
  const size_t in = node.inputs.size();
  if (in < 2 + blocks || (in - 2) % blocks != 0)
    return node.Invalid("takes R, T and " + std::to_string(blocks) + " equally long lists of tensors, got " +
                        std::to_string(in) + " inputs");
  const size_t n = (in - 2) / blocks;
  if (node.outputs.size() != n * (blocks - 1))
    return node.Invalid("has " + std::to_string(node.outputs.size()) + " outputs, expected " + std::to_string(n * (blocks - 1)));
  for (size_t i = 0; i < in; ++i)
    if (!node.HasInput(i)) return node.Invalid("input " + std::to_string(i) + " is missing");
  return n;
}

Result<GradientAttrs> ParseGradient(const ir::Node& node) {
  GradientAttrs a;
  if (!node.FindAttr("xs") || !node.FindAttr("y")) return node.Invalid("attributes 'xs' and 'y' are required");
  KILN_ASSIGN_OR_RETURN(a.xs, node.GetStrings("xs"));
  KILN_ASSIGN_OR_RETURN(a.zs, node.GetStrings("zs"));
  KILN_ASSIGN_OR_RETURN(a.y, node.GetString("y", ""));
  if (node.inputs.size() != a.xs.size() + a.zs.size())
    return node.Invalid("has " + std::to_string(node.inputs.size()) + " inputs, expected one per name of xs and zs (" +
                        std::to_string(a.xs.size() + a.zs.size()) + ")");
  if (node.outputs.size() != a.xs.size())
    return node.Invalid("has " + std::to_string(node.outputs.size()) + " outputs, expected one per name of xs (" +
                        std::to_string(a.xs.size()) + ")");
  return a;
}

namespace {

const std::initializer_list<DType> kFloats = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// R and T are scalars; X_new has the type of X, and each new state the type
// of its state (input block b >= 2 becomes output block b - 1; the gradients
// G of block 1 are only consumed).
Status InferOptimizer(InferContext& ctx, size_t blocks) {
  KILN_ASSIGN_OR_RETURN(size_t n, OptimizerGroupSize(ctx.node(), blocks));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloats));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt64}));
  for (size_t i = 0; i < 2; ++i)
    if (const ir::Dims* d = ctx.input_dims(i)) {
      int64_t count = 1;
      for (const auto& x : *d) count *= x.known() ? x.value : 1;
      if (count != 1) return ctx.Error(std::string(i == 0 ? "R" : "T") + " must be a scalar");
    }
  for (size_t i = 2; i < ctx.num_inputs(); ++i) KILN_RETURN_IF_ERROR(CheckDType(ctx, i, kFloats));
  for (size_t j = 0; j < n; ++j) {
    // Every tensor of group j has the shape of X_j.
    const ir::Dims* xd = ctx.input_dims(2 + j);
    for (size_t b = 1; b < blocks; ++b) {
      const ir::Dims* od = ctx.input_dims(2 + b * n + j);
      if (xd && od && xd->size() != od->size())
        return ctx.Error("input " + std::to_string(2 + b * n + j) + " must have the shape of input " + std::to_string(2 + j));
    }
    PropagateInput(ctx, 2 + j, j);
    for (size_t b = 2; b < blocks; ++b) PropagateInput(ctx, 2 + b * n + j, (b - 1) * n + j);
  }
  return Status::Ok();
}

Status InferGradient(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(GradientAttrs a, ParseGradient(ctx.node()));
  for (size_t i = 0; i < a.xs.size(); ++i) {
    KILN_RETURN_IF_ERROR(CheckDType(ctx, i, kFloats));
    PropagateInput(ctx, i, i);
  }
  return Status::Ok();
}

}  // namespace

void RegisterTrainingOps(OpRegistry& r) {
  r.Register({kTrainingDomain, "Adagrad", 1, 1000, [](InferContext& c) { return InferOptimizer(c, 3); }});
  r.Register({kTrainingDomain, "Adam", 1, 1000, [](InferContext& c) { return InferOptimizer(c, 4); }});
  r.Register({kTrainingDomain, "Momentum", 1, 1000, [](InferContext& c) { return InferOptimizer(c, 3); }});
  r.Register({kTrainingDomain, "Gradient", 1, 1000, InferGradient});
}

}  // namespace kiln::ops
