// Reference kernels of the normalization ops. Statistics are computed in
// double with two passes (mean, then the biased variance around it).
#include <cmath>

#include "ops/infer_util.h"
#include "ops/normalization.h"
#include "providers/reference/conv_util.h"
#include "providers/reference/families.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

// Elements grouped by their index over the kept (not reduced) dims, in
// row-major order of those dims.
struct Groups {
  std::vector<size_t> of;  // group of each element
  size_t count = 0;
};

Groups GroupBy(const Shape& shape, const std::vector<bool>& reduced) {
  Groups g;
  g.of.resize(static_cast<size_t>(DimProduct(shape, 0, shape.size())));
  g.count = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d]) g.count *= static_cast<size_t>(shape[d]);
  ForEachIndex(shape, [&](int64_t lin, const std::vector<int64_t>& idx) {
    size_t id = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) id = id * static_cast<size_t>(shape[d]) + static_cast<size_t>(idx[d]);
    g.of[static_cast<size_t>(lin)] = id;
  });
  return g;
}

// Mean and biased (population) variance of each group.
void MeanVar(const std::vector<double>& x, const Groups& g, std::vector<double>* mean, std::vector<double>* var) {
  std::vector<double> n(g.count, 0.0);
  mean->assign(g.count, 0.0);
  var->assign(g.count, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    (*mean)[g.of[i]] += x[i];
    n[g.of[i]] += 1;
  }
  for (size_t k = 0; k < g.count; ++k) (*mean)[k] = n[k] > 0 ? (*mean)[k] / n[k] : 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = x[i] - (*mean)[g.of[i]];
    (*var)[g.of[i]] += d * d;
  }
  for (size_t k = 0; k < g.count; ++k) (*var)[k] = n[k] > 0 ? (*var)[k] / n[k] : 0.0;
}

Status WriteOutput(runtime::KernelContext& ctx, size_t i, const std::vector<double>& v) {
  if (!ctx.has_output(i)) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(i));
  WriteDoubles(out, v);
  return Status::Ok();
}

// BatchNormalization: y = (x - mean) / sqrt(var + epsilon) * scale + B, with
// the given (running) statistics, or in training with those of the batch;
// the running ones then become mean * momentum + batch_mean * (1 - momentum).
Status BatchNormalization(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::BatchNormAttrs a, ops::ParseBatchNorm(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input X must have rank >= 2, got " + ShapeToString(x.shape()));
  const int64_t c = x.dim(1);
  const int64_t cells = DimProduct(x.shape(), 2, x.shape().size());
  const int64_t np = ctx.input(1).numel();
  // spatial = 0 (opsets < 9) with [C, D1..Dn] parameters: one statistic per cell.
  const bool per_cell = !a.spatial && np == c * cells && cells != 1;
  const int64_t nf = per_cell ? c * cells : c;
  std::vector<std::vector<double>> prm(5);
  for (size_t i = 1; i < 5; ++i) {
    if (ctx.input(i).numel() != nf)
      return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(ctx.input(i).shape()) + " must have " + std::to_string(nf) +
                       " values");
    prm[i] = ReadDoubles(ctx.input(i));
  }
  const std::vector<double> xv = ReadDoubles(x);
  auto feature = [&](size_t lin) {
    const int64_t l = static_cast<int64_t>(lin);
    return static_cast<size_t>(per_cell ? (l % (c * cells)) : (l / cells) % c);
  };
  std::vector<double> mean = prm[3], var = prm[4];
  if (a.training) {
    std::vector<bool> reduced(static_cast<size_t>(x.rank()), !per_cell);
    reduced[0] = true;
    reduced[1] = false;
    MeanVar(xv, GroupBy(x.shape(), reduced), &mean, &var);
  }
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t f = feature(i);
    y[i] = (xv[i] - mean[f]) / std::sqrt(var[f] + a.epsilon) * prm[1][f] + prm[2][f];
  }
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 0, y));
  if (!a.training) return Status::Ok();
  std::vector<double> run_mean(mean.size()), run_var(var.size());
  for (size_t f = 0; f < mean.size(); ++f) {
    run_mean[f] = prm[3][f] * a.momentum + mean[f] * (1 - a.momentum);
    run_var[f] = prm[4][f] * a.momentum + var[f] * (1 - a.momentum);
  }
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 1, run_mean));
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 2, run_var));
  // Opsets < 14 also return the batch statistics (saved_mean, saved_var).
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 3, mean));
  return WriteOutput(ctx, 4, var);
}

// InstanceNormalization: per (n, c) statistics over the spatial dims.
Status InstanceNormalization(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(double eps, ops::ParseInstanceNormEpsilon(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input X must have rank >= 2, got " + ShapeToString(x.shape()));
  const int64_t c = x.dim(1);
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input(i).numel() != c)
      return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(ctx.input(i).shape()) + " must have " + std::to_string(c) + " values");
  const std::vector<double> xv = ReadDoubles(x), scale = ReadDoubles(ctx.input(1)), bias = ReadDoubles(ctx.input(2));
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), true);
  reduced[0] = reduced[1] = false;
  const Groups g = GroupBy(x.shape(), reduced);
  std::vector<double> mean, var;
  MeanVar(xv, g, &mean, &var);
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) {
    const size_t k = g.of[i], ch = k % static_cast<size_t>(c);
    y[i] = (xv[i] - mean[k]) / std::sqrt(var[k] + eps) * scale[ch] + bias[ch];
  }
  return WriteOutput(ctx, 0, y);
}

