// Reference kernels of the broadcasting elementwise ops: arithmetic, Pow,
// Mod, BitShift, logic, comparisons, PRelu, Where, Sum/Mean/Max/Min.
#include <cmath>
#include <string>

#include "ops/elementwise.h"
#include "providers/reference/elementwise_util.h"

namespace kiln::reference {
namespace {

using runtime::KernelContext;

Status DTypeError(KernelContext& ctx, DType t) {
  return ctx.Unsupported(std::string("dtype ") + DTypeName(t) + " is not supported");
}

// Inputs 0 and 1 with B's shape adjusted for the legacy (opset < 7) rules.
struct BinaryInputs {
  Tensor a, b;
  ops::BinaryAttrs attrs;
};
Result<BinaryInputs> GetBinaryInputs(KernelContext& ctx) {
  BinaryInputs in;
  KILN_ASSIGN_OR_RETURN(in.attrs, ops::ParseBinary(ctx.node(), ctx.opset()));
  in.a = ctx.input(0);
  in.b = ctx.input(1);
  if (!in.a.defined() || !in.b.defined()) return ctx.Error("expects 2 tensor inputs");
  if (in.attrs.legacy) {
    KILN_ASSIGN_OR_RETURN(Shape bs, ops::LegacyBroadcastShape(ctx.node(), in.attrs, in.a.shape(), in.b.shape()));
    in.b = in.b.Reshaped(bs);
  }
  return in;
}

// out[i] = f(a[..], b[..]) over the broadcast shape of the output.
template <typename TA, typename TB, typename TO, typename F>
void Broadcast2(const Tensor& a, const Tensor& b, Tensor& out, F&& f) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TO* po = out.data<TO>();
  ForEachBroadcast(out.shape(), {a.shape(), b.shape()},
                   [&](int64_t i, const std::vector<int64_t>& off) { po[i] = f(pa[off[0]], pb[off[1]]); });
}

// Same-dtype op with output of the input dtype. `f` is a generic lambda
// instantiated per dtype; it reports integer division by zero through `bad`.
enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kFMod, kShl, kShr };

template <typename T>
T ApplyArith(Arith op, T a, T b, bool& bad) {
  if constexpr (kIsFloat<T>) {
    const double x = ToDouble(a), y = ToDouble(b);
    switch (op) {
      case Arith::kAdd: return FromDouble<T>(x + y);
      case Arith::kSub: return FromDouble<T>(x - y);
      case Arith::kMul: return FromDouble<T>(x * y);
      case Arith::kDiv: return FromDouble<T>(x / y);
      case Arith::kFMod: return FromDouble<T>(std::fmod(x, y));
      default: bad = true; return T{};
    }
  } else {
    switch (op) {
      case Arith::kAdd: return WrapAdd(a, b);
      case Arith::kSub: return WrapSub(a, b);
      case Arith::kMul: return WrapMul(a, b);
      case Arith::kDiv:
      case Arith::kMod:
      case Arith::kFMod: {
        if (b == 0) { bad = true; return T{}; }
        if constexpr (std::is_signed_v<T>) {
          // min / -1 overflows: it wraps to min, and the remainder is 0.
          if (b == T(-1)) return op == Arith::kDiv ? WrapNeg(a) : T{0};
        }
        if (op == Arith::kDiv) return static_cast<T>(a / b);  // truncates toward zero
        T r = static_cast<T>(a % b);                        // sign of the dividend (C fmod)
        if constexpr (std::is_signed_v<T>) {
          // Mod with fmod=0: the result takes the divisor's sign (Python %).
          if (op == Arith::kMod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
        }
        return r;
      }
      case Arith::kShl:
      case Arith::kShr: {
        // Shifting by the bit width or more is UB in C++; every bit is gone.
        if (static_cast<uint64_t>(b) >= sizeof(T) * 8) return T{0};
        return op == Arith::kShl ? static_cast<T>(static_cast<uint64_t>(a) << b) : static_cast<T>(a >> b);
      }
    }
    return T{};
  }
}

Status ArithKernel(KernelContext& ctx, Arith op) {
  KILN_ASSIGN_OR_RETURN(BinaryInputs in, GetBinaryInputs(ctx));
  if (op == Arith::kMod && in.attrs.fmod) op = Arith::kFMod;
  if (ctx.node().op_type == "BitShift") op = in.attrs.shift_left ? Arith::kShl : Arith::kShr;
  const DType t = in.a.dtype();
  if (in.b.dtype() != t) return ctx.Error("inputs must have the same dtype");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  bool bad = false;
  bool supported = true;
  Status s = VisitNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      supported = false;
    } else {
      if ((op == Arith::kShl || op == Arith::kShr) && !std::is_unsigned_v<T>) { supported = false; return; }
      Broadcast2<T, T, T>(in.a, in.b, out, [&](T x, T y) { return ApplyArith(op, x, y, bad); });
    }
  });
  if (!s.ok() || !supported) return DTypeError(ctx, t);
  if (bad) {
    if (DTypeIsFloat(t)) return ctx.Error("attribute 'fmod' must be 1 for floating-point inputs");
    return ctx.Error("integer division by zero");
  }
  return ctx.SetOutput(0, out);
}

