// Pieces shared by the reference interpolation kernels (Resize, Upsample,
// GridSample, RoiAlign): the cubic convolution kernel and the conversion of a
// double result to the output element type.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "support/dtype_dispatch.h"

namespace kiln::reference {

// The cubic convolution kernel of the ONNX spec (Keys), coefficient a.
inline double CubicKernel(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// double -> element type. The spec is silent for integer outputs; kiln
// rounds to nearest and saturates, so a linear 2.9999999 does not become 2
// and a cubic overshoot of a uint8 image clamps at 255. NaN becomes 0.
template <typename T>
T CastInterpolated(double v) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (std::isnan(v)) return T{0};
    const double r = std::round(v);
    if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return FromDouble<T>(v);
  }
}

}  // namespace kiln::reference