// Reads a parameter broadcast (numpy, unidirectional) to `shape`.
Result<std::vector<double>> BroadcastParam(runtime::KernelContext& ctx, size_t i, const Shape& shape) {
  const Tensor& p = ctx.input(i);
  bool ok = p.rank() <= static_cast<int>(shape.size());
  for (int k = 0; ok && k < p.rank(); ++k) {
    const int64_t pd = p.dim(p.rank() - 1 - k), xd = shape[shape.size() - 1 - static_cast<size_t>(k)];
    ok = pd == 1 || pd == xd;
  }
  if (!ok) return ctx.Error("input " + std::to_string(i) + " " + ShapeToString(p.shape()) + " does not broadcast to " + ShapeToString(shape));
  const std::vector<double> pv = ReadDoubles(p);
  const std::vector<int64_t> st = BroadcastStrides(p.shape(), shape);
  std::vector<double> out(static_cast<size_t>(DimProduct(shape, 0, shape.size())));
  ForEachIndex(shape, [&](int64_t lin, const std::vector<int64_t>& idx) { out[static_cast<size_t>(lin)] = pv[static_cast<size_t>(OffsetOf(idx, st))]; });
  return out;
}

// LayerNormalization (opset 17): statistics over dims [axis, rank); Mean and
// InvStdDev = 1 / sqrt(var + epsilon) are returned in the stash type.
Status LayerNormalization(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::LayerNormAttrs a, ops::ParseLayerNorm(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 1) return ctx.Error("input X must have rank >= 1");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(ctx.node(), a.axis, x.rank()));
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  for (size_t d = static_cast<size_t>(axis); d < reduced.size(); ++d) reduced[d] = true;
  const std::vector<double> xv = ReadDoubles(x);
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, BroadcastParam(ctx, 1, x.shape()));
  std::vector<double> bias(xv.size(), 0.0);
  if (ctx.has_input(2)) { KILN_ASSIGN_OR_RETURN(bias, BroadcastParam(ctx, 2, x.shape())); }
  const Groups g = GroupBy(x.shape(), reduced);
  std::vector<double> mean, var;
  MeanVar(xv, g, &mean, &var);
  std::vector<double> inv(var.size());
  for (size_t k = 0; k < var.size(); ++k) inv[k] = 1.0 / std::sqrt(var[k] + a.epsilon);
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) y[i] = (xv[i] - mean[g.of[i]]) * inv[g.of[i]] * scale[i] + bias[i];
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 0, y));
  KILN_RETURN_IF_ERROR(WriteOutput(ctx, 1, mean));
  return WriteOutput(ctx, 2, inv);
}

// LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
// [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
Status Lrn(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::LrnAttrs a, ops::ParseLrn(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.Error("input X must have rank >= 2, got " + ShapeToString(x.shape()));
  const int64_t n = x.dim(0), c = x.dim(1), cells = DimProduct(x.shape(), 2, x.shape().size());
  const int64_t lo = (a.size - 1) / 2, hi = a.size - 1 - lo;
  const std::vector<double> xv = ReadDoubles(x);
  std::vector<double> y(xv.size());
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t s = 0; s < cells; ++s) {
        double sq = 0;
        for (int64_t k = std::max<int64_t>(0, ch - lo); k <= std::min(c - 1, ch + hi); ++k) {
          const double v = xv[static_cast<size_t>((b * c + k) * cells + s)];
          sq += v * v;
        }
        const size_t i = static_cast<size_t>((b * c + ch) * cells + s);
        y[i] = xv[i] / std::pow(a.bias + a.alpha / static_cast<double>(a.size) * sq, a.beta);
      }
    }
  }
  return WriteOutput(ctx, 0, y);
}

// MeanVarianceNormalization (opset 9/13 function body): (x - mean) / (sqrt(var) + 1e-9)
// with the statistics over `axes`.
Status Mvn(runtime::KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::MvnAttrs a, ops::ParseMvn(ctx.node(), ctx.opset()));
  const Tensor& x = ctx.input(0);
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), false);
  for (int64_t ax : a.axes) {
    KILN_ASSIGN_OR_RETURN(int64_t k, ops::NormalizeAxis(ctx.node(), ax, x.rank()));
    reduced[static_cast<size_t>(k)] = true;
  }
  const std::vector<double> xv = ReadDoubles(x);
  const Groups g = GroupBy(x.shape(), reduced);
  std::vector<double> mean, var;
  MeanVar(xv, g, &mean, &var);
  std::vector<double> y(xv.size());
  for (size_t i = 0; i < xv.size(); ++i) y[i] = (xv[i] - mean[g.of[i]]) / (std::sqrt(var[g.of[i]]) + 1e-9);
  return WriteOutput(ctx, 0, y);
}

}  // namespace

void RegisterNormalizationKernels(runtime::KernelRegistry& r) {
  r.Register("", "BatchNormalization", BatchNormalization);
  r.Register("", "InstanceNormalization", InstanceNormalization);
  r.Register("", "LayerNormalization", LayerNormalization);
  r.Register("", "LRN", Lrn);
  r.Register("", "MeanVarianceNormalization", Mvn);
}

}  // namespace kiln::reference
