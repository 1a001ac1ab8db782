// Helpers shared by the elementwise, quantization and string reference
// kernels: value types, wrap-around integer arithmetic (signed overflow is UB
// in C++, ONNX integer ops wrap like numpy), saturating float->int
// conversion, and broadcasting over any number of inputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/tensor.h"
#include "providers/reference/util.h"
#include "runtime/kernel.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsFloat = kIsHalf<T> || std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Wrap-around (two's complement) integer arithmetic, computed in uint64.
template <typename T>
inline T WrapAdd(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
template <typename T>
inline T WrapSub(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
template <typename T>
inline T WrapMul(T a, T b) { return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }
template <typename T>
inline T WrapNeg(T a) { return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a)); }

// double -> T: floats round to nearest; integers truncate toward zero and
// saturate at the type's limits, NaN gives 0 (a plain cast would be UB).
template <typename T>
inline T SaturateFromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (kIsFloat<T>) {
    return FromDouble<T>(v);
  } else {
    if (std::isnan(v)) return T{0};
    // max() as a double is exact or rounds up to 2^63/2^64; values between
    // max and that bound truncate to max either way.
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    return static_cast<T>(v);
  }
}

// A value in a type C++ compares and computes with (halves as float).
template <typename T>
inline auto Num(T v) {
  if constexpr (kIsHalf<T>) return static_cast<float>(v);
  else return v;
}

// Round half to even (Round, QuantizeLinear), keeping the sign of zero.
inline double RoundHalfEven(double x) {
  double r = std::floor(x);
  const double d = x - r;
  if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
  return std::copysign(r, x);
}

// Calls f(out_linear, offsets) for every element of the broadcast shape
// `out`, offsets[k] being the element of input k (contiguous, shape ins[k]).
template <typename F>
void ForEachBroadcast(const Shape& out, const std::vector<Shape>& ins, F&& f) {
  std::vector<std::vector<int64_t>> strides;
  strides.reserve(ins.size());
  for (const Shape& s : ins) strides.push_back(BroadcastStrides(s, out));
  std::vector<int64_t> off(ins.size(), 0);
  ForEachIndex(out, [&](int64_t lin, const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < ins.size(); ++k) off[k] = OffsetOf(idx, strides[k]);
    f(lin, static_cast<const std::vector<int64_t>&>(off));
  });
}

// Registration of the family's kernel files.
void RegisterElementwiseUnaryKernels(runtime::KernelRegistry& r);   // elementwise.cc
void RegisterElementwiseBinaryKernels(runtime::KernelRegistry& r);  // elementwise_binary.cc
void RegisterElementwiseCastKernels(runtime::KernelRegistry& r);    // elementwise_cast.cc

}  // namespace kiln::reference
