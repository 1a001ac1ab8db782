// Normalization ops: BatchNormalization, InstanceNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization. Attributes and shape
// inference.
#include "ops/normalization.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<BatchNormAttrs> ParseBatchNorm(const ir::Node& node, int64_t opset) {
  BatchNormAttrs a;
  KILN_ASSIGN_OR_RETURN(float eps, node.GetFloat("epsilon", 1e-5f));
  KILN_ASSIGN_OR_RETURN(float mom, node.GetFloat("momentum", 0.9f));
  a.epsilon = eps;
  a.momentum = mom;
  size_t extra_outputs = 0;
  for (size_t i = 1; i < node.outputs.size(); ++i) extra_outputs += node.HasOutput(i) ? 1 : 0;
  if (opset >= 14) {
    KILN_ASSIGN_OR_RETURN(int64_t tm, node.GetInt("training_mode", 0));
    a.training = tm != 0;
  } else if (opset >= 7) {
    a.training = extra_outputs > 0;  // opset 7-13: the number of outputs selects the mode
  } else {
    KILN_ASSIGN_OR_RETURN(int64_t is_test, node.GetInt("is_test", 0));
    a.training = is_test == 0 && extra_outputs > 0;
  }
  if (opset < 9) {
    KILN_ASSIGN_OR_RETURN(int64_t spatial, node.GetInt("spatial", 1));
    a.spatial = spatial != 0;
  }
  if (opset >= 14 && !a.training && extra_outputs > 0)
    return node.Invalid("outputs running_mean and running_var exist only with training_mode = 1");
  return a;
}

Result<LayerNormAttrs> ParseLayerNorm(const ir::Node& node, int64_t opset) {
  LayerNormAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axis, node.GetInt("axis", -1));
  KILN_ASSIGN_OR_RETURN(float eps, node.GetFloat("epsilon", 1e-5f));
  a.epsilon = eps;
  KILN_ASSIGN_OR_RETURN(a.stash_type, node.GetInt("stash_type", 1));
  const DType st = static_cast<DType>(a.stash_type);
  if (!DTypeIsKnown(static_cast<int>(a.stash_type)) || !DTypeIsFloat(st))
    return node.Invalid("stash_type " + std::to_string(a.stash_type) + " is not a floating-point type");
  return a;
}

Result<LrnAttrs> ParseLrn(const ir::Node& node, int64_t opset) {
  LrnAttrs a;
  KILN_ASSIGN_OR_RETURN(float alpha, node.GetFloat("alpha", 1e-4f));
  KILN_ASSIGN_OR_RETURN(float beta, node.GetFloat("beta", 0.75f));
  KILN_ASSIGN_OR_RETURN(float bias, node.GetFloat("bias", 1.0f));
  KILN_ASSIGN_OR_RETURN(a.size, node.GetInt("size", 0));
  a.alpha = alpha;
  a.beta = beta;
  a.bias = bias;
  if (!node.FindAttr("size")) return node.Invalid("attribute size is required");
  if (a.size < 1) return node.Invalid("size " + std::to_string(a.size) + " must be positive");
  return a;
}

Result<MvnAttrs> ParseMvn(const ir::Node& node, int64_t opset) {
  MvnAttrs a;
  KILN_ASSIGN_OR_RETURN(a.axes, node.GetInts("axes", {0, 2, 3}));
  return a;
}

Result<double> ParseInstanceNormEpsilon(const ir::Node& node, int64_t opset) {
  KILN_ASSIGN_OR_RETURN(float eps, node.GetFloat("epsilon", 1e-5f));
  return static_cast<double>(eps);
}

namespace {

const std::initializer_list<DType> kFloatTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

int64_t KnownProduct(const ir::Dims& d, size_t begin) {
  int64_t p = 1;
  for (size_t i = begin; i < d.size(); ++i) {
    if (!d[i].known()) return -1;
    p *= d[i].value;
  }
  return p;
}

// Inputs 1..4 hold one value per channel ([C]), or with spatial = 0
// (opsets < 9) one per (channel, cell): [C, D1..Dn].
Status CheckBatchNormParams(const InferContext& ctx, const BatchNormAttrs& a, const ir::Dims* xd) {
  const int64_t c = xd && xd->size() >= 2 && (*xd)[1].known() ? (*xd)[1].value : -1;
  const int64_t cells = xd ? KnownProduct(*xd, 2) : -1;
  for (size_t i = 1; i < 5; ++i) {
    const ir::Dims* pd = ctx.input_dims(i);
    if (!pd || c < 0) continue;
    const int64_t n = KnownProduct(*pd, 0);
    if (n < 0) continue;
    const bool ok = a.spatial ? (pd->size() == 1 && n == c) : (n == c || (cells >= 0 && n == c * cells));
    if (!ok)
      return ctx.Error("input " + std::to_string(i) + " has shape " + ir::DimsToString(*pd) + ", expected one value per channel (" +
                       std::to_string(c) + ")");
  }
  return Status::Ok();
}

Status InferBatchNorm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(5, 5));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(BatchNormAttrs a, ParseBatchNorm(ctx.node(), ctx.opset()));
  const ir::Dims* xd = ctx.input_dims(0);
  if (xd && xd->size() < 2) return ctx.Error("input X must have rank >= 2 (N, C, ...), got " + ir::DimsToString(*xd));
  KILN_RETURN_IF_ERROR(CheckBatchNormParams(ctx, a, xd));
  PropagateInput(ctx, 0, 0);
  // running_mean / running_var (opset 14+) or mean, var, saved_mean,
  // saved_var (opsets < 14): the type and shape of the input mean.
  for (size_t i = 1; i < ctx.num_outputs() && i < 5; ++i) PropagateInput(ctx, 3, i);
  return Status::Ok();
}

