// Accumulator types and safe conversions shared by the reduction, matmul and
// loss reference kernels. Floating inputs accumulate in double; integers in
// 64-bit integers of their signedness (so int64 sums stay exact), wrapping
// back to the element type like the integer arithmetic of the spec's numpy
// reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kiln/tensor.h"
#include "support/dtype_dispatch.h"

namespace kiln::reference {

template <typename T>
inline constexpr bool kIsFloatLike = std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

template <typename T>
using AccOf = std::conditional_t<kIsFloatLike<T>, double,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
inline AccOf<T> ToAcc(T v) {
  if constexpr (kIsFloatLike<T>) return ToDouble(v);
  else return static_cast<AccOf<T>>(v);
}

// Accumulator back to the element type (integers wrap, as in the spec's
// numpy reference with fixed-width integers).
template <typename T>
inline T FromAcc(AccOf<T> v) {
  if constexpr (kIsFloatLike<T>) return FromDouble<T>(v);
  else return static_cast<T>(v);
}

// double to T without undefined behaviour: NaN becomes 0 and out-of-range
// values saturate for integer types; floats convert as usual.
template <typename T>
inline T SafeFromDouble(double v) {
  if constexpr (kIsFloatLike<T>) {
    return FromDouble<T>(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (std::isnan(v)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Largest / smallest value of T (infinities for floating types): identities
// of max / min reductions.
template <typename T>
inline double LowestAsDouble() {
  if constexpr (kIsFloatLike<T>) return -std::numeric_limits<double>::infinity();
  else return static_cast<double>(std::numeric_limits<T>::lowest());
}
template <typename T>
inline double HighestAsDouble() {
  if constexpr (kIsFloatLike<T>) return std::numeric_limits<double>::infinity();
  else return static_cast<double>(std::numeric_limits<T>::max());
}

}  // namespace kiln::reference
