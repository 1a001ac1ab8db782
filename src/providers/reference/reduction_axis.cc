// Reference kernels of the ops that work along one axis: TopK, Softmax,
// LogSoftmax, Hardmax and CumSum. Each sees its input as [outer, axis, inner]
// and processes the `outer * inner` rows of the axis independently.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "ops/infer_util.h"
#include "ops/reduction.h"
#include "providers/reference/reduction_axis.h"
#include "providers/reference/reduction_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

// TopK. Ties keep the lower index first (a stable sort of the row in index
// order); NaN orders above every number, as numpy's sort puts it last.
Status TopK(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::TopKAttrs a, ops::ParseTopK(node, ctx.opset()));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, a.axis, x.rank()));
  int64_t k = a.k_attr ? *a.k_attr : 0;
  if (!a.k_attr) {
    const Tensor& kt = ctx.input(1);
    if (kt.numel() != 1) return ctx.Error("input 'K' must hold exactly one value");
    k = IntsOf(kt)[0];
  }
  const ops::AxisSplit sp = ops::SplitAtAxis(x.shape(), axis);
  if (k < 0 || k > sp.axis_dim)
    return ctx.Error("k = " + std::to_string(k) + " is out of range for axis size " + std::to_string(sp.axis_dim));
  KILN_ASSIGN_OR_RETURN(Tensor values, ctx.AllocOutput(0));
  KILN_ASSIGN_OR_RETURN(Tensor indices, ctx.AllocOutput(1));
  int64_t* id = indices.data<int64_t>();
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool input is not supported");
    } else {
      const T* xd = x.data<T>();
      T* vd = values.data<T>();
      // a before b in the output order.
      auto before = [&](const std::pair<T, int64_t>& p, const std::pair<T, int64_t>& q) {
        const auto u = ToAcc(p.first), v = ToAcc(q.first);
        if constexpr (kIsFloatLike<T>) {
          const bool un = std::isnan(u), vn = std::isnan(v);
          if (un || vn) return a.largest ? (un && !vn) : (!un && vn);
        }
        return a.largest ? u > v : u < v;
      };
      std::vector<std::pair<T, int64_t>> row(static_cast<size_t>(sp.axis_dim));
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          for (int64_t j = 0; j < sp.axis_dim; ++j)
            row[static_cast<size_t>(j)] = {xd[(o * sp.axis_dim + j) * sp.inner + i], j};
          // sorted=0 leaves the order unspecified; sorted order is one valid choice.
          std::stable_sort(row.begin(), row.end(), before);
          for (int64_t j = 0; j < k; ++j) {
            const int64_t out = (o * k + j) * sp.inner + i;
            vd[out] = row[static_cast<size_t>(j)].first;
            id[out] = row[static_cast<size_t>(j)].second;
          }
        }
    }
  }));
  return st;
}

// Softmax / LogSoftmax / Hardmax along the rows (double arithmetic; the max
// is subtracted first so large inputs do not overflow).
Status SoftmaxFamily(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::SoftmaxAttrs a, ops::ParseSoftmax(node, ctx.opset()));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(ops::AxisSplit sp, ops::SoftmaxSplit(node, a, x.shape()));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!kIsFloatLike<T>) {
      st = ctx.Error(std::string("dtype ") + DTypeName(x.dtype()) + " is not supported");
    } else {
      const T* xd = x.data<T>();
      T* yd = y.data<T>();
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          auto at = [&](int64_t j) { return (o * sp.axis_dim + j) * sp.inner + i; };
          if (sp.axis_dim == 0) continue;
          double m = ToDouble(xd[at(0)]);
          int64_t arg = 0;
          for (int64_t j = 1; j < sp.axis_dim; ++j) {
            double v = ToDouble(xd[at(j)]);
            if (v > m) { m = v; arg = j; }
          }
          if (a.kind == ops::SoftmaxKind::kHardmax) {
            // The first maximum gets the 1.
            for (int64_t j = 0; j < sp.axis_dim; ++j) yd[at(j)] = FromDouble<T>(j == arg ? 1.0 : 0.0);
            continue;
          }
          double sum = 0;
          for (int64_t j = 0; j < sp.axis_dim; ++j) sum += std::exp(ToDouble(xd[at(j)]) - m);
          for (int64_t j = 0; j < sp.axis_dim; ++j) {
            const double d = ToDouble(xd[at(j)]) - m;
            yd[at(j)] = FromDouble<T>(a.kind == ops::SoftmaxKind::kSoftmax ? std::exp(d) / sum : d - std::log(sum));
          }
        }
    }
  }));
  return st;
}

// CumSum: running sums along the axis; `exclusive` leaves the current
// element out, `reverse` runs from the end.
Status CumSum(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::CumSumAttrs a, ops::ParseCumSum(node, ctx.opset()));
  const Tensor& x = ctx.input(0);
  const Tensor& at = ctx.input(1);
  if (at.numel() != 1) return ctx.Error("input 'axis' must hold exactly one value");
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, IntsOf(at)[0], x.rank()));
  const ops::AxisSplit sp = ops::SplitAtAxis(x.shape(), axis);
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool input is not supported");
    } else {
      const T* xd = x.data<T>();
      T* yd = y.data<T>();
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          AccOf<T> s = 0;
          for (int64_t step = 0; step < sp.axis_dim; ++step) {
            const int64_t j = a.reverse ? sp.axis_dim - 1 - step : step;
            const int64_t e = (o * sp.axis_dim + j) * sp.inner + i;
            if (a.exclusive) { yd[e] = FromAcc<T>(s); s += ToAcc(xd[e]); }
            else { s += ToAcc(xd[e]); yd[e] = FromAcc<T>(s); }
          }
        }
    }
  }));
  return st;
}

}  // namespace

void RegisterReductionAxisKernels(runtime::KernelRegistry& r) {
  r.Register("", "TopK", TopK);
  r.Register("", "Softmax", SoftmaxFamily);
  r.Register("", "LogSoftmax", SoftmaxFamily);
  r.Register("", "Hardmax", SoftmaxFamily);
  r.Register("", "CumSum", CumSum);
}

}  // namespace kiln::reference
