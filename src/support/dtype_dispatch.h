// Calls a generic lambda with a value of the C++ type of a dtype, so kernels
// are written once per type family:  VisitNumeric(t.dtype(), [&](auto tag) {
//   using T = decltype(tag); ... });
#pragma once

#include <cstdint>
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

template <typename T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kFloat64; };
template <> struct DTypeOf<Float16> { static constexpr DType value = DType::kFloat16; };
template <> struct DTypeOf<BFloat16> { static constexpr DType value = DType::kBFloat16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUint8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUint16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUint32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUint64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };
template <> struct DTypeOf<std::string> { static constexpr DType value = DType::kString; };

// Every dtype except string. Returns Unimplemented for string/undefined.
template <typename F>
Status VisitNumeric(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: f(float{}); return Status::Ok();
    case DType::kFloat64: f(double{}); return Status::Ok();
    case DType::kFloat16: f(Float16{}); return Status::Ok();
    case DType::kBFloat16: f(BFloat16{}); return Status::Ok();
    case DType::kInt8: f(int8_t{}); return Status::Ok();
    case DType::kInt16: f(int16_t{}); return Status::Ok();
    case DType::kInt32: f(int32_t{}); return Status::Ok();
    case DType::kInt64: f(int64_t{}); return Status::Ok();
    case DType::kUint8: f(uint8_t{}); return Status::Ok();
    case DType::kUint16: f(uint16_t{}); return Status::Ok();
    case DType::kUint32: f(uint32_t{}); return Status::Ok();
    case DType::kUint64: f(uint64_t{}); return Status::Ok();
    case DType::kBool: f(bool{}); return Status::Ok();
    default: return Unimplemented(std::string("dtype ") + DTypeName(t) + " is not supported here");
  }
}

// Every dtype including string.
template <typename F>
Status VisitAll(DType t, F&& f) {
  if (t == DType::kString) { f(std::string{}); return Status::Ok(); }
  return VisitNumeric(t, std::forward<F>(f));
}

// Conversions through double/float that also work for Float16 and BFloat16.
template <typename T>
inline double ToDouble(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}
template <typename T>
inline T FromDouble(double v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, bool>) return v != 0.0;
  else return static_cast<T>(v);
}

}  // namespace kiln
