#include "providers/cpu/winograd.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/direct_conv.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"
#include "support/big_alloc.h"
#include "support/lane_mask.h"

// GCC 12 warns that the _mm512_undefined_ps() its own intrinsics pass as
// the unused merge source "may be used uninitialized"; it is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace kiln::cpu {
namespace {

// The 1-D transforms along one dimension, 16 channels at a time, for a
// tile of kA inputs: F(4, 3) (kA = 6; Lavin and Gray, interpolation points
// 0, +-1, +-2 and infinity) and F(2, 3) (kA = 4; points 0, +-1, infinity).
template <int kA>
void InputTransform(const __m512 d[kA], __m512 r[kA]);
template <int kA>
void OutputTransform(const __m512 m[kA], __m512 o[kA - 2]);

// r = B^T d: a 6-value input column or row.
template <>
__attribute__((target("avx512f"))) inline void InputTransform<6>(const __m512 d[6], __m512 r[6]) {
  const __m512 four = _mm512_set1_ps(4.f), five = _mm512_set1_ps(5.f), two = _mm512_set1_ps(2.f);
  r[0] = _mm512_fmadd_ps(four, d[0], _mm512_fnmadd_ps(five, d[2], d[4]));                         // 4d0 - 5d2 + d4
  r[1] = _mm512_fnmadd_ps(four, _mm512_add_ps(d[1], d[2]), _mm512_add_ps(d[3], d[4]));           // -4d1 - 4d2 + d3 + d4
  r[2] = _mm512_fmadd_ps(four, _mm512_sub_ps(d[1], d[2]), _mm512_sub_ps(d[4], d[3]));            // 4d1 - 4d2 - d3 + d4
  r[3] = _mm512_fmadd_ps(two, _mm512_sub_ps(d[3], d[1]), _mm512_sub_ps(d[4], d[2]));             // -2d1 - d2 + 2d3 + d4
  r[4] = _mm512_fnmadd_ps(two, _mm512_sub_ps(d[3], d[1]), _mm512_sub_ps(d[4], d[2]));            // 2d1 - d2 - 2d3 + d4
  r[5] = _mm512_fmadd_ps(four, d[1], _mm512_fnmadd_ps(five, d[3], d[5]));                         // 4d1 - 5d3 + d5
}

// o = A^T m: 6 products to 4 outputs.
template <>
__attribute__((target("avx512f"))) inline void OutputTransform<6>(const __m512 m[6], __m512 o[4]) {
  const __m512 s12 = _mm512_add_ps(m[1], m[2]), d12 = _mm512_sub_ps(m[1], m[2]);
  const __m512 s34 = _mm512_add_ps(m[3], m[4]), d34 = _mm512_sub_ps(m[3], m[4]);
  o[0] = _mm512_add_ps(_mm512_add_ps(m[0], s12), s34);                                 // m0 + m1 + m2 + m3 + m4
  o[1] = _mm512_fmadd_ps(_mm512_set1_ps(2.f), d34, d12);                              // m1 - m2 + 2(m3 - m4)
  o[2] = _mm512_fmadd_ps(_mm512_set1_ps(4.f), s34, s12);                              // m1 + m2 + 4(m3 + m4)
  o[3] = _mm512_add_ps(_mm512_fmadd_ps(_mm512_set1_ps(8.f), d34, d12), m[5]);         // m1 - m2 + 8(m3 - m4) + m5
}

// r = B^T d: a 4-value input column or row.
template <>
__attribute__((target("avx512f"))) inline void InputTransform<4>(const __m512 d[4], __m512 r[4]) {
  r[0] = _mm512_sub_ps(d[0], d[2]);  // d0 - d2
  r[1] = _mm512_add_ps(d[1], d[2]);  // d1 + d2
  r[2] = _mm512_sub_ps(d[2], d[1]);  // d2 - d1
  r[3] = _mm512_sub_ps(d[1], d[3]);  // d1 - d3
}

// o = A^T m: 4 products to 2 outputs.
template <>
__attribute__((target("avx512f"))) inline void OutputTransform<4>(const __m512 m[4], __m512 o[2]) {
  o[0] = _mm512_add_ps(_mm512_add_ps(m[0], m[1]), m[2]);  // m0 + m1 + m2
  o[1] = _mm512_sub_ps(_mm512_sub_ps(m[1], m[2]), m[3]);  // m1 - m2 - m3
}

// The input transform of one kA x kA window at (iy0, ix0) of image x,
// channels [16 cv, 16 cv + 16): column by column (B^T d), then row by row
// ((B^T d) B), into out + e * e_stride for the kA^2 positions e. kCheck:
// the window may cross the input's border (those values read as 0).
template <int kA, bool kCheck>
__attribute__((target("avx512f"))) inline void TransformWindow(const float* x, const WinogradShape& s, int64_t iy0, int64_t ix0,
                                                               int64_t cv, float* out, int64_t e_stride) {
  const __mmask16 mask = FirstLanes(s.ic - 16 * cv);  // channels of vector cv
  // Strides in locals, and plain loads below where all 16 channels exist:
  // the loop had reloaded s's strides and multiplied them per load, and
  // masked loads from memory issue more slowly on this AMD core. Together
  // (not measured apart) a 3x3 96->24 at 160x160 went 4.68 -> 3.86 ms.
  const int64_t ih = s.ih, iw = s.iw, ic = s.ic;
  const float* corner = x + 16 * cv;  // offset below by the window position, only where it is inside
  __m512 col[kA], r[kA], t1[kA][kA];
#pragma GCC unroll 6
  for (int j = 0; j < kA; ++j) {
#pragma GCC unroll 6
    for (int i = 0; i < kA; ++i) {
      const int64_t iy = iy0 + i, ix = ix0 + j;
      const bool inside = !kCheck || (iy >= 0 && iy < ih && ix >= 0 && ix < iw);
      const float* p = corner + (iy * iw + ix) * ic;
      col[i] = !inside ? _mm512_setzero_ps() : mask == 0xFFFF ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
    }
    InputTransform<kA>(col, r);
#pragma GCC unroll 6
    for (int i = 0; i < kA; ++i) t1[i][j] = r[i];
  }
#pragma GCC unroll 6
  for (int i = 0; i < kA; ++i) {
    InputTransform<kA>(t1[i], r);
#pragma GCC unroll 6
    for (int j = 0; j < kA; ++j) _mm512_storeu_ps(out + (i * kA + j) * e_stride, r[j]);
  }
}

// G, which takes a 3-tap kernel row or column to the kA points: 6x3 for
// F(4, 3), 4x3 for F(2, 3).
constexpr double kG6[6][3] = {{1.0 / 4, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};
constexpr double kG4[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};

// The transformed input and products of one block stay within this many
// bytes (half the 1 MiB L2 of this machine's cores, leaving room for the
// transformed weights streaming through).
constexpr int64_t kBlockBytes = 512 * 1024;
// 256->256 at 28x28 2.26 -> 1.95 ms, 384->96 at 20x20 0.91 -> 0.69 with
// this floor instead of the L2 bound alone (7 and 9 tiles there).
constexpr int64_t kMinBlock = 24;

// Output channels per panel of transformed weights: PackedGemm's widest
// register tile. Each panel is one contiguous stream from memory; rows of a
// [ic][ocp] matrix put a panel's rows ocp floats apart.
constexpr int64_t kPanel = kGemmTileChannels;

}  // namespace

// Where it beat both oneDNN 2.6's direct kernel and kiln's (min of 15 runs,
// caches flushed, SiLU fused, 1 thread, this machine's AMD EPYC):
// 96->96 at 80x80 2.45 ms against 5.20 (oneDNN) and 4.87 (kiln direct),
// 48->48 at 80x80 0.74 / 1.37 / 1.26, 64->64 at 56x56 0.56 / 1.12, 128->128
// at 28x28 0.59 / 1.08, 192->192 at 20x20 0.81 / 1.17, 24->24 at 160x160
// 1.44 / 2.14 / 1.69. It loses with fewer than 24 input channels (16->16
// 0.79 against kiln direct's 0.66, 12->24 1.03x), below 20x20 outputs
// (128->128 at 14x14 1.29x oneDNN: too few tiles to pay for transforms and
// transformed weights four times the size of the kernel's) and with wide
// channels, where a block of tiles in L2 is too small for the weights
// streamed through it (512->512 at 7x7 2.3x).
// With 2x2 output tiles (F(2x2, 3x3): 16 products per tile of 4 outputs,
// 2.25x fewer than direct, transformed weights 16/9 the kernel's) it takes
// 12x12 to 20x20 outputs with 64 to 256 channels each way, where 4x4 tiles
// are too few and their weights (36/9) are read from memory at every run:
// 256->256 at 14x14 (resnet50's layer3) 0.80 -> 0.71 ms in the model
// at 1 thread, 0.53 -> 0.45 at 2 (per-node minima of 4 alternated runs,
// against oneDNN's Winograd); alone, weights in cache, 128->128 at 14x14
// 0.225 -> 0.165 ms, 96->96 at 12x12 0.070 -> 0.065. It lost at 10x10
// (256->256 0.29 -> 0.32-0.34), with 48 channels at 16x16 (0.036 -> 0.045)
// and was even with oneDNN at 7x7 and with 384 channels.
int WinogradConv::PreferredTile(const WinogradShape& s) {
  if (!DirectConv::Available()) return 0;
  const char* v = std::getenv("KILN_CPU_WINOGRAD");
  const std::string mode = v ? v : "";
  if (mode == "0" || mode == "onednn") return 0;
  if (mode == "kiln") return 4;
  if (mode == "kiln2") return 2;
  const int64_t icp = (s.ic + 15) / 16 * 16, ocp = (s.oc + 15) / 16 * 16;
  if (s.ic >= 24 && s.oc >= 16 && s.oh * s.ow >= 400 && icp + ocp <= 512) return 4;
  if (s.ic >= 64 && s.oc >= 64 && s.oh * s.ow >= 144 && icp + ocp <= 512) return 2;
  return 0;
}

WinogradConv::WinogradConv(const WinogradShape& s, int tile, const float* w, const float* bias, const ops::ActivationAttrs& act)
    : s_(s), tile_(tile), alpha_(tile + 2), icp_((s.ic + 15) / 16 * 16), ocp_((s.oc + 15) / 16 * 16), act_(act) {
  const int64_t points = alpha_ * alpha_;
  tiles_y_ = (s.oh + tile_ - 1) / tile_;
  tiles_x_ = (s.ow + tile_ - 1) / tile_;
  // At least kMinBlock tiles even where they overflow L2: wide channels'
  // transformed weights (points * ic * oc values) are streamed once per
  // block, and a few tiles per block would not pay for them.
  block_ = std::clamp<int64_t>(std::max<int64_t>(kMinBlock, kBlockBytes / (points * (icp_ + ocp_) * static_cast<int64_t>(sizeof(float)))),
                               1, tiles_x_ * tiles_y_);
  // U = G g G^T per (output, input) channel, in double, stored per
  // position e as weight panels of kPanel output channels (see kPanel).
  const double(*g_rows)[3] = tile_ == 4 ? kG6 : kG4;
  u_.reset(AlignedFloats(points * s.ic * ocp_));
  for (int64_t o = 0; o < s.oc; ++o)
    for (int64_t c = 0; c < s.ic; ++c) {
      const float* g = w + (o * s.ic + c) * 9;
      double gg[6][3];  // G g
      for (int i = 0; i < alpha_; ++i)
        for (int j = 0; j < 3; ++j) gg[i][j] = g_rows[i][0] * g[0 * 3 + j] + g_rows[i][1] * g[1 * 3 + j] + g_rows[i][2] * g[2 * 3 + j];
      for (int i = 0; i < alpha_; ++i)
        for (int j = 0; j < alpha_; ++j) {
          const double u = gg[i][0] * g_rows[j][0] + gg[i][1] * g_rows[j][1] + gg[i][2] * g_rows[j][2];
          const int64_t b = o / kPanel;
          u_[(i * alpha_ + j) * s.ic * ocp_ + b * s.ic * kPanel + c * GemmPanelWidth(ocp_, b) + o - b * kPanel] = static_cast<float>(u);
        }
    }
  bias_.reset(AlignedFloats(ocp_));
  if (bias) std::copy(bias, bias + s.oc, bias_.get());
  zero_.reset(AlignedFloats(ocp_));
}

void WinogradConv::Run(const float* x, float* y, const float* residual) const {
  // Each image's tiles, numbered row by row, cut into equal blocks of at
  // most block_ tiles (a block may span tile rows).
  // Threads only where oneDNN's primitives would use them (kSerialFlops),
  // and then the same number of blocks on each thread, rounding the count
  // down (larger blocks stream the transformed weights fewer times): in
  // resnet50 at 2 threads, 128->128 at 28x28 (49 tiles) took 0.44-0.50 ms
  // as 3 blocks of 17 tiles (2 on one thread, 1 on the other), 0.43-0.47
  // as 4 blocks of 13 and 0.40-0.47 as 2 blocks of 25 (per-node minimum
  // of 3 alternated runs).
  const double flops = 2.0 * 9.0 * static_cast<double>(s_.n * s_.oh * s_.ow) * static_cast<double>(s_.ic * s_.oc);
  const int threads = flops >= kSerialFlops ? omp_get_max_threads() : 1;
  const bool parallel = threads > 1;
  const int64_t tiles = tiles_y_ * tiles_x_;
  int64_t chunks = (tiles + block_ - 1) / block_;
  if (parallel) {
    const int64_t per_thread = std::max<int64_t>(1, s_.n * chunks / threads);  // blocks
    chunks = std::min(tiles, (per_thread * threads + s_.n - 1) / s_.n);
  }
  const int64_t per = (tiles + chunks - 1) / chunks;
  const int64_t blocks = s_.n * chunks;
  ParallelFor(blocks, parallel ? kParallelMin : 0, [&](int64_t b0, int64_t b1) {
    thread_local BigVector<float> v, m;  // on huge pages (big_alloc.h)
    v.resize(static_cast<size_t>(alpha_ * alpha_ * per * icp_));
    m.resize(static_cast<size_t>(alpha_ * alpha_ * per * ocp_));
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t n = b / chunks, t0 = (b % chunks) * per, t1 = std::min(tiles, t0 + per);
      if (t0 >= t1) continue;
      if (tile_ == 4) {
        RunBlock<6>(x, y, residual, n, t0, t1, v.data(), m.data());
      } else {
        RunBlock<4>(x, y, residual, n, t0, t1, v.data(), m.data());
      }
    }
  });
}

