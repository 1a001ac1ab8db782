#include "providers/cpu/direct_conv.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/dnnl_common.h"
#include "providers/cpu/parallel.h"
#include "providers/cpu/vec_math.h"
#include "support/big_alloc.h"
#include "support/lane_mask.h"

// GCC 12 warns that the _mm512_undefined_ps() its own intrinsics pass as
// the unused merge source (of _mm512_min_ps / _mm512_max_ps in the clamp)
// "may be used uninitialized"; it is never read.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace kiln::cpu {
namespace {

// Everything one tile needs. x: the input value of pixel 0 at its first
// valid tap (kh0, kw0) and channel 0; w: the packed weights at that tap and
// at the tile's first output vector; y: pixel 0's output at that vector.
struct Tile {
  const float* x;
  int64_t x_pixel;  // floats between consecutive pixels' windows (sw * ic)
  int64_t x_row;    // floats between input rows (iw * ic)
  int64_t ic;
  int64_t taps_h, taps_w;  // valid taps of the window (clipped at borders)
  const float* w;
  int64_t w_row;  // floats between packed kh rows (kw * ic * ocp)
  int64_t ocp;
  const float* bias;  // at the tile's first output vector
  float* y;
  const float* z;   // the residual at y's place (same strides), or null
  int64_t y_pixel;  // floats between output pixels (oc)
  __mmask16 last;   // lanes of the last output vector that are real channels
  bool clamp;       // results clamped to [lo, hi] before the store (a fused Relu or Clip)
  float lo, hi;
  // RunTile<.., true>: asks for pf_lines cache lines from pf on, pf_per_c of
  // them per input channel (its share of GemmOutput::prefetch).
  const float* pf;
  int64_t pf_lines, pf_per_c;
};

// Accumulators start at the bias plus, with a residual, the residual at
// their output place: read before the tile stores there, so the output may
// be written over the residual (Run's in-place case).
template <int NV, int NP>
__attribute__((target("avx512f"))) inline void InitAccumulators(const Tile& t, __m512 (&acc)[NP][NV]) {
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) {
    const __m512 b = _mm512_load_ps(t.bias + 16 * v);
#pragma GCC unroll 32
    for (int p = 0; p < NP; ++p) acc[p][v] = b;
  }
  if (!t.z) return;
#pragma GCC unroll 32
  for (int p = 0; p < NP; ++p) {
    const float* zp = t.z + p * t.y_pixel;
#pragma GCC unroll 16
    for (int v = 0; v < NV - 1; ++v) acc[p][v] = _mm512_add_ps(acc[p][v], _mm512_loadu_ps(zp + 16 * v));
    acc[p][NV - 1] = _mm512_add_ps(acc[p][NV - 1], _mm512_maskz_loadu_ps(t.last, zp + 16 * (NV - 1)));
  }
}

// A fused Relu or Clip, applied before the stores.
template <int NV, int NP>
__attribute__((target("avx512f"))) inline void ClampAccumulators(const Tile& t, __m512 (&acc)[NP][NV]) {
  if (!t.clamp) return;
  const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
#pragma GCC unroll 32
  for (int p = 0; p < NP; ++p)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_min_ps(hi, _mm512_max_ps(lo, acc[p][v]));  // NaN stays NaN
}

// NP pixels x NV vectors of 16 output channels, accumulated in registers.
// Compiled for AVX-512 only; called only where Available() said so.
// kPrefetch: per input channel, also asks for the next t.pf_per_c of the
// tile's t.pf_lines cache lines of t.pf.
template <int NV, int NP, bool kPrefetch = false>
__attribute__((target("avx512f"))) void RunTile(const Tile& t) {
  __m512 acc[NP][NV];
  InitAccumulators<NV, NP>(t, acc);
  // A window row's valid taps are one contiguous run of taps_w * ic input
  // values (channels-last), matching one contiguous run of packed weights.
  const int64_t run = t.taps_w * t.ic;
  for (int64_t i = 0; i < t.taps_h; ++i) {
    const float* xp = t.x + i * t.x_row;
    const float* wp = t.w + i * t.w_row;
    for (int64_t c = 0; c < run; ++c) {
      __m512 wv[NV];
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) wv[v] = _mm512_load_ps(wp + c * t.ocp + 16 * v);
      if constexpr (kPrefetch) {
        const int64_t l0 = c * t.pf_per_c, l1 = std::min(t.pf_lines, l0 + t.pf_per_c);
        for (int64_t l = l0; l < l1; ++l) _mm_prefetch(reinterpret_cast<const char*>(t.pf + l * 16), _MM_HINT_T1);
      }
#pragma GCC unroll 16
      for (int p = 0; p < NP; ++p) {
        const __m512 xb = _mm512_set1_ps(xp[p * t.x_pixel + c]);
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_fmadd_ps(xb, wv[v], acc[p][v]);
      }
    }
  }
  ClampAccumulators<NV, NP>(t, acc);
