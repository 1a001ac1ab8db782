// Reference kernels of the linear quantization ops. The spec computes in
// float32 (the scale's type): x / scale is one float division, rounded half
// to even, then the zero point is added and the result saturated.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/quantization.h"
#include "providers/reference/elementwise_util.h"
#include "providers/reference/families.h"

namespace kiln::reference {
namespace {

using runtime::KernelContext;

// Index of the scale/zero point for element i of x: per tensor 0, per axis
// the coordinate along `axis`; blocked (opset 21) the element's index with
// its coordinate along `axis` divided by block_size, in the scale's shape.
struct ParamIndex {
  int64_t axis = -1;
  int64_t inner = 1;  // product of dims after axis
  int64_t dim = 1;
  int64_t block = 0;   // block_size, 0 unless blocked
  int64_t blocks = 1;  // scale's dim along axis when blocked
  int64_t operator()(int64_t i) const {
    if (axis < 0) return 0;
    const int64_t a = (i / inner) % dim;
    if (block == 0) return a;
    const int64_t outer = i / (inner * dim);
    return (outer * blocks + a / block) * inner + i % inner;
  }
};

Result<ParamIndex> GetParamIndex(KernelContext& ctx, const ops::QuantAttrs& a, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  ParamIndex p;
  KILN_ASSIGN_OR_RETURN(p.axis, ops::QuantAxis(ctx.node(), a, x.shape(), scale.shape()));
  if (zp && zp->defined() && zp->numel() != scale.numel())
    return ctx.Error("zero point has " + std::to_string(zp->numel()) + " elements, scale has " +
                     std::to_string(scale.numel()));
  if (p.axis >= 0) {
    p.dim = x.shape()[static_cast<size_t>(p.axis)];
    p.inner = DimProduct(x.shape(), static_cast<size_t>(p.axis) + 1, x.shape().size());
    if (a.block_size > 0) {
      p.block = a.block_size;
      p.blocks = scale.shape()[static_cast<size_t>(p.axis)];
    }
  }
  return p;
}

template <typename Q>
Q SaturateRound(float v, int64_t zp) {
  const double q = RoundHalfEven(static_cast<double>(v)) + static_cast<double>(zp);
  const double lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  if (std::isnan(q)) return static_cast<Q>(zp);  // NaN input: the spec is silent; the zero point is "0"
  return static_cast<Q>(std::clamp(q, lo, hi));
}

Status QuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor& zp = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(ops::QuantAttrs a, ops::ParseQuant(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(ParamIndex pi, GetParamIndex(ctx, a, x, scale, &zp));
  // The zero point's type, else output_dtype (opset 21), else uint8.
  const DType qt = zp.defined() ? zp.dtype() : a.output_dtype != DType::kUndefined ? a.output_dtype : DType::kUint8;
  if (zp.defined() && a.output_dtype != DType::kUndefined && zp.dtype() != a.output_dtype)
    return ctx.Error(std::string("output_dtype ") + DTypeName(a.output_dtype) + " differs from the zero point's dtype " + DTypeName(zp.dtype()));
  if (qt != DType::kUint8 && qt != DType::kInt8) return ctx.Unsupported(std::string("output dtype ") + DTypeName(qt));
  // x / y_scale is computed in their type: float16 / float16 (or bfloat16)
  // rounds the quotient to float16 before rounding it to an integer. The
  // float32 quotient of two float16 values rounded once more to float16 is
  // the correctly rounded float16 quotient (24 >= 2 * 11 + 2 bits).
  const DType div_type = x.dtype() == scale.dtype() ? scale.dtype() : DType::kFloat32;
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, qt, x.shape()));
  for (int64_t i = 0; i < x.numel(); ++i) {
    const int64_t p = pi(i);
    const float s = static_cast<float>(scale.GetAsDouble(p));
    const int64_t z = zp.defined() ? static_cast<int64_t>(zp.GetAsDouble(p)) : 0;
    float v = static_cast<float>(x.GetAsDouble(i)) / s;
    if (div_type == DType::kFloat16) v = static_cast<float>(Float16(v));
    else if (div_type == DType::kBFloat16) v = static_cast<float>(BFloat16(v));
    if (qt == DType::kUint8) y.data<uint8_t>()[i] = SaturateRound<uint8_t>(v, z);
    else y.data<int8_t>()[i] = SaturateRound<int8_t>(v, z);
  }
  return ctx.SetOutput(0, y);
}

Status DequantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor& zp = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(ops::QuantAttrs a, ops::ParseQuant(ctx.node(), ctx.opset()));
  KILN_ASSIGN_OR_RETURN(ParamIndex pi, GetParamIndex(ctx, a, x, scale, &zp));
  if (zp.defined() && zp.dtype() != x.dtype()) return ctx.Error("zero point must have the dtype of x");
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0));
  Status s = VisitNumeric(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = pi(i);
        // x and the zero point are integers: their difference is exact.
        const int64_t z = zp.defined() ? static_cast<int64_t>(zp.GetAsDouble(p)) : 0;
        const int64_t d = static_cast<int64_t>(x.GetAsDouble(i)) - z;
        const float v = static_cast<float>(d) * static_cast<float>(scale.GetAsDouble(p));
        y.data<T>()[i] = FromDouble<T>(v);
      }
    }
  });
  if (!s.ok() || !DTypeIsFloat(y.dtype())) return ctx.Unsupported(std::string("output dtype ") + DTypeName(y.dtype()));
  return ctx.SetOutput(0, y);
}

// DynamicQuantizeLinear-11 (uint8): scale = (max(0,max x) - min(0,min x)) / 255,
// zero point = saturate(round(0 - min / scale)), y = saturate(round(x / scale) + zp).
Status DynamicQuantizeLinear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32) return ctx.Error(std::string("x must be float32, got ") + DTypeName(x.dtype()));
  const float* in = x.data<float>();
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (in[i] < lo) lo = in[i];
    if (in[i] > hi) hi = in[i];
  }
  const float scale = (hi - lo) / 255.0f;
  KILN_ASSIGN_OR_RETURN(Tensor y, ctx.AllocOutput(0, DType::kUint8, x.shape()));
  Tensor ys = Tensor::Zeros(DType::kFloat32, {});
  Tensor yz = Tensor::Zeros(DType::kUint8, {});
  // All zeros (or empty): scale 0 would divide by zero; every value is 0.
  uint8_t zp = 0;
  if (scale > 0 && std::isfinite(scale)) {
    zp = SaturateRound<uint8_t>(0.0f - lo / scale, 0);
    for (int64_t i = 0; i < x.numel(); ++i) y.data<uint8_t>()[i] = SaturateRound<uint8_t>(in[i] / scale, zp);
  }
  ys.data<float>()[0] = scale;
  yz.data<uint8_t>()[0] = zp;
  KILN_RETURN_IF_ERROR(ctx.SetOutput(0, y));
  if (ctx.num_outputs() > 1) KILN_RETURN_IF_ERROR(ctx.SetOutput(1, ys));
  if (ctx.num_outputs() > 2) KILN_RETURN_IF_ERROR(ctx.SetOutput(2, yz));
  return Status::Ok();
}

}  // namespace

void RegisterQuantizationKernels(runtime::KernelRegistry& r) {
  r.Register("", "QuantizeLinear", QuantizeLinear);
  r.Register("", "DequantizeLinear", DequantizeLinear);
  r.Register("", "DynamicQuantizeLinear", DynamicQuantizeLinear);
}

}  // namespace kiln::reference
