// Reference kernels of SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss
// (double arithmetic). Inputs are viewed as [N, C, D] with D = d1*...*dk.
#include <cmath>

#include "ops/loss.h"
#include "providers/reference/families.h"
#include "providers/reference/reduction_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

// loss[n, d] = -log_prob[n, target[n, d], d] * weight[target[n, d]], with 0
// loss and 0 weight for ignored targets; "mean" divides the sum of losses by
// the sum of the weights that were applied (the count when unweighted).
Status NllFromLogProb(runtime::KernelContext& ctx, const ops::LossAttrs& a, const std::vector<double>& lp, int64_t N,
                      int64_t C, int64_t D, const Tensor& target, const Tensor& weight, Tensor& out) {
  std::vector<double> loss(static_cast<size_t>(N * D)), wt(static_cast<size_t>(N * D));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t d = 0; d < D; ++d) {
      const size_t i = static_cast<size_t>(n * D + d);
      const int64_t t = target.dtype() == DType::kInt64 ? target.data<int64_t>()[i]
                                                          : static_cast<int64_t>(target.data<int32_t>()[i]);
      if (a.ignore_index && t == *a.ignore_index) { loss[i] = 0; wt[i] = 0; continue; }
      if (t < 0 || t >= C)
        return ctx.Error("target value " + std::to_string(t) + " is out of range [0, " + std::to_string(C) + ")");
      const double w = weight.defined() ? weight.GetAsDouble(t) : 1.0;
      loss[i] = -lp[static_cast<size_t>((n * C + t) * D + d)] * w;
      wt[i] = w;
    }
  if (a.reduction == ops::LossReduction::kNone) {
    for (size_t i = 0; i < loss.size(); ++i) out.SetFromDouble(static_cast<int64_t>(i), loss[i]);
    return Status::Ok();
  }
  double sum = 0, wsum = 0;
  for (size_t i = 0; i < loss.size(); ++i) { sum += loss[i]; wsum += wt[i]; }
  out.SetFromDouble(0, a.reduction == ops::LossReduction::kSum ? sum : sum / wsum);
  return Status::Ok();
}

struct LossShape { int64_t N, C, D; };
Result<LossShape> CheckLossInputs(runtime::KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& t = ctx.input(1);
  const Tensor& w = ctx.input(2);
  LossShape s{x.dim(0), x.dim(1), DimProduct(x.shape(), 2, x.shape().size())};
  if (w.defined() && (w.rank() != 1 || w.dim(0) != s.C))
    return ctx.Error("weights must have shape [" + std::to_string(s.C) + "], got " + ShapeToString(w.shape()));
  if (t.numel() != s.N * s.D) return ctx.Error("target shape " + ShapeToString(t.shape()) + " does not match the input");
  return s;
}

Status NegativeLogLikelihoodLoss(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::LossAttrs a, ops::ParseLoss(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(LossShape s, CheckLossInputs(ctx));
  const Tensor& x = ctx.input(0);
  std::vector<double> lp(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) lp[static_cast<size_t>(i)] = x.GetAsDouble(i);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  return NllFromLogProb(ctx, a, lp, s.N, s.C, s.D, ctx.input(1), ctx.input(2), out);
}

// log_prob = LogSoftmax(scores) along the class axis 1, then the NLL loss.
Status SoftmaxCrossEntropyLoss(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::LossAttrs a, ops::ParseLoss(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(LossShape s, CheckLossInputs(ctx));
  const Tensor& x = ctx.input(0);
  std::vector<double> lp(static_cast<size_t>(x.numel()));
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t d = 0; d < s.D; ++d) {
      auto at = [&](int64_t c) { return (n * s.C + c) * s.D + d; };
      double m = -INFINITY;
      for (int64_t c = 0; c < s.C; ++c) m = std::max(m, x.GetAsDouble(at(c)));
      double sum = 0;
      for (int64_t c = 0; c < s.C; ++c) sum += std::exp(x.GetAsDouble(at(c)) - m);
      const double log_sum = std::log(sum);
      for (int64_t c = 0; c < s.C; ++c) lp[static_cast<size_t>(at(c))] = x.GetAsDouble(at(c)) - m - log_sum;
    }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  KILN_RETURN_IF_ERROR(NllFromLogProb(ctx, a, lp, s.N, s.C, s.D, ctx.input(1), ctx.input(2), out));
  if (ctx.has_output(1)) {
    KILN_ASSIGN_OR_RETURN(Tensor log_prob, ctx.AllocOutput(1));
    for (size_t i = 0; i < lp.size(); ++i) log_prob.SetFromDouble(static_cast<int64_t>(i), lp[i]);
  }
  return Status::Ok();
}

}  // namespace

void RegisterLossKernels(runtime::KernelRegistry& r) {
  r.Register("", "SoftmaxCrossEntropyLoss", SoftmaxCrossEntropyLoss);
  r.Register("", "NegativeLogLikelihoodLoss", NegativeLogLikelihoodLoss);
}

}  // namespace kiln::reference