#pragma GCC unroll 16
  for (int p = 0; p < NP; ++p) {
    float* yp = t.y + p * t.y_pixel;
#pragma GCC unroll 16
    for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(yp + 16 * v, acc[p][v]);
    _mm512_mask_storeu_ps(yp + 16 * (NV - 1), t.last, acc[p][NV - 1]);
  }
}

// The same tile for stride 1 with every horizontal tap valid (taps_w ==
// KW), input-stationary along the row: each input value of the row is
// broadcast once and multiplied into all KW taps it feeds (output pixel
// q - kw for tap kw), instead of once per (pixel, tap). With one or two
// output vectors (oc <= 32: detector stems, CSP blocks) the broadcasts,
// which take a vector slot as an FMA does, otherwise equal or halve the
// FMAs; here NP + KW - 1 broadcasts feed NP * KW * NV FMAs.
template <int NV, int NP, int KW>
__attribute__((target("avx512f"))) void RunRowTile(const Tile& t) {
  __m512 acc[NP][NV];
  InitAccumulators<NV, NP>(t, acc);
  for (int64_t i = 0; i < t.taps_h; ++i) {
    const float* xp = t.x + i * t.x_row;
    const float* wp = t.w + i * t.w_row;
    for (int64_t c = 0; c < t.ic; ++c) {
      __m512 wv[KW][NV];
#pragma GCC unroll 8
      for (int k = 0; k < KW; ++k)
#pragma GCC unroll 16
        for (int v = 0; v < NV; ++v) wv[k][v] = _mm512_load_ps(wp + (k * t.ic + c) * t.ocp + 16 * v);
#pragma GCC unroll 40
      for (int q = 0; q < NP + KW - 1; ++q) {
        const __m512 xb = _mm512_set1_ps(xp[q * t.ic + c]);
#pragma GCC unroll 8
        for (int k = 0; k < KW; ++k) {
          const int p = q - k;
          if (p < 0 || p >= NP) continue;
#pragma GCC unroll 16
          for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_fmadd_ps(xb, wv[k][v], acc[p][v]);
        }
      }
    }
  }
  ClampAccumulators<NV, NP>(t, acc);
#pragma GCC unroll 32
  for (int p = 0; p < NP; ++p) {
    float* yp = t.y + p * t.y_pixel;
#pragma GCC unroll 16
    for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(yp + 16 * v, acc[p][v]);
    _mm512_mask_storeu_ps(yp + 16 * (NV - 1), t.last, acc[p][NV - 1]);
  }
}

using TileFn = void (*)(const Tile&);

// Pixels per tile for NV output vectors: NP * NV <= 24 accumulators, which
// leaves registers for the NV weight vectors and the broadcast.
constexpr int kMaxVectors = static_cast<int>(kGemmTileChannels / 16);
constexpr int kMaxPixels[kMaxVectors + 1] = {0, 14, 12, 8, 6};

template <int NV, bool kPrefetch, int... P>
constexpr void FillRow(TileFn* row, std::integer_sequence<int, P...>) {
  ((row[P + 1] = &RunTile<NV, P + 1, kPrefetch>), ...);
}

template <bool kPrefetch>
struct TileTable {
  TileFn fn[kMaxVectors + 1][16] = {};
  constexpr TileTable() {
    FillRow<1, kPrefetch>(fn[1], std::make_integer_sequence<int, kMaxPixels[1]>());
    FillRow<2, kPrefetch>(fn[2], std::make_integer_sequence<int, kMaxPixels[2]>());
    FillRow<3, kPrefetch>(fn[3], std::make_integer_sequence<int, kMaxPixels[3]>());
    FillRow<4, kPrefetch>(fn[4], std::make_integer_sequence<int, kMaxPixels[4]>());
  }
};
constexpr TileTable<false> kTiles;
constexpr TileTable<true> kPrefetchTiles;