Status InferInstanceNorm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(3, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(double eps, ParseInstanceNormEpsilon(ctx.node(), ctx.opset()));
  (void)eps;
  const ir::Dims* xd = ctx.input_dims(0);
  if (xd && xd->size() < 2) return ctx.Error("input X must have rank >= 2 (N, C, ...), got " + ir::DimsToString(*xd));
  const int64_t c = xd && (*xd)[1].known() ? (*xd)[1].value : -1;
  for (size_t i = 1; i < 3; ++i) {
    const ir::Dims* pd = ctx.input_dims(i);
    if (!pd) continue;
    if (pd->size() != 1 || (c >= 0 && (*pd)[0].known() && (*pd)[0].value != c))
      return ctx.Error("input " + std::to_string(i) + " has shape " + ir::DimsToString(*pd) + ", expected [" + std::to_string(c) + "]");
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

// Scale and B broadcast unidirectionally to X (in practice X[axis:]).
Status CheckBroadcastsTo(const InferContext& ctx, size_t i, const ir::Dims& xd) {
  const ir::Dims* pd = ctx.input_dims(i);
  if (!pd || !ctx.has_input(i)) return Status::Ok();
  bool ok = pd->size() <= xd.size();
  for (size_t k = 0; ok && k < pd->size(); ++k) {
    const ir::Dim& p = (*pd)[pd->size() - 1 - k];
    const ir::Dim& x = xd[xd.size() - 1 - k];
    ok = !p.known() || !x.known() || p.value == 1 || p.value == x.value;
  }
  if (!ok) return ctx.Error("input " + std::to_string(i) + " " + ir::DimsToString(*pd) + " does not broadcast to X " + ir::DimsToString(xd));
  return Status::Ok();
}

// LayerNormalization (opset 17): Y like X; Mean and InvStdDev keep X's
// leading dims before axis and have 1 on the normalized ones.
Status InferLayerNorm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(LayerNormAttrs a, ParseLayerNorm(ctx.node(), ctx.opset()));
  const ir::Dims* xd = ctx.input_dims(0);
  PropagateInput(ctx, 0, 0);
  const DType st = static_cast<DType>(a.stash_type);
  if (!xd) {
    for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i) ctx.set_output(i, st, std::nullopt);
    return Status::Ok();
  }
  if (xd->empty()) return ctx.Error("input X must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, a.axis, static_cast<int64_t>(xd->size())));
  KILN_RETURN_IF_ERROR(CheckBroadcastsTo(ctx, 1, *xd));
  KILN_RETURN_IF_ERROR(CheckBroadcastsTo(ctx, 2, *xd));
  ir::Dims stat = *xd;
  for (size_t i = static_cast<size_t>(axis); i < stat.size(); ++i) stat[i] = ir::Dim::Known(1);
  for (size_t i = 1; i < ctx.num_outputs() && i < 3; ++i) ctx.set_output(i, st, stat);
  return Status::Ok();
}

Status InferLrn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(LrnAttrs a, ParseLrn(ctx.node(), ctx.opset()));
  (void)a;
  const ir::Dims* xd = ctx.input_dims(0);
  if (xd && xd->size() < 2) return ctx.Error("input X must have rank >= 2 (N, C, ...), got " + ir::DimsToString(*xd));
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

Status InferMvn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(1, 1));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloatTypes));
  KILN_ASSIGN_OR_RETURN(MvnAttrs a, ParseMvn(ctx.node(), ctx.opset()));
  const ir::Dims* xd = ctx.input_dims(0);
  if (xd) {
    std::vector<bool> seen(xd->size(), false);
    for (int64_t ax : a.axes) {
      KILN_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(ctx, ax, static_cast<int64_t>(xd->size())));
      if (seen[static_cast<size_t>(k)]) return ctx.Error("axis " + std::to_string(ax) + " appears twice in axes");
      seen[static_cast<size_t>(k)] = true;
    }
  }
  PropagateInput(ctx, 0, 0);
  return Status::Ok();
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& r) {
  r.Register({"", "BatchNormalization", 1, 1000, InferBatchNorm});
  r.Register({"", "InstanceNormalization", 1, 1000, InferInstanceNorm});
  // LayerNormalization is opset 17, but graph optimizers (onnxruntime's
  // transformers tools) write it into older ai.onnx opsets with the same meaning.
  r.Register({"", "LayerNormalization", 1, 1000, InferLayerNorm});
  r.Register({"", "LRN", 1, 1000, InferLrn});
  r.Register({"", "MeanVarianceNormalization", 9, 1000, InferMvn});
}

}  // namespace kiln::ops
