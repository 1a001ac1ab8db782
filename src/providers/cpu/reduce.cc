// Reduce* (float32) on the cpu provider: Sum, Mean, Max, Min, Prod,
// SumSquare, L1, L2, LogSum and LogSumExp over any set of axes.
//
// The input is walked in its storage order (row-major, or any dense order
// when keepdims keeps the rank: the output is then stored in the input's
// order, so a reduction of channels-last data needs no conversion). After
// dims of size 1 are dropped and neighbours of the same kind merged, the
// innermost group is either reduced (each output folds contiguous runs, in
// 16 lanes so the loop vectorizes) or kept (each output row folds whole
// input rows into a row of accumulators). Outputs are split across threads
// and each is one fold in a fixed order, so the thread count changes no
// result. Sums are float (the reference's are double): relative error about
// 1e-6 for the row lengths vision models reduce (LayerNorm's channels,
// pooled maps).
//
// Semantics follow the reference (providers/reference/reduction.cc): Max
// and Min propagate NaN; an empty reduction gives 0 (Sum, SumSquare, L1,
// L2), NaN (Mean), -inf / +inf (Max / Min), 1 (Prod), -inf (LogSum,
// LogSumExp).
#include <cmath>
#include <limits>
#include <vector>

#include "ops/reduction.h"
#include "providers/cpu/families.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"
#include "support/layout.h"

namespace kiln::cpu {
namespace {

using ops::ReduceKind;

constexpr int kLanes = 16;
constexpr float kInf = std::numeric_limits<float>::infinity();

// How values are combined: acc = Fold(acc, Term(v)), from Init().
enum class FoldKind { kAdd, kMul, kMax, kMin };

FoldKind FoldOf(ReduceKind k) {
  switch (k) {
    case ReduceKind::kProd: return FoldKind::kMul;
    case ReduceKind::kMax: case ReduceKind::kLogSumExp: return FoldKind::kMax;  // LogSumExp's first pass
    case ReduceKind::kMin: return FoldKind::kMin;
    default: return FoldKind::kAdd;
  }
}

float InitOf(FoldKind f) {
  switch (f) {
    case FoldKind::kMul: return 1.f;
    case FoldKind::kMax: return -kInf;
    case FoldKind::kMin: return kInf;
    default: return 0.f;
  }
}

// A NaN, once met, stays (as the reference's Max/Min and numpy's).
template <FoldKind F>
inline float Fold(float acc, float v) {
  if constexpr (F == FoldKind::kAdd) return acc + v;
  if constexpr (F == FoldKind::kMul) return acc * v;
  if constexpr (F == FoldKind::kMax) return (v > acc || v != v) ? v : acc;
  return (v < acc || v != v) ? v : acc;
}

// The value a Sum-like kind adds for input v: SumSquare and L2 square it, L1
// takes |v|; `shift` is LogSumExp's maximum (its second pass adds exp(v - m)).
enum class TermKind { kValue, kSquare, kAbs, kExpShifted };

TermKind TermOf(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSumSquare: case ReduceKind::kL2: return TermKind::kSquare;
    case ReduceKind::kL1: return TermKind::kAbs;
    default: return TermKind::kValue;
  }
}

template <TermKind T>
inline float Term(float v, float shift) {
  if constexpr (T == TermKind::kSquare) return v * v;
  if constexpr (T == TermKind::kAbs) return v < 0.f ? -v : v;
  if constexpr (T == TermKind::kExpShifted) return ExpF(v - shift);
  return v;
}

// The storage of a reduction: groups of merged dims, outermost first.
struct Group {
  int64_t size, stride;  // stride in input elements
  bool reduced;
};

// acc (one output) = fold over runs of n contiguous values at x + offsets[j].
template <FoldKind F, TermKind T>
KILN_CPU_CLONES_TEMPLATE float FoldRuns(const float* x, const std::vector<int64_t>& offsets, int64_t n, float shift) {
  float lane[kLanes];
  for (int k = 0; k < kLanes; ++k) lane[k] = InitOf(F);
  float acc = InitOf(F);
  for (int64_t off : offsets) {
    const float* p = x + off;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int k = 0; k < kLanes; ++k) lane[k] = Fold<F>(lane[k], Term<T>(p[i + k], shift));
    for (; i < n; ++i) acc = Fold<F>(acc, Term<T>(p[i], shift));
  }
  for (int k = 0; k < kLanes; ++k) acc = Fold<F>(acc, lane[k]);
  return acc;
}

