// Reference kernels of the Reduce* ops and ArgMax/ArgMin: the spec's loops,
// double accumulation for floating types, 64-bit integer accumulation for
// integer types. TopK, the softmax family and CumSum live in
// reduction_axis.cc.
#include <cmath>
#include <limits>

#include "ops/infer_util.h"
#include "ops/reduction.h"
#include "providers/reference/families.h"
#include "providers/reference/reduction_axis.h"
#include "providers/reference/reduction_util.h"
#include "providers/reference/util.h"

namespace kiln::reference {
namespace {

using ops::ReduceKind;

template <typename T>
bool IsNan(T v) {
  if constexpr (kIsFloatLike<T>) return std::isnan(ToDouble(v));
  else return false;
}

// Reduces the values at `base + offsets[j]` for every j (the reduced index
// space) into one output element.
template <typename T>
T ReduceOne(ReduceKind kind, const T* x, int64_t base, const std::vector<int64_t>& offsets) {
  using Acc = AccOf<T>;
  const size_t n = offsets.size();
  switch (kind) {
    case ReduceKind::kSum: case ReduceKind::kMean: {
      Acc s = 0;
      for (size_t j = 0; j < n; ++j) s += ToAcc(x[base + offsets[j]]);
      if (kind == ReduceKind::kSum) return FromAcc<T>(s);
      // Mean of an empty set is 0/0 (NaN; 0 for integer types).
      return SafeFromDouble<T>(static_cast<double>(s) / static_cast<double>(n));
    }
    case ReduceKind::kSumSquare: {
      Acc s = 0;
      for (size_t j = 0; j < n; ++j) { Acc v = ToAcc(x[base + offsets[j]]); s += v * v; }
      return FromAcc<T>(s);
    }
    case ReduceKind::kL1: {
      Acc s = 0;
      for (size_t j = 0; j < n; ++j) {
        Acc v = ToAcc(x[base + offsets[j]]);
        if constexpr (std::is_same_v<Acc, double>) s += std::fabs(v);
        else if constexpr (std::is_signed_v<Acc>) s += v < 0 ? -v : v;
        else s += v;
      }
      return FromAcc<T>(s);
    }
    case ReduceKind::kL2: {
      double s = 0;
      for (size_t j = 0; j < n; ++j) { double v = ToDouble(x[base + offsets[j]]); s += v * v; }
      return SafeFromDouble<T>(std::sqrt(s));
    }
    case ReduceKind::kProd: {
      Acc p = 1;
      for (size_t j = 0; j < n; ++j) p *= ToAcc(x[base + offsets[j]]);
      return FromAcc<T>(p);
    }
    case ReduceKind::kMax: case ReduceKind::kMin: {
      // Empty set: -inf / +inf (lowest / highest of integer types). NaN propagates.
      const bool is_max = kind == ReduceKind::kMax;
      if (n == 0) return SafeFromDouble<T>(is_max ? LowestAsDouble<T>() : HighestAsDouble<T>());
      T best = x[base + offsets[0]];
      for (size_t j = 1; j < n && !IsNan(best); ++j) {
        T v = x[base + offsets[j]];
        if (IsNan(v)) { best = v; break; }
        if (is_max ? ToAcc(v) > ToAcc(best) : ToAcc(v) < ToAcc(best)) best = v;
      }
      return best;
    }
    case ReduceKind::kLogSum: {
      double s = 0;
      for (size_t j = 0; j < n; ++j) s += ToDouble(x[base + offsets[j]]);
      return SafeFromDouble<T>(std::log(s));  // empty set: log(0) = -inf
    }
    case ReduceKind::kLogSumExp: {
      // log(sum(exp(x))) computed around the maximum so large inputs do not
      // overflow; an empty set (or all -inf) gives -inf.
      double m = -std::numeric_limits<double>::infinity();
      bool nan = false;
      for (size_t j = 0; j < n; ++j) {
        double v = ToDouble(x[base + offsets[j]]);
        if (std::isnan(v)) nan = true;
        else if (v > m) m = v;
      }
      if (nan) return SafeFromDouble<T>(std::numeric_limits<double>::quiet_NaN());
      if (std::isinf(m)) return SafeFromDouble<T>(m);
      double s = 0;
      for (size_t j = 0; j < n; ++j) s += std::exp(ToDouble(x[base + offsets[j]]) - m);
      return SafeFromDouble<T>(m + std::log(s));
    }
  }
  return T{};
}

Status Reduce(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::ReduceAttrs a, ops::ParseReduce(node, ctx.opset()));
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 must be a tensor");
  std::vector<int64_t> axes = a.axes_attr;
  if (a.axes_from_input && ctx.has_input(1)) {
    const Tensor& t = ctx.input(1);
    if (t.dtype() != DType::kInt64) return ctx.Error("input 'axes' must be int64");
    axes = IntsOf(t);
  }
  KILN_ASSIGN_OR_RETURN(ops::ReducePlan p, ops::PlanReduce(node, a, axes, x.rank()));
  if (p.identity) return ctx.SetOutput(0, Datum(x));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  // Two index spaces over the input: `kept` (reduced axes collapsed to 1)
  // walks the outputs in row-major order, `red` (kept axes collapsed) the
  // elements folded into each output.
  const Shape& s = x.shape();
  const std::vector<int64_t> strides = ContiguousStrides(s);
  Shape kept(s.size()), red(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    kept[k] = p.reduced[k] ? 1 : s[k];
    red[k] = p.reduced[k] ? s[k] : 1;
  }
  std::vector<int64_t> offsets;
  ForEachIndex(red, [&](int64_t, const std::vector<int64_t>& idx) { offsets.push_back(OffsetOf(idx, strides)); });
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool input is not supported");
    } else {
      const T* xd = x.data<T>();
      T* yd = y.data<T>();
      ForEachIndex(kept, [&](int64_t o, const std::vector<int64_t>& idx) {
        yd[o] = ReduceOne<T>(a.kind, xd, OffsetOf(idx, strides), offsets);
      });
    }
  }));
  return st;
}

