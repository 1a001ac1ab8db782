// Loss family: attributes and shape inference of SoftmaxCrossEntropyLoss and
// NegativeLogLikelihoodLoss.
//
// Both take scores/log-probabilities [N, C, d1..dk], integer targets
// [N, d1..dk] and optional class weights [C]. reduction "none" gives a loss
// of the targets' shape, "sum" and "mean" a scalar. SoftmaxCrossEntropyLoss
// may also return the log-probabilities (shape of the scores).
#include "ops/loss.h"

#include "ops/families.h"
#include "ops/infer_util.h"

namespace kiln::ops {

Result<LossAttrs> ParseLoss(const ir::Node& node, int64_t) {
  LossAttrs a;
  KILN_ASSIGN_OR_RETURN(std::string red, node.GetString("reduction", "mean"));
  if (red == "none") a.reduction = LossReduction::kNone;
  else if (red == "sum") a.reduction = LossReduction::kSum;
  else if (red == "mean") a.reduction = LossReduction::kMean;
  else return node.Invalid("attribute 'reduction' must be none, sum or mean, got '" + red + "'");
  if (node.FindAttr("ignore_index")) {
    KILN_ASSIGN_OR_RETURN(int64_t ii, node.GetInt("ignore_index", 0));
    a.ignore_index = ii;
  }
  return a;
}

namespace {

Status InferLoss(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(ctx.CheckInputCount(2, 3));
  KILN_ASSIGN_OR_RETURN(LossAttrs a, ParseLoss(ctx.node(), ctx.opset()));
  const std::initializer_list<DType> kFloats = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 0, kFloats));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 1, {DType::kInt32, DType::kInt64}));
  KILN_RETURN_IF_ERROR(CheckDType(ctx, 2, kFloats));
  const DType dt = ctx.input_dtype(0);
  if (ctx.has_input(2) && ctx.input_dtype(2) != DType::kUndefined && dt != DType::kUndefined && ctx.input_dtype(2) != dt)
    return ctx.Error("weights must have the dtype of the scores");
  const ir::Dims* x = ctx.input_dims(0);
  const ir::Dims* t = ctx.input_dims(1);
  const ir::Dims* w = ctx.input_dims(2);
  if (x && x->size() < 2) return ctx.Error("input 0 must have rank >= 2 ([N, C, ...]), got rank " + std::to_string(x->size()));
  if (x && t && t->size() + 1 != x->size())
    return ctx.Error("target rank " + std::to_string(t->size()) + " must be the input rank " + std::to_string(x->size()) +
                     " minus 1");
  if (w && w->size() != 1) return ctx.Error("weights must be 1-D [C]");
  // Target dims: [N, d1..dk] from either the target or the input.
  std::optional<ir::Dims> tdims;
  if (t) tdims = *t;
  if (x) {
    ir::Dims from_x = {(*x)[0]};
    for (size_t k = 2; k < x->size(); ++k) from_x.push_back((*x)[k]);
    if (!tdims) tdims = from_x;
    for (size_t k = 0; k < tdims->size(); ++k) {
      ir::Dim& d = (*tdims)[k];
      const ir::Dim& e = from_x[k];
      if (d.known() && e.known() && d.value != e.value)
        return ctx.Error("target dims " + ir::DimsToString(*tdims) + " do not match the input dims " + ir::DimsToString(*x));
      if (!d.known()) d = e;
    }
    if (w && (*w)[0].known() && (*x)[1].known() && (*w)[0].value != (*x)[1].value)
      return ctx.Error("weights have " + std::to_string((*w)[0].value) + " classes, input has " + std::to_string((*x)[1].value));
  }
  if (a.reduction == LossReduction::kNone) SetOutputDims(ctx, 0, dt, tdims);
  else SetOutputDims(ctx, 0, dt, ir::Dims{});
  if (ctx.node().op_type == "SoftmaxCrossEntropyLoss" && ctx.num_outputs() > 1) {
    if (x) SetOutputDims(ctx, 1, dt, *x);
    else SetOutputDims(ctx, 1, dt, std::nullopt);
  }
  return Status::Ok();
}

}  // namespace

void RegisterLossOps(OpRegistry& r) {
  r.Register({"", "SoftmaxCrossEntropyLoss", 12, 1000, InferLoss});
  r.Register({"", "NegativeLogLikelihoodLoss", 12, 1000, InferLoss});
}

}  // namespace kiln::ops
