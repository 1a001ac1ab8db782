// Reference kernels of the optimizers Adagrad, Adam and Momentum (domain
// ai.onnx.preview.training, opset 1), element by element in double, following
// the update rules of the spec. Gradient: training_gradient.cc.
#include <cmath>

#include "ops/training.h"
#include "providers/reference/families.h"
#include "providers/reference/training_gradient.h"

namespace kiln::reference {
namespace {

// Reads R and T, checks that every tensor of group j has X_j's shape, and
// runs `update(j, e)` for each element e of each group j.
template <typename F>
Status ForEachOptimizerElement(runtime::KernelContext& ctx, size_t blocks, double* r, int64_t* t, F&& update) {
  KILN_ASSIGN_OR_RETURN(size_t n, ops::OptimizerGroupSize(ctx.node(), blocks));
  const Tensor& R = ctx.input(0);
  const Tensor& T = ctx.input(1);
  if (R.numel() != 1 || T.numel() != 1) return ctx.Error("R and T must hold exactly one value");
  *r = R.GetAsDouble(0);
  *t = T.data<int64_t>()[0];
  for (size_t j = 0; j < n; ++j) {
    const Shape& xs = ctx.input(2 + j).shape();
    for (size_t b = 1; b < blocks; ++b)
      if (ctx.input(2 + b * n + j).shape() != xs)
        return ctx.Error("input " + std::to_string(2 + b * n + j) + " has shape " +
                         ShapeToString(ctx.input(2 + b * n + j).shape()) + ", expected the shape " + ShapeToString(xs) +
                         " of input " + std::to_string(2 + j));
  }
  std::vector<std::vector<Tensor>> outs(blocks - 1);
  for (size_t b = 0; b + 1 < blocks; ++b)
    for (size_t j = 0; j < n; ++j) {
      KILN_ASSIGN_OR_RETURN(Tensor o, ctx.AllocOutput(b * n + j));
      outs[b].push_back(o);
    }
  for (size_t j = 0; j < n; ++j) {
    std::vector<const Tensor*> in;
    for (size_t b = 0; b < blocks; ++b) in.push_back(&ctx.input(2 + b * n + j));
    std::vector<Tensor*> out;
    for (size_t b = 0; b + 1 < blocks; ++b) out.push_back(&outs[b][j]);
    for (int64_t e = 0; e < in[0]->numel(); ++e) update(in, out, e);
  }
  return Status::Ok();
}

// Adagrad: r' = R / (1 + T * decay_factor); g = norm_coefficient * X + G;
// H' = H + g^2; X' = X - r' * g / (sqrt(H') + epsilon).
Status Adagrad(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::AdagradAttrs a, ops::ParseAdagrad(ctx.node()));
  double r = 0;
  int64_t t = 0;
  return ForEachOptimizerElement(ctx, 3, &r, &t, [&](const std::vector<const Tensor*>& in, const std::vector<Tensor*>& out, int64_t e) {
    const double rr = r / (1.0 + static_cast<double>(t) * a.decay_factor);
    const double x = in[0]->GetAsDouble(e), g = a.norm_coefficient * x + in[1]->GetAsDouble(e);
    const double h = in[2]->GetAsDouble(e) + g * g;
    out[0]->SetFromDouble(e, x - rr * g / (std::sqrt(h) + a.epsilon));
    out[1]->SetFromDouble(e, h);
  });
}

// Adam: g = norm_coefficient * X + G; V' = alpha V + (1 - alpha) g;
// H' = beta H + (1 - beta) g^2; r' = R sqrt(1 - beta^T) / (1 - alpha^T) when
// T > 0 (bias correction), else R; X' = (1 - norm_coefficient_post) *
// (X - r' V' / (sqrt(H') + epsilon)).
Status Adam(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::AdamAttrs a, ops::ParseAdam(ctx.node()));
  double r = 0;
  int64_t t = 0;
  return ForEachOptimizerElement(ctx, 4, &r, &t, [&](const std::vector<const Tensor*>& in, const std::vector<Tensor*>& out, int64_t e) {
    const double alpha = a.alpha, beta = a.beta;
    const double x = in[0]->GetAsDouble(e), g = a.norm_coefficient * x + in[1]->GetAsDouble(e);
    const double v = alpha * in[2]->GetAsDouble(e) + (1 - alpha) * g;
    const double h = beta * in[3]->GetAsDouble(e) + (1 - beta) * g * g;
    const double td = static_cast<double>(t);
    const double rr = t > 0 ? r * std::sqrt(1 - std::pow(beta, td)) / (1 - std::pow(alpha, td)) : r;
    const double xn = x - rr * v / (std::sqrt(h) + a.epsilon);
    out[0]->SetFromDouble(e, (1 - static_cast<double>(a.norm_coefficient_post)) * xn);
    out[1]->SetFromDouble(e, v);
    out[2]->SetFromDouble(e, h);
  });
}

// Momentum: g = norm_coefficient * X + G; V' = alpha V + beta' g with
// beta' = beta when T > 0, else 1; standard: X' = X - R V';
// nesterov: X' = X - R (g + alpha V').
Status Momentum(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::MomentumAttrs a, ops::ParseMomentum(ctx.node()));
  double r = 0;
  int64_t t = 0;
  return ForEachOptimizerElement(ctx, 3, &r, &t, [&](const std::vector<const Tensor*>& in, const std::vector<Tensor*>& out, int64_t e) {
    const double beta = t > 0 ? static_cast<double>(a.beta) : 1.0;
    const double x = in[0]->GetAsDouble(e), g = a.norm_coefficient * x + in[1]->GetAsDouble(e);
    const double v = a.alpha * in[2]->GetAsDouble(e) + beta * g;
    out[0]->SetFromDouble(e, a.nesterov ? x - r * (g + a.alpha * v) : x - r * v);
    out[1]->SetFromDouble(e, v);
  });
}

}  // namespace

void RegisterTrainingKernels(runtime::KernelRegistry& r) {
  r.Register(ops::kTrainingDomain, "Adagrad", Adagrad);
  r.Register(ops::kTrainingDomain, "Adam", Adam);
  r.Register(ops::kTrainingDomain, "Momentum", Momentum);
  RegisterGradientKernel(r);
}

}  // namespace kiln::reference