// ArgMax / ArgMin: index of the first (or, with select_last_index, the last)
// extreme value along the axis. A NaN counts as the extreme, as in numpy.
Status ArgReduce(runtime::KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(ops::ArgReduceAttrs a, ops::ParseArgReduce(node, ctx.opset()));
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(int64_t axis, ops::NormalizeAxis(node, a.axis, x.rank()));
  const ops::AxisSplit sp = ops::SplitAtAxis(x.shape(), axis);
  if (sp.axis_dim == 0 && sp.outer * sp.inner > 0) return ctx.Error("cannot reduce over an empty axis");
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  int64_t* yd = y.data<int64_t>();
  Status st = Status::Ok();
  KILN_RETURN_IF_ERROR(VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      st = ctx.Error("bool input is not supported");
    } else {
      const T* xd = x.data<T>();
      for (int64_t o = 0; o < sp.outer; ++o)
        for (int64_t i = 0; i < sp.inner; ++i) {
          const T* row = xd + o * sp.axis_dim * sp.inner + i;
          int64_t best = 0;
          for (int64_t j = 1; j < sp.axis_dim; ++j) {
            const T v = row[j * sp.inner], b = row[best * sp.inner];
            bool take;
            if (IsNan(b)) take = a.select_last_index && IsNan(v);
            else if (IsNan(v)) take = true;
            else if (ToAcc(v) == ToAcc(b)) take = a.select_last_index;
            else take = a.is_max ? ToAcc(v) > ToAcc(b) : ToAcc(v) < ToAcc(b);
            if (take) best = j;
          }
          yd[o * sp.inner + i] = best;
        }
    }
  }));
  return st;
}

}  // namespace

std::vector<int64_t> IntsOf(const Tensor& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (t.dtype() == DType::kInt64) v[static_cast<size_t>(k)] = t.data<int64_t>()[k];
    else v[static_cast<size_t>(k)] = static_cast<int64_t>(t.GetAsDouble(k));
  }
  return v;
}

void RegisterReductionKernels(runtime::KernelRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    r.Register("", op, Reduce);
  r.Register("", "ArgMax", ArgReduce);
  r.Register("", "ArgMin", ArgReduce);
  RegisterReductionAxisKernels(r);
}

}  // namespace kiln::reference
