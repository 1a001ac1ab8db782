// The mask of the first n lanes of a 16-lane AVX-512 float vector: the
// lanes of a run's last, partial vector that hold real values (channels,
// columns). All 16 for n >= 16, none for n <= 0 (a shift by 16 or more, or
// by a negative count, would be undefined).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace kiln {

inline __mmask16 FirstLanes(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : n <= 0 ? 0 : (1u << n) - 1); }

}  // namespace kiln