// Pow-12+: base and exponent of different types; the output has the base's.
template <typename TB, typename TE>
TB PowElem(TB base, TE e) {
  if constexpr (kIsInt<TB> && kIsInt<TE>) {
    // Integer power by squaring with wrap-around, as numpy; a negative
    // exponent goes through double (1/x^n truncates, 0 for |x|>1).
    if (e >= TE{0}) {
      TB r = 1, b = base;
      uint64_t n = static_cast<uint64_t>(e);
      while (n) {
        if (n & 1u) r = WrapMul(r, b);
        b = WrapMul(b, b);
        n >>= 1;
      }
      return r;
    }
    return SaturateFromDouble<TB>(std::pow(static_cast<double>(base), static_cast<double>(e)));
  } else {
    return SaturateFromDouble<TB>(std::pow(ToDouble(base), ToDouble(e)));
  }
}

Status Pow(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(BinaryInputs in, GetBinaryInputs(ctx));
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  bool supported = true;
  Status s = VisitNumeric(in.a.dtype(), [&](auto btag) {
    using TB = decltype(btag);
    Status s2 = VisitNumeric(in.b.dtype(), [&](auto etag) {
      using TE = decltype(etag);
      if constexpr (std::is_same_v<TB, bool> || std::is_same_v<TE, bool>) supported = false;
      else Broadcast2<TB, TE, TB>(in.a, in.b, out, [](TB x, TE y) { return PowElem(x, y); });
    });
    if (!s2.ok()) supported = false;
  });
  if (!s.ok() || !supported) return ctx.Unsupported("Pow of these dtypes is not supported");
  return ctx.SetOutput(0, out);
}

enum class Cmp { kEq, kGt, kGe, kLt, kLe, kAnd, kOr, kXor };

template <typename T>
bool ApplyCmp(Cmp op, const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::string>) {
    return op == Cmp::kEq ? a == b : false;
  } else {
    const auto x = Num(a);
    const auto y = Num(b);
    switch (op) {
      case Cmp::kEq: return x == y;
      case Cmp::kGt: return x > y;
      case Cmp::kGe: return x >= y;
      case Cmp::kLt: return x < y;
      case Cmp::kLe: return x <= y;
      case Cmp::kAnd: return static_cast<bool>(x) && static_cast<bool>(y);
      case Cmp::kOr: return static_cast<bool>(x) || static_cast<bool>(y);
      case Cmp::kXor: return static_cast<bool>(x) != static_cast<bool>(y);
    }
    return false;
  }
}

Status CmpKernel(KernelContext& ctx, Cmp op) {
  KILN_ASSIGN_OR_RETURN(BinaryInputs in, GetBinaryInputs(ctx));
  const DType t = in.a.dtype();
  if (in.b.dtype() != t) return ctx.Error("inputs must have the same dtype");
  const bool logic = op == Cmp::kAnd || op == Cmp::kOr || op == Cmp::kXor;
  if (logic && t != DType::kBool) return DTypeError(ctx, t);
  if (t == DType::kString && op != Cmp::kEq) return DTypeError(ctx, t);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  Status s = VisitAll(t, [&](auto tag) {
    using T = decltype(tag);
    Broadcast2<T, T, bool>(in.a, in.b, out, [op](const T& x, const T& y) { return ApplyCmp(op, x, y); });
  });
  if (!s.ok()) return DTypeError(ctx, t);
  return ctx.SetOutput(0, out);
}

Status PRelu(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope_in = ctx.input(1);
  if (!x.defined() || !slope_in.defined()) return ctx.Error("expects 2 tensor inputs");
  KILN_ASSIGN_OR_RETURN(Shape ss, ops::PReluSlopeShape(ctx.node(), ctx.opset(), x.shape(), slope_in.shape()));
  Tensor slope = slope_in.Reshaped(ss);
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0, x.dtype(), x.shape()));
  bool supported = true;
  Status s = VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      supported = false;
    } else if constexpr (kIsFloat<T>) {
      Broadcast2<T, T, T>(x, slope, out, [](T v, T a) {
        const double d = ToDouble(v);
        return d < 0 ? FromDouble<T>(ToDouble(a) * d) : v;
      });
    } else {
      Broadcast2<T, T, T>(x, slope, out, [](T v, T a) { return v < T{0} ? WrapMul(a, v) : v; });
    }
  });
  if (!s.ok() || !supported) return DTypeError(ctx, x.dtype());
  return ctx.SetOutput(0, out);
}