template <int kA>
__attribute__((target("avx512f"))) void WinogradConv::RunBlock(const float* x, float* y, const float* residual, int64_t n,
                                                               int64_t t0, int64_t t1, float* v, float* m) const {
  constexpr int kM = kA - 2, kPoints = kA * kA;  // outputs per tile side, products per tile
  const WinogradShape& s = s_;
  const int64_t tiles = t1 - t0;
  const int64_t civ = icp_ / 16, cov = ocp_ / 16;
  const float* ximg = x + n * s.ih * s.iw * s.ic;
  // Input transform: v[e][t][c] for the kPoints positions e of each tile t.
  // Windows wholly inside the input (most of them) load without checks.
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t ty = (t0 + t) / tiles_x_, tx = (t0 + t) % tiles_x_;
    const int64_t iy0 = ty * kM - s.pad_top, ix0 = tx * kM - s.pad_left;
    const bool interior = iy0 >= 0 && iy0 + kA <= s.ih && ix0 >= 0 && ix0 + kA <= s.iw;
    for (int64_t cv = 0; cv < civ; ++cv) {
      float* out = v + t * icp_ + 16 * cv;
      if (interior) {
        TransformWindow<kA, false>(ximg, s, iy0, ix0, cv, out, tiles * icp_);
      } else {
        TransformWindow<kA, true>(ximg, s, iy0, ix0, cv, out, tiles * icp_);
      }
    }
  }
  // The kPoints products: m[e] = v[e] . u[e], tiles by output channels. The
  // bias goes into position (1, 1): column 1 of A^T is all ones (in both
  // transforms), so A^T m A adds it to each of the tile's outputs once.
  for (int64_t e = 0; e < kPoints; ++e) {
    const float* bias = e == kA + 1 ? bias_.get() : zero_.get();
    for (int64_t b = 0; b * kPanel < ocp_; ++b) {
      const float* panel = u_.get() + e * s.ic * ocp_ + b * s.ic * kPanel;
      const int64_t width = GemmPanelWidth(ocp_, b);
      PackedGemm(v + e * tiles * icp_, icp_, tiles, s.ic, panel, width / 16, bias + b * kPanel, m + e * tiles * ocp_ + b * kPanel, ocp_,
                 {.prefetch = panel + s.ic * width});
    }
  }
  // Output transform into y: column by column (A^T m), then row by row
  // ((A^T m) A); tiles wholly inside the output store without checks.
  float* yimg = y + n * s.oh * s.ow * s.oc;
  const float* zimg = residual ? residual + n * s.oh * s.ow * s.oc : nullptr;
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t oy0 = (t0 + t) / tiles_x_ * kM, ox0 = (t0 + t) % tiles_x_ * kM;
    const int64_t rows = std::min<int64_t>(kM, s.oh - oy0), cols = std::min<int64_t>(kM, s.ow - ox0);
    for (int64_t ov = 0; ov < cov; ++ov) {
      const __mmask16 mask = FirstLanes(s.oc - 16 * ov);  // channels of vector ov
      __m512 col[kA], r[kM], t2[kM][kA];
      for (int j = 0; j < kA; ++j) {
        for (int i = 0; i < kA; ++i) col[i] = _mm512_loadu_ps(m + ((i * kA + j) * tiles + t) * ocp_ + 16 * ov);
        OutputTransform<kA>(col, r);
        for (int i = 0; i < kM; ++i) t2[i][j] = r[i];
      }
      const int64_t at = (oy0 * s.ow + ox0) * s.oc + 16 * ov;
      float* out = yimg + at;
      const float* res = zimg ? zimg + at : nullptr;
      for (int i = 0; i < rows; ++i) {
        OutputTransform<kA>(t2[i], r);
        // The residual value is read before the output value at its place
        // is written, so y may be the residual itself.
        if (res)
          for (int j = 0; j < cols; ++j) r[j] = _mm512_add_ps(r[j], _mm512_maskz_loadu_ps(mask, res + (i * s.ow + j) * s.oc));
        if (cols == kM && mask == 0xFFFF) {
          for (int j = 0; j < kM; ++j) _mm512_storeu_ps(out + (i * s.ow + j) * s.oc, r[j]);
        } else {
          for (int j = 0; j < cols; ++j) _mm512_mask_storeu_ps(out + (i * s.ow + j) * s.oc, mask, r[j]);
        }
      }
    }
  }
  // Activation over the block's output rows, still in cache: in each tile
  // row it touches, its columns of kM output rows.
  for (int64_t ty = t0 / tiles_x_; ty * tiles_x_ < t1; ++ty) {
    const int64_t tx0 = std::max(t0, ty * tiles_x_) - ty * tiles_x_, tx1 = std::min(t1, (ty + 1) * tiles_x_) - ty * tiles_x_;
    const int64_t px0 = tx0 * kM, px1 = std::min(tx1 * kM, s.ow);
    for (int64_t i = 0; i < kM && ty * kM + i < s.oh; ++i) {
      const int64_t at = ((n * s.oh + ty * kM + i) * s.ow + px0) * s.oc;
      ResidualActivationInPlace(y + at, nullptr, (px1 - px0) * s.oc, act_);
    }
  }
}

}  // namespace kiln::cpu