// Row tiles for 3-wide kernels at stride 1: NP * NV <= 24 accumulators plus
// 3 * NV weight vectors and the broadcast within the 32 registers.
constexpr int kRowKW = 3;
constexpr int kRowMaxVectors = 2;
constexpr int kRowMaxPixels[kRowMaxVectors + 1] = {0, 24, 12};

template <int NV, int... P>
constexpr void FillRowTiles(TileFn* row, std::integer_sequence<int, P...>) {
  ((row[P + 1] = &RunRowTile<NV, P + 1, kRowKW>), ...);
}

struct RowTileTable {
  TileFn fn[kRowMaxVectors + 1][32] = {};
  constexpr RowTileTable() {
    FillRowTiles<1>(fn[1], std::make_integer_sequence<int, kRowMaxPixels[1]>());
    FillRowTiles<2>(fn[2], std::make_integer_sequence<int, kRowMaxPixels[2]>());
  }
};
constexpr RowTileTable kRowTiles;

}  // namespace

bool Clamps(const ops::ActivationAttrs& a) {
  using ops::Activation;
  return !a.has_post_affine() && (a.kind == Activation::kNone || a.kind == Activation::kRelu || a.kind == Activation::kClip);
}

Clamp ClampOf(const ops::ActivationAttrs& a) {
  Clamp c;
  if (!Clamps(a)) return c;
  if (a.kind == ops::Activation::kRelu) c.lo = 0;
  if (a.kind == ops::Activation::kClip) {
    c.lo = a.alpha;
    c.hi = a.beta;
  }
  return c;
}

float* AlignedFloats(int64_t n) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 16)) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(AllocateBig(bytes));  // packed weights, on huge pages (big_alloc.h)
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return p;
}

void FreeFloats::operator()(float* p) const { FreeBig(p); }

float* PackGemmPanels(const float* w, int64_t outs, int64_t k, int64_t padded) {
  float* p = AlignedFloats(k * padded);
  for (int64_t o = 0; o < outs; ++o) {
    const int64_t b = o / kGemmTileChannels, width = GemmPanelWidth(padded, b);
    float* panel = p + b * k * kGemmTileChannels;
    for (int64_t c = 0; c < k; ++c) panel[c * width + o - b * kGemmTileChannels] = w[o * k + c];
  }
  return p;
}

bool DirectConv::Available() { return HasAvx512F(); }

// Where oneDNN's channels-last kernels lose: a short reduction (at most 128
// values per output for 1x1, 288 for larger kernels), or few output
// channels that are not a multiple of 16 (both waste lanes there, oneDNN
// more) over at most 216. Measured kernel
// against primitive on single convolutions with the caches flushed before
// each run (a model's weights and outputs are not in cache when a layer
// starts; warm-cache timings favoured oneDNN and did not predict the
// models), min of 30 runs, 1 thread, this machine's AMD EPYC with AVX-512,
// oneDNN 2.6: 1x1 16->96 at 112x112 0.76, 24->144 0.79, 144->24 0.76,
// 32->192 0.79, 64->384 0.85, 64->256 at 56x56 0.90, 48->24 at 160x160 0.82,
// 3x3 12->24 at 320x320 0.87; with SiLU fused, 3x3 24->48/2 at 320x320
// 0.85, 32->64/2 at 80x80 0.88, 16->32 0.84, 24->24 at 160x160 0.85, but
// 48->96/2 (reduction 432) 1.00. On longer 1x1 reductions without an
// activation oneDNN wins (144->32 and 192->32 at 28x28 1.21, 960->160 1.19,
// 320->1280 1.43). In the models (`kiln bench --profile`): mobilenet_v2's
// 16->96 0.435 -> 0.383 ms; rtmdet_like's convolutions 77.6 -> 74.0 ms in
// all, then its seven 3x3/2 ones 15.6 -> 15.1 ms with the 288 bound.
// Row tiles (RunRowTile) then took 3x3/1 12->12 at 320x320 from 2.41 to
// 2.13 ms (110 -> 125 GF/s, oneDNN 2.97), 16->16 at 160x160 0.87 -> 0.69,
// 16->32 at 80x80 0.35 -> 0.31, 8->16 at 112x112 0.27 -> 0.23; 12->24 and
// 24->24, already FMA-bound on 24 of 32 lanes, stay (3.8 and 1.8 ms).
bool DirectConv::Preferred(const DirectConvShape& s) {
  const char* v = std::getenv("KILN_CPU_DIRECT");
  const std::string mode = v ? v : "";
  if (mode == "0" || !Available()) return false;
  if (mode == "all") return true;
  const int64_t k = s.ic * s.kh * s.kw;
  if (s.kh * s.kw > 1 && k <= 288) return true;
  return k <= 128 || (s.oc % 16 != 0 && s.oc <= 48 && k <= 216);
}