Status Where(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  if (!c.defined() || !x.defined() || !y.defined()) return ctx.Error("expects 3 tensor inputs");
  if (c.dtype() != DType::kBool) return ctx.Error("condition must be bool");
  if (x.dtype() != y.dtype()) return ctx.Error("X and Y must have the same dtype");
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  Status s = VisitAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const bool* pc = c.data<bool>();
    const T* px = x.data<T>();
    const T* py = y.data<T>();
    T* po = out.data<T>();
    ForEachBroadcast(out.shape(), {c.shape(), x.shape(), y.shape()}, [&](int64_t i, const std::vector<int64_t>& off) {
      po[i] = pc[off[0]] ? px[off[1]] : py[off[2]];
    });
  });
  if (!s.ok()) return DTypeError(ctx, x.dtype());
  return ctx.SetOutput(0, out);
}

enum class Fold { kSum, kMean, kMax, kMin };

// Sum/Mean in double (one rounding at the end); Max/Min natively, NaN
// propagating like numpy's maximum/minimum.
Status Variadic(KernelContext& ctx, Fold fold) {
  std::vector<Shape> shapes;
  const size_t n = ctx.num_inputs();
  if (n == 0) return ctx.Error("expects at least 1 input");
  const DType t = ctx.input(0).dtype();
  for (size_t k = 0; k < n; ++k) {
    const Tensor& in = ctx.input(k);
    if (!in.defined()) return ctx.Error("input " + std::to_string(k) + " is missing");
    if (in.dtype() != t) return ctx.Error("inputs must have the same dtype");
    shapes.push_back(in.shape());
  }
  KILN_ASSIGN_OR_RETURN(Tensor out, ctx.AllocOutput(0));
  bool supported = true;
  Status s = VisitNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      supported = false;
    } else {
      std::vector<const T*> ptrs;
      for (size_t k = 0; k < n; ++k) ptrs.push_back(ctx.input(k).template data<T>());
      T* po = out.data<T>();
      ForEachBroadcast(out.shape(), shapes, [&](int64_t i, const std::vector<int64_t>& off) {
        if (fold == Fold::kSum || fold == Fold::kMean) {
          double acc = 0;
          for (size_t k = 0; k < n; ++k) acc += ToDouble(ptrs[k][off[k]]);
          if (fold == Fold::kMean) acc /= static_cast<double>(n);
          po[i] = SaturateFromDouble<T>(acc);
          return;
        }
        auto best = Num(ptrs[0][off[0]]);
        for (size_t k = 1; k < n; ++k) {
          auto v = Num(ptrs[k][off[k]]);
          if constexpr (kIsFloat<T>) {
            if (std::isnan(best)) break;
            if (std::isnan(v)) { best = v; break; }
          }
          if (fold == Fold::kMax ? v > best : v < best) best = v;
        }
        if constexpr (kIsHalf<T>) po[i] = T(best);
        else po[i] = best;
      });
    }
  });
  if (!s.ok() || !supported) return DTypeError(ctx, t);
  return ctx.SetOutput(0, out);
}

runtime::KernelFn ArithFn(Arith op) {
  return [op](KernelContext& ctx) { return ArithKernel(ctx, op); };
}
runtime::KernelFn CmpFn(Cmp op) {
  return [op](KernelContext& ctx) { return CmpKernel(ctx, op); };
}
runtime::KernelFn FoldFn(Fold f) {
  return [f](KernelContext& ctx) { return Variadic(ctx, f); };
}

}  // namespace

void RegisterElementwiseBinaryKernels(runtime::KernelRegistry& r) {
  r.Register("", "Add", ArithFn(Arith::kAdd));
  r.Register("", "Sub", ArithFn(Arith::kSub));
  r.Register("", "Mul", ArithFn(Arith::kMul));
  r.Register("", "Div", ArithFn(Arith::kDiv));
  r.Register("", "Mod", ArithFn(Arith::kMod));
  r.Register("", "BitShift", ArithFn(Arith::kShl));
  r.Register("", "Pow", Pow);
  r.Register("", "And", CmpFn(Cmp::kAnd));
  r.Register("", "Or", CmpFn(Cmp::kOr));
  r.Register("", "Xor", CmpFn(Cmp::kXor));
  r.Register("", "Equal", CmpFn(Cmp::kEq));
  r.Register("", "Greater", CmpFn(Cmp::kGt));
  r.Register("", "GreaterOrEqual", CmpFn(Cmp::kGe));
  r.Register("", "Less", CmpFn(Cmp::kLt));
  r.Register("", "LessOrEqual", CmpFn(Cmp::kLe));
  r.Register("", "PRelu", PRelu);
  r.Register("", "Where", Where);
  r.Register("", "Sum", FoldFn(Fold::kSum));
  r.Register("", "Mean", FoldFn(Fold::kMean));
  r.Register("", "Max", FoldFn(Fold::kMax));
  r.Register("", "Min", FoldFn(Fold::kMin));
}

}  // namespace kiln::reference
