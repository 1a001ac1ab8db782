#include "support/transpose32.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "support/lane_mask.h"

// GCC 12 warns that the _mm512_undefined_ps() its own intrinsics pass as
// the unused merge source "may be used uninitialized"; it is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace kiln {
namespace {

// One block: na, ni <= 16. Row i of the block (16 values of a) is one
// masked load; the 16x16 transpose is unpacks within 128-bit lanes, then
// lane shuffles; column a of the block is one masked store of ni values.
template <bool kStream>
__attribute__((target("avx512f"))) void Block(uint32_t* dst, const uint32_t* src, int na, int ni, int64_t ls, int64_t ld) {
  const __mmask16 amask = FirstLanes(na), imask = FirstLanes(ni);
  __m512 r[16], t[16], u[16];
  for (int i = 0; i < 16; ++i) r[i] = i < ni ? _mm512_maskz_loadu_ps(amask, src + i * ls) : _mm512_setzero_ps();
  // t[2k], t[2k+1]: rows 2k and 2k+1 interleaved (per lane: elements 0-1, 2-3).
  for (int k = 0; k < 8; ++k) {
    t[2 * k] = _mm512_unpacklo_ps(r[2 * k], r[2 * k + 1]);
    t[2 * k + 1] = _mm512_unpackhi_ps(r[2 * k], r[2 * k + 1]);
  }
  // u[4g + k], lane L: column 4L + k, rows 4g..4g+3.
  for (int g = 0; g < 4; ++g) {
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Column 4L + k gathers lane L of u[k], u[4 + k], u[8 + k], u[12 + k].
  for (int k = 0; k < 4; ++k) {
    const __m512 p = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 q = _mm512_shuffle_f32x4(u[k], u[4 + k], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 p2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(2, 0, 2, 0));
    const __m512 q2 = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(3, 1, 3, 1));
    const __m512 c[4] = {_mm512_shuffle_f32x4(p, p2, _MM_SHUFFLE(2, 0, 2, 0)), _mm512_shuffle_f32x4(q, q2, _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(p, p2, _MM_SHUFFLE(3, 1, 3, 1)), _mm512_shuffle_f32x4(q, q2, _MM_SHUFFLE(3, 1, 3, 1))};
    for (int l = 0; l < 4; ++l)
      if (4 * l + k < na) {
        if constexpr (kStream) {
          _mm512_stream_ps(reinterpret_cast<float*>(dst + (4 * l + k) * ld), c[l]);
        } else {
          _mm512_mask_storeu_ps(dst + (4 * l + k) * ld, imask, c[l]);
        }
      }
  }
}

// Values below which a transpose stays on the calling thread.
constexpr int64_t kParallelValues = 1 << 18;

// Non-temporal stores only for whole, aligned 16-value columns.
bool CanStream(const uint32_t* dst, int ni, int64_t ld) {
  return ni == 16 && reinterpret_cast<uintptr_t>(dst) % 64 == 0 && ld % 16 == 0;
}

// The same block without AVX-512 (Transpose32Portable, CPUs without it).
void BlockScalar(uint32_t* dst, const uint32_t* src, int na, int ni, int64_t ls, int64_t ld) {
  for (int a = 0; a < na; ++a)
    for (int i = 0; i < ni; ++i) dst[a * ld + i] = src[a + i * ls];
}

__attribute__((target("avx512f"))) void Fence() { _mm_sfence(); }

void Run(uint32_t* dst, const uint32_t* src, int64_t na, int64_t ni, int64_t ls, int64_t ld, bool stream, bool simd) {
  stream = stream && simd;
  auto block = [&](int64_t a0, int64_t i0) {
    uint32_t* d = dst + a0 * ld + i0;
    const uint32_t* s = src + a0 + i0 * ls;
    const int bi = static_cast<int>(std::min<int64_t>(16, ni - i0));
    const int ba = static_cast<int>(std::min<int64_t>(16, na - a0));
    if (!simd) {
      BlockScalar(d, s, ba, bi, ls, ld);
    } else if (stream && CanStream(d, bi, ld)) {
      Block<true>(d, s, ba, bi, ls, ld);
    } else {
      Block<false>(d, s, ba, bi, ls, ld);
    }
  };
  // The shorter side innermost: each step then reads (or writes) whole
  // contiguous runs of the other side, e.g. all C channels of 16 pixels.
  const bool a_outer = ni <= na;
  const int64_t outer = ((a_outer ? na : ni) + 15) / 16, inner = ((a_outer ? ni : na) + 15) / 16;
  // A large copy (a segmentation map's output) on the session's threads,
  // in contiguous chunks of the outer side; a copy has no result to vary.
  const int threads = na * ni >= kParallelValues ? static_cast<int>(std::min<int64_t>(omp_get_max_threads(), outer)) : 1;
  auto range = [&](int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
      for (int64_t k = 0; k < inner; ++k) a_outer ? block(16 * o, 16 * k) : block(16 * k, 16 * o);
    if (stream) Fence();  // the streamed stores are visible before the copy returns
  };
  if (threads <= 1) {  // no OpenMP region at all: a team of one still costs a call into libgomp
    range(0, outer);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    range(outer * t / nt, outer * (t + 1) / nt);
  }
}

}  // namespace

void Transpose32(uint32_t* dst, const uint32_t* src, int64_t na, int64_t ni, int64_t ls, int64_t ld, bool stream) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  Run(dst, src, na, ni, ls, ld, stream, avx512);
}

void Transpose32Portable(uint32_t* dst, const uint32_t* src, int64_t na, int64_t ni, int64_t ls, int64_t ld) {
  Run(dst, src, na, ni, ls, ld, false, false);
}

}  // namespace kiln