// y[0, n) = fold over rows of n contiguous values at x + offsets[j]
// (shift[i]: LogSumExp's maxima, per column).
template <FoldKind F, TermKind T>
KILN_CPU_CLONES_TEMPLATE void FoldRows(const float* x, const std::vector<int64_t>& offsets, int64_t n, const float* shift, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = InitOf(F);
  for (int64_t off : offsets) {
    const float* p = x + off;
    for (int64_t i = 0; i < n; ++i) y[i] = Fold<F>(y[i], Term<T>(p[i], shift ? shift[i] : 0.f));
  }
}

// The fold of every output into y (row-major over the kept groups), for
// one pass: F and T fixed. shift: per output (LogSumExp's second pass).
template <FoldKind F, TermKind T>
void FoldAll(const float* x, const std::vector<Group>& outer, const std::vector<int64_t>& offsets, const Group& last, const float* shift,
             float* y) {
  int64_t outputs = 1;  // of the outer kept groups
  for (const Group& g : outer)
    if (!g.reduced) outputs *= g.size;
  const int64_t per = last.reduced ? 1 : last.size;  // outputs per outer output
  const int64_t work = outputs * static_cast<int64_t>(offsets.size()) * last.size;  // input values read
  ParallelFor(outputs, work, [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o) {
      // Input offset of outer output o: its index in each kept group.
      int64_t base = 0, rest = o;
      for (size_t k = outer.size(); k-- > 0;)
        if (!outer[k].reduced) {
          base += rest % outer[k].size * outer[k].stride;
          rest /= outer[k].size;
        }
      if (last.reduced) {
        y[o] = FoldRuns<F, T>(x + base, offsets, last.size, shift ? shift[o] : 0.f);
      } else {
        FoldRows<F, T>(x + base, offsets, last.size, shift ? shift + o * per : nullptr, y + o * per);
      }
    }
  });
}

template <FoldKind F>
void FoldAllTerm(TermKind t, const float* x, const std::vector<Group>& outer, const std::vector<int64_t>& offsets, const Group& last,
                 const float* shift, float* y) {
  switch (t) {
    case TermKind::kSquare: return FoldAll<F, TermKind::kSquare>(x, outer, offsets, last, shift, y);
    case TermKind::kAbs: return FoldAll<F, TermKind::kAbs>(x, outer, offsets, last, shift, y);
    case TermKind::kExpShifted: return FoldAll<F, TermKind::kExpShifted>(x, outer, offsets, last, shift, y);
    default: return FoldAll<F, TermKind::kValue>(x, outer, offsets, last, shift, y);
  }
}

void Pass(FoldKind f, TermKind t, const float* x, const std::vector<Group>& outer, const std::vector<int64_t>& offsets, const Group& last,
          const float* shift, float* y) {
  switch (f) {
    case FoldKind::kMul: return FoldAllTerm<FoldKind::kMul>(t, x, outer, offsets, last, shift, y);
    case FoldKind::kMax: return FoldAllTerm<FoldKind::kMax>(t, x, outer, offsets, last, shift, y);
    case FoldKind::kMin: return FoldAllTerm<FoldKind::kMin>(t, x, outer, offsets, last, shift, y);
    default: return FoldAllTerm<FoldKind::kAdd>(t, x, outer, offsets, last, shift, y);
  }
}

// The value of an empty reduction (a reduced dim of size 0).
float EmptyValue(ReduceKind k) {
  switch (k) {
    case ReduceKind::kMean: return std::numeric_limits<float>::quiet_NaN();
    case ReduceKind::kMax: case ReduceKind::kLogSum: case ReduceKind::kLogSumExp: return -kInf;
    case ReduceKind::kMin: return kInf;
    case ReduceKind::kProd: return 1.f;
    default: return 0.f;
  }
}