DirectConv::DirectConv(const DirectConvShape& s, const float* w, const float* bias, const ops::ActivationAttrs& act)
    : s_(s), ocp_((s.oc + 15) / 16 * 16), act_(act) {
  w_.reset(AlignedFloats(s.kh * s.kw * s.ic * ocp_));
  for (int64_t o = 0; o < s.oc; ++o)
    for (int64_t c = 0; c < s.ic; ++c)
      for (int64_t i = 0; i < s.kh; ++i)
        for (int64_t j = 0; j < s.kw; ++j) w_[((i * s.kw + j) * s.ic + c) * ocp_ + o] = w[((o * s.ic + c) * s.kh + i) * s.kw + j];
  bias_.reset(AlignedFloats(ocp_));
  if (bias) std::copy(bias, bias + s.oc, bias_.get());
}

void DirectConv::Run(const float* x, float* y, const float* residual) const {
  const int64_t rows = s_.n * s_.oh;
  // Threads only where oneDNN's primitives would use them (kSerialFlops).
  const double flops = 2.0 * static_cast<double>(rows * s_.ow * s_.oc) * static_cast<double>(s_.ic * s_.kh * s_.kw);
  ParallelFor(rows, flops < kSerialFlops ? 0 : kParallelMin, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) RunRow(x, y, residual, r / s_.oh, r % s_.oh);
  });
}

void DirectConv::RunRow(const float* x, float* y, const float* residual, int64_t n, int64_t r) const {
  const DirectConvShape& s = s_;
  // Taps of this row's windows that fall inside the input vertically.
  const int64_t top = r * s.sh - s.pad_top;
  const int64_t kh0 = std::max<int64_t>(0, -top), kh1 = std::min(s.kh, s.ih - top);
  // Output columns whose whole window lies inside the input horizontally.
  const int64_t col_lo = std::min(s.ow, (s.pad_left + s.sw - 1) / s.sw);
  const int64_t col_hi = s.iw + s.pad_left >= s.kw ? std::clamp((s.iw + s.pad_left - s.kw) / s.sw + 1, col_lo, s.ow) : col_lo;
  float* yrow = y + (n * s.oh + r) * s.ow * s.oc;
  const float* zrow = residual ? residual + (yrow - y) : nullptr;
  const float* xrow = x + n * s.ih * s.iw * s.ic;  // image n; rows below are offset by (top + kh0)

  Tile t{};
  t.x_pixel = s.sw * s.ic;
  t.x_row = s.iw * s.ic;
  t.ic = s.ic;
  t.taps_h = std::max<int64_t>(0, kh1 - kh0);
  t.w_row = s.kw * s.ic * ocp_;
  t.ocp = ocp_;
  t.y_pixel = s.oc;
  const Clamp clamp = ClampOf(act_);
  t.clamp = Clamps(act_) && act_.kind != ops::Activation::kNone;
  t.lo = clamp.lo;
  t.hi = clamp.hi;
  const int64_t vectors = ocp_ / 16;
  // One column range [c0, c1) with the same horizontal taps [kw0, kw1).
  auto columns = [&](int64_t c0, int64_t c1, int64_t kw0, int64_t kw1, bool one_at_a_time) {
    for (int64_t v0 = 0; v0 < vectors; v0 += kMaxVectors) {
      const int nv = static_cast<int>(std::min<int64_t>(kMaxVectors, vectors - v0));
      const int64_t rest = s.oc - 16 * (v0 + nv - 1);  // real channels in the last vector
      t.last = FirstLanes(rest);
      t.bias = bias_.get() + 16 * v0;
      t.taps_w = std::max<int64_t>(0, kw1 - kw0);
      t.w = w_.get() + (kh0 * s.kw + kw0) * s.ic * ocp_ + 16 * v0;
      // Interior runs of a 3-wide stride-1 kernel with at most two vectors:
      // the row tiles (RunRowTile); everything else the pixel tiles.
      const bool row_tiles = !one_at_a_time && s.sw == 1 && s.kw == kRowKW && t.taps_w == kRowKW && nv <= kRowMaxVectors;
      const int64_t step = one_at_a_time ? 1 : (row_tiles ? kRowMaxPixels[nv] : kMaxPixels[nv]);
      for (int64_t c = c0; c < c1; c += step) {
        const int64_t np = std::min(step, c1 - c);
        const int64_t left = c * s.sw - s.pad_left + kw0;
        // A window with no valid tap reads nothing (the tile is the bias).
        t.x = t.taps_h > 0 && t.taps_w > 0 ? xrow + ((top + kh0) * s.iw + left) * s.ic : x;
        t.y = yrow + c * s.oc + 16 * v0;
        t.z = zrow ? zrow + c * s.oc + 16 * v0 : nullptr;
        (row_tiles ? kRowTiles.fn[nv][np] : kTiles.fn[nv][np])(t);
      }
    }
  };
  // Border columns: one at a time, taps clipped to the input.
  auto border = [&](int64_t c) {
    const int64_t left = c * s.sw - s.pad_left;
    columns(c, c + 1, std::max<int64_t>(0, -left), std::min(s.kw, s.iw - left), true);
  };
  for (int64_t c = 0; c < col_lo; ++c) border(c);
  columns(col_lo, col_hi, 0, s.kw, false);
  for (int64_t c = col_hi; c < s.ow; ++c) border(c);
  // The residual is in already, a clamp applied.
  if (!Clamps(act_)) ResidualActivationInPlace(yrow, nullptr, s.ow * s.oc, act_);
}

