// Reference kernels of the unary elementwise ops: math functions,
// activations, IsNaN/IsInf/Not and Clip. Floats are computed in double and
// rounded once to the tensor's type; integers natively with wrap-around.
#include <cmath>

#include "ops/elementwise.h"
#include "providers/reference/elementwise_util.h"
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

using runtime::KernelContext;

// Integer inputs go through double and back (saturating), for ops whose
// integer form the spec defines as "the same formula" (Shrink, Erf).
struct ViaDouble {};
// Integer inputs are not allowed (inference rejects them already).
struct FloatOnly {};

// y = f(x) elementwise; fd computes floats in double, fi integers and bools.
template <typename FD, typename FI>
Status MapUnary(KernelContext& ctx, FD fd, FI fi) {
  const Tensor& x = ctx.input(0);
  if (!x.defined()) return ctx.Error("input 0 is missing or not a tensor");
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, x.dtype(), x.shape()));
  Status unsupported = Status::Ok();
  Status s = VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const int64_t n = x.numel();
    if constexpr (kIsFloat<T>) {
      for (int64_t i = 0; i < n; ++i) out[i] = FromDouble<T>(fd(ToDouble(in[i])));
    } else if constexpr (std::is_same_v<FI, ViaDouble>) {
      for (int64_t i = 0; i < n; ++i) out[i] = SaturateFromDouble<T>(fd(static_cast<double>(in[i])));
    } else if constexpr (std::is_same_v<FI, FloatOnly>) {
      unsupported = ctx.Unsupported(std::string("dtype ") + DTypeName(x.dtype()) + " is not supported");
    } else {
      for (int64_t i = 0; i < n; ++i) out[i] = fi(in[i]);
    }
  });
  if (!s.ok()) return ctx.Unsupported(s.message());
  KILN_RETURN_IF_ERROR(unsupported);
  return ctx.SetOutput(0, y);
}

template <typename FD>
Status MapFloat(KernelContext& ctx, FD fd) { return MapUnary(ctx, fd, FloatOnly{}); }

// y = pred(x) as bool, for float inputs (IsNaN, IsInf).
template <typename P>
Status FloatPredicate(KernelContext& ctx, P pred) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kBool, x.shape()));
  bool ok = false;
  Status s = VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      ok = true;
      const T* in = x.data<T>();
      bool* out = y.data<bool>();
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = pred(ToDouble(in[i]));
    }
  });
  if (!s.ok() || !ok) return ctx.Unsupported(std::string("dtype ") + DTypeName(x.dtype()) + " is not supported");
  return ctx.SetOutput(0, y);
}

double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }  // keeps NaN and signed zeros
double Softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

Status Abs(KernelContext& ctx) {
  return MapUnary(ctx, [](double x) { return std::fabs(x); }, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_signed_v<T>) return v < 0 ? WrapNeg(v) : v;
    else return v;
  });
}

Status Neg(KernelContext& ctx) {
  return MapUnary(ctx, [](double x) { return -x; }, [](auto v) { return WrapNeg(v); });
}

Status SignKernel(KernelContext& ctx) {
  return MapUnary(ctx, Sign, [](auto v) {
    using T = decltype(v);
    if constexpr (std::is_signed_v<T>) return static_cast<T>(v > 0 ? 1 : (v < 0 ? -1 : 0));
    else return static_cast<T>(v > 0 ? 1 : 0);
  });
}

Status Relu(KernelContext& ctx) {
  return MapUnary(ctx, [](double x) { return x < 0 ? 0.0 : x; }, [](auto v) {
    using T = decltype(v);
    return v < T{0} ? T{0} : v;
  });
}

Status Not(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kBool) return ctx.Error(std::string("input must be bool, got ") + DTypeName(x.dtype()));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kBool, x.shape()));
  for (int64_t i = 0; i < x.numel(); ++i) y.data<bool>()[i] = !x.data<bool>()[i];
  return ctx.SetOutput(0, y);
}

// Kernels whose formula reads attributes (parsed once per run).
using AttrFormula = double (*)(const ops::ActivationAttrs&, double);

template <AttrFormula F, bool kIntsViaDouble = false>
Status Activation(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ActivationAttrs a, ops::ParseActivation(ctx.node(), ctx.opset()));
  auto fd = [&a](double x) { return F(a, x); };
  if constexpr (kIntsViaDouble) return MapUnary(ctx, fd, ViaDouble{});
  else return MapFloat(ctx, fd);
}

double LeakyReluF(const ops::ActivationAttrs& a, double x) { return x < 0 ? static_cast<double>(a.alpha) * x : x; }
double EluF(const ops::ActivationAttrs& a, double x) { return x < 0 ? static_cast<double>(a.alpha) * std::expm1(x) : x; }
double SeluF(const ops::ActivationAttrs& a, double x) {
  const double g = a.gamma, al = a.alpha;
  return x > 0 ? g * x : g * (al * std::exp(x) - al);
}
double CeluF(const ops::ActivationAttrs& a, double x) {
  const double al = a.alpha;
  return std::max(0.0, x) + std::min(0.0, al * std::expm1(x / al));
}
double HardSigmoidF(const ops::ActivationAttrs& a, double x) {
  return std::max(0.0, std::min(1.0, static_cast<double>(a.alpha) * x + static_cast<double>(a.beta)));
}
double ThresholdedReluF(const ops::ActivationAttrs& a, double x) { return x > a.alpha ? x : 0.0; }
double ShrinkF(const ops::ActivationAttrs& a, double x) {
  const double l = a.lambd, b = a.bias;
  return x < -l ? x + b : (x > l ? x - b : 0.0);
}