Status RunReduce(runtime::KernelContext& ctx, const ops::ReduceAttrs& a) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32) return ctx.Error("cpu Reduce takes float32, got " + x.Describe());
  std::vector<int64_t> axes = a.axes_attr;
  if (a.axes_from_input && ctx.has_input(1)) {
    const Tensor& t = ctx.input(1);
    if (t.dtype() != DType::kInt64) return ctx.Error("input 'axes' must be int64, got " + t.Describe());
    const Tensor tc = t.Contiguous();
    axes.assign(tc.data<int64_t>(), tc.data<int64_t>() + tc.numel());
  }
  KILN_ASSIGN_OR_RETURN(ops::ReducePlan p, ops::PlanReduce(ctx.node(), a, axes, x.rank()));
  if (p.identity) return ctx.SetOutput(0, Datum(x));
  DimOrder order;
  if (!FindOrder(x, &order)) return ctx.Error("cpu Reduce was handed a non-dense input: " + x.Describe());
  if (!a.keepdims) order = kRowMajor;  // declared: the executor makes it so (the kept dims keep their order)
  if (!IsDenseInOrder(x, order)) return ctx.Error("cpu Reduce was handed input X in a layout it did not declare: " + x.Describe());
  const Shape out_shape = ops::ReducedShape(p, x.shape(), a.keepdims);
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kFloat32, out_shape, order));
  if (y.numel() == 0) return Status::Ok();
  float* yd = y.data<float>();
  // Storage-order groups: size-1 dims dropped, neighbours of a kind merged.
  const DimOrder full = ResolveOrder(order, x.rank());
  std::vector<Group> groups;
  int64_t count = 1;  // values folded into each output
  for (int d : full) {
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    const bool red = p.reduced[static_cast<size_t>(d)];
    if (red) count *= n;
    if (n == 1) continue;
    if (!groups.empty() && groups.back().reduced == red) {
      groups.back().size *= n;
    } else {
      groups.push_back({n, 0, red});
    }
  }
  if (count == 0) {
    std::fill_n(yd, y.numel(), EmptyValue(a.kind));
    return Status::Ok();
  }
  if (groups.empty()) groups.push_back({1, 0, true});  // one value
  int64_t stride = 1;
  for (size_t k = groups.size(); k-- > 0;) {
    groups[k].stride = stride;
    stride *= groups[k].size;
  }
  const Group last = groups.back();
  const std::vector<Group> outer(groups.begin(), groups.end() - 1);
  // Input offsets of the runs (or rows) one output folds: every index of
  // the outer reduced groups, in row-major order.
  std::vector<int64_t> offsets = {0};
  for (const Group& g : outer) {
    if (!g.reduced) continue;
    std::vector<int64_t> next;
    next.reserve(offsets.size() * static_cast<size_t>(g.size));
    for (int64_t o : offsets)
      for (int64_t i = 0; i < g.size; ++i) next.push_back(o + i * g.stride);
    offsets = std::move(next);
  }
  const float* xd = x.data<float>();
  const FoldKind f = FoldOf(a.kind);
  if (a.kind == ReduceKind::kLogSumExp) {
    // log(sum(exp(v - m))) + m around each output's maximum m (a NaN
    // maximum, or an infinite one, is the result itself).
    KILN_ASSIGN_OR_RETURN(Tensor m, ctx.AllocScratch(DType::kFloat32, y.shape(), order, false));
    float* md = m.data<float>();
    Pass(FoldKind::kMax, TermKind::kValue, xd, outer, offsets, last, nullptr, md);
    Pass(FoldKind::kAdd, TermKind::kExpShifted, xd, outer, offsets, last, md, yd);
    for (int64_t i = 0; i < y.numel(); ++i) yd[i] = std::isnan(md[i]) || std::isinf(md[i]) ? md[i] : md[i] + std::log(yd[i]);
    return Status::Ok();
  }
  Pass(f, TermOf(a.kind), xd, outer, offsets, last, nullptr, yd);
  const float inv = 1.f / static_cast<float>(count);
  switch (a.kind) {
    case ReduceKind::kMean:
      for (int64_t i = 0; i < y.numel(); ++i) yd[i] *= inv;
      break;
    case ReduceKind::kL2:
      for (int64_t i = 0; i < y.numel(); ++i) yd[i] = std::sqrt(yd[i]);
      break;
    case ReduceKind::kLogSum:
      for (int64_t i = 0; i < y.numel(); ++i) yd[i] = std::log(yd[i]);
      break;
    default: break;
  }
  return Status::Ok();
}

Result<runtime::Kernel> MakeReduce(const runtime::KernelInit& init) {
  const ir::TypeInfo* t = init.input_type(0);
  if (!t || t->kind != ir::TypeInfo::Kind::kTensor || t->dtype != DType::kFloat32) return runtime::Kernel();
  KILN_ASSIGN_OR_RETURN(ops::ReduceAttrs a, ops::ParseReduce(init.node, init.opset));
  runtime::KernelLayouts l;
  l.inputs.resize(1);
  // With keepdims the output keeps the rank, and the input's order.
  l.inputs[0].any_dense = a.keepdims;
  if (a.keepdims) l.output_order = [](const std::vector<DimOrder>& in) { return in.empty() ? kRowMajor : in[0]; };
  return runtime::Kernel([a](runtime::KernelContext& ctx) { return RunReduce(ctx, a); }, std::move(l));
}

}  // namespace

void RegisterReduceKernels(runtime::KernelRegistry& r) {
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp"})
    r.RegisterFactory("", op, MakeReduce);
}

}  // namespace kiln::cpu