void PackedGemm(const float* x, int64_t x_stride, int64_t rows, int64_t k, const float* w, int64_t nv, const float* bias,
                float* y, int64_t y_stride, const GemmOutput& out) {
  const int64_t w_stride = 16 * nv;  // packed weight rows keep the caller's width
  const int64_t channels = out.channels < 0 ? w_stride : out.channels;
  const float* z = out.z;
  nv = (channels + 15) / 16;
  Tile t{};
  t.x_pixel = x_stride;
  t.ic = k;
  t.taps_h = 1;
  t.taps_w = 1;
  t.ocp = w_stride;
  t.y_pixel = y_stride;
  t.clamp = out.lo != -std::numeric_limits<float>::infinity() || out.hi != std::numeric_limits<float>::infinity();
  t.lo = out.lo;
  t.hi = out.hi;
  for (int64_t v0 = 0; v0 < nv; v0 += kMaxVectors) {
    const int n = static_cast<int>(std::min<int64_t>(kMaxVectors, nv - v0));
    const int64_t rest = channels - 16 * (v0 + n - 1);  // real channels in the block's last vector
    t.last = FirstLanes(rest);
    t.w = w + 16 * v0;
    t.bias = bias + 16 * v0;
    // The next weights (as many lines as these) are asked for in equal
    // shares by every tile of rows, not all by the first: that tile reads
    // its own weights from memory, and asking for twice as much there left
    // the rest of the call (the tiles that find the panel in cache) with
    // nothing to overlap. 49 x 512 -> 2048 with cold weights: 0.59 -> 0.55 ms;
    // in resnet50 at 1 thread (per-node minima of 5 alternated runs) the
    // Winograd 3x3s at 56x56 and 28x28 took 6-11% less, the last stage's
    // strided 1x1 1.23 -> 1.08 ms, the model 36.6 -> 35.9 ms.
    const int64_t tiles = (rows + kMaxPixels[n] - 1) / kMaxPixels[n];
    const int64_t pf_total = out.prefetch ? k * n : 0, pf_tile = (pf_total + tiles - 1) / tiles;
    for (int64_t r = 0, i = 0; r < rows; r += kMaxPixels[n], ++i) {
      const int64_t np = std::min<int64_t>(kMaxPixels[n], rows - r);
      t.x = x + r * x_stride;
      t.y = y + r * y_stride + 16 * v0;
      t.z = z ? z + r * y_stride + 16 * v0 : nullptr;
      t.pf = out.prefetch + i * pf_tile * 16;
      t.pf_lines = std::clamp<int64_t>(pf_total - i * pf_tile, 0, pf_tile);
      t.pf_per_c = k > 0 ? (t.pf_lines + k - 1) / k : 0;
      (t.pf_lines > 0 ? kPrefetchTiles.fn[n][np] : kTiles.fn[n][np])(t);
      if (out.act) {
        const int64_t width = std::min<int64_t>(16 * n, channels - 16 * v0);
        for (int64_t p = 0; p < np; ++p) ResidualActivationInPlace(t.y + p * y_stride, nullptr, width, *out.act);
      }
    }
  }
}

}  // namespace kiln::cpu