Status IsInf(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ops::ActivationAttrs a, ops::ParseActivation(ctx.node(), ctx.opset()));
  return FloatPredicate(ctx, [&a](double x) {
    return std::isinf(x) && ((x > 0 && a.detect_positive) || (x < 0 && a.detect_negative));
  });
}

// Clip: bounds from attributes (opset < 11) or optional scalar inputs 1, 2.
Status Clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(ops::ClipAttrs attrs, ops::ParseClip(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, x.dtype(), x.shape()));
  for (size_t i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const Tensor& b = ctx.input(i);
    if (b.numel() != 1) return ctx.Error("input " + std::to_string(i) + " must be a scalar, got " + b.Describe());
    if (b.dtype() != x.dtype()) return ctx.Error("input " + std::to_string(i) + " must have the dtype of input 0");
  }
  Status s = VisitNumeric(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using V = decltype(Num(T{}));
      std::optional<V> lo, hi;
      if (attrs.min) lo = static_cast<V>(*attrs.min);
      if (attrs.max) hi = static_cast<V>(*attrs.max);
      if (ctx.has_input(1)) lo = Num(ctx.input(1).template data<T>()[0]);
      if (ctx.has_input(2)) hi = Num(ctx.input(2).template data<T>()[0]);
      const T* in = x.data<T>();
      T* out = y.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        V v = Num(in[i]);
        // NaN stays NaN; with min > max every value becomes max (as numpy).
        if (lo && v < *lo) v = *lo;
        if (hi && v > *hi) v = *hi;
        if constexpr (kIsHalf<T>) out[i] = T(v);
        else out[i] = v;
      }
    }
  });
  if (!s.ok() || x.dtype() == DType::kBool) return ctx.Unsupported(std::string("dtype ") + DTypeName(x.dtype()) + " is not supported");
  return ctx.SetOutput(0, y);
}

runtime::KernelFn Float(double (*f)(double)) {
  return [f](KernelContext& ctx) { return MapFloat(ctx, f); };
}

}  // namespace

void RegisterElementwiseUnaryKernels(runtime::KernelRegistry& r) {
  r.Register("", "Abs", Abs);
  r.Register("", "Neg", Neg);
  r.Register("", "Sign", SignKernel);
  r.Register("", "Reciprocal", Float([](double x) { return 1.0 / x; }));
  r.Register("", "Sqrt", Float([](double x) { return std::sqrt(x); }));
  r.Register("", "Exp", Float([](double x) { return std::exp(x); }));
  r.Register("", "Log", Float([](double x) { return std::log(x); }));
  r.Register("", "Ceil", Float([](double x) { return std::ceil(x); }));
  r.Register("", "Floor", Float([](double x) { return std::floor(x); }));
  r.Register("", "Round", Float(RoundHalfEven));
  r.Register("", "Sin", Float([](double x) { return std::sin(x); }));
  r.Register("", "Cos", Float([](double x) { return std::cos(x); }));
  r.Register("", "Tan", Float([](double x) { return std::tan(x); }));
  r.Register("", "Asin", Float([](double x) { return std::asin(x); }));
  r.Register("", "Acos", Float([](double x) { return std::acos(x); }));
  r.Register("", "Atan", Float([](double x) { return std::atan(x); }));
  r.Register("", "Sinh", Float([](double x) { return std::sinh(x); }));
  r.Register("", "Cosh", Float([](double x) { return std::cosh(x); }));
  r.Register("", "Asinh", Float([](double x) { return std::asinh(x); }));
  r.Register("", "Acosh", Float([](double x) { return std::acosh(x); }));
  r.Register("", "Atanh", Float([](double x) { return std::atanh(x); }));
  r.Register("", "Erf", [](KernelContext& ctx) { return MapUnary(ctx, [](double x) { return std::erf(x); }, ViaDouble{}); });
  r.Register("", "IsNaN", [](KernelContext& ctx) { return FloatPredicate(ctx, [](double x) { return std::isnan(x); }); });
  r.Register("", "IsInf", IsInf);
  r.Register("", "Not", Not);
  r.Register("", "Relu", Relu);
  r.Register("", "Sigmoid", Float([](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  r.Register("", "Tanh", Float([](double x) { return std::tanh(x); }));
  r.Register("", "Softplus", Float(Softplus));
  r.Register("", "Softsign", Float([](double x) { return x / (1.0 + std::fabs(x)); }));
  // HardSwish-14: x * max(0, min(1, x/6 + 1/2)).
  r.Register("", "HardSwish", Float([](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); }));
  r.Register("", "Mish", Float([](double x) { return x * std::tanh(Softplus(x)); }));
  r.Register("", "LeakyRelu", Activation<LeakyReluF>);
  r.Register("", "Elu", Activation<EluF>);
  r.Register("", "Selu", Activation<SeluF>);
  r.Register("", "Celu", Activation<CeluF>);
  r.Register("", "HardSigmoid", Activation<HardSigmoidF>);
  r.Register("", "ThresholdedRelu", Activation<ThresholdedReluF>);
  r.Register("", "Shrink", Activation<ShrinkF, true>);
  r.Register("", "Clip", Clip);
}

void RegisterElementwiseKernels(runtime::KernelRegistry& r) {
  RegisterElementwiseUnaryKernels(r);
  RegisterElementwiseBinaryKernels(r);
  RegisterElementwiseCastKernels(r);
}

}  // namespace kiln::reference
