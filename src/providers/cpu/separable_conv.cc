#include "providers/cpu/separable_conv.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>
#include <vector>

#include "providers/cpu/conv_epilogue.h"
#include "providers/cpu/direct_conv.h"
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

// Output pixels a depthwise tile computes at once: eight independent FMA
// chains hide the FMA latency, and each weight vector is loaded once per
// tap for all of them.
constexpr int kDwPixels = 8;
// Output rows per band: enough that a band's projection is one GEMM of at
// least this many pixels (whole small maps, single rows of wide ones).
constexpr int64_t kBandPixels = 48;
// The deepest window the tiles' row pointer arrays hold.
constexpr int64_t kMaxK = 15;
// Output channels per weight panel of the 1x1 steps: PackedGemm's widest
// register tile. Each panel is one contiguous stream; row-major weights
// put a panel's rows a whole padded width apart (2.3-3.8 KB in the 576 and
// 960 channel blocks, whose weights arrive cold from memory). In
// mobilenet_v2 the 7x7 blocks took 6-10% less time at 1 thread and 9-13%
// less at 2 (per-node minimum of 6 alternated runs). Each PackedGemm call
// asks for the next panel while it runs (GemmOutput::prefetch): the 7x7
// blocks another 1-3% less (two 5-run A/Bs, each order once).
constexpr int64_t kPanel = kGemmTileChannels;

// One vector of 16 channels for NP output pixels of one row, taps
// [j0, j1) of each valid window row. in[i]: input row i of the window at
// the first pixel's tap j0; w: the packed weights at (i = 0, j0); pixels lie
// x_pixel floats apart in the input, es floats between columns, 16-channel
// vectors of d lie mp floats apart.
struct DwTile {
  const float* const* in;
  int64_t taps_h, taps_w;
  int64_t x_pixel, es;
  const float* w;
  int64_t w_row;  // floats between packed kernel rows (k * mp)
  int64_t mp;
  const float* bias;  // 16 aligned values
  __mmask16 mask;  // lanes to read (a source without channel padding)
  float lo, hi;    // clamp of the result (Relu, Clip)
  float* d;
};

// Accumulates rows [0, rows) of the window into acc: TH rows when TH > 0
// (a full window, unrolled), else t.taps_h. KW as in RunDwTile.
template <int NP, int KW, int TH, bool MASKED>
__attribute__((target("avx512f"))) inline void DwAccumulate(const DwTile& t, __m512 (&acc)[NP]) {
  const int64_t rows = TH ? TH : t.taps_h, taps_w = KW ? KW : t.taps_w, x_pixel = t.x_pixel, es = t.es, mp = t.mp, w_row = t.w_row;
  const __mmask16 mask = t.mask;
#pragma GCC unroll 5
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = t.in[i];
    const float* wr = t.w + i * w_row;
#pragma GCC unroll 5
    for (int64_t j = 0; j < taps_w; ++j) {
      const __m512 wv = _mm512_loadu_ps(wr + j * mp);
      const float* xp = row + j * es;
#pragma GCC unroll 8
      for (int p = 0; p < NP; ++p) {
        const __m512 xv = MASKED ? _mm512_maskz_loadu_ps(mask, xp + p * x_pixel) : _mm512_loadu_ps(xp + p * x_pixel);
        acc[p] = _mm512_fmadd_ps(xv, wv, acc[p]);
      }
    }
  }
}

// KW: the window width when known at compile time (the interior of 3x3
// and 5x5 windows), 0 for the clipped border windows. MASKED: the source
// has no channel padding and this is its last, partial vector. t.lo/t.hi:
// a Relu or Clip applied in registers (-inf/inf otherwise).
template <int NP, int KW, bool MASKED>
__attribute__((target("avx512f"))) void RunDwTile(const DwTile& t) {
  __m512 acc[NP];
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) acc[p] = _mm512_load_ps(t.bias);
  if (KW && t.taps_h == KW)
    DwAccumulate<NP, KW, KW, MASKED>(t, acc);
  else
    DwAccumulate<NP, KW, 0, MASKED>(t, acc);
  const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
#pragma GCC unroll 8
  for (int p = 0; p < NP; ++p) _mm512_storeu_ps(t.d + p * t.mp, _mm512_min_ps(hi, _mm512_max_ps(lo, acc[p])));  // NaN stays NaN
}

// NP output pixels of a 3x3 stride-1 window, input-stationary along the
// row: each input vector is loaded once per window row and multiplied into
// the (up to) three outputs it feeds, with the window row's three weight
// vectors in registers: 3 * (NP + 2) loads for 9 * NP FMAs, instead of one
// load per FMA. kLeft / kRight: the input column left of the first window /
// right of the last one is padding (a row's first and last tiles at pad
// 1), so the tiles cover whole rows and no pixel takes the one-pixel path.
// t.in[i] points at the first input column read; t.taps_h window rows
// (fewer than 3 at the top and bottom rows of pad 1).
template <int NP, bool kLeft, bool kRight>
__attribute__((target("avx512f"))) void RunDwRowTile3(const DwTile& t) {
  const int64_t es = t.es, mp = t.mp;
  constexpr int kFirst = kLeft ? 1 : 0, kEnd = NP + 2 - (kRight ? 1 : 0);  // input columns [kFirst, kEnd) of the span
  __m512 acc[NP];
#pragma GCC unroll 16
  for (int p = 0; p < NP; ++p) acc[p] = _mm512_load_ps(t.bias);
  for (int64_t i = 0; i < t.taps_h; ++i) {
    const float* row = t.in[i];
    const float* wr = t.w + i * t.w_row;
    const __m512 w0 = _mm512_loadu_ps(wr), w1 = _mm512_loadu_ps(wr + mp), w2 = _mm512_loadu_ps(wr + 2 * mp);
#pragma GCC unroll 18
    for (int q = kFirst; q < kEnd; ++q) {
      __m512 xv = _mm512_loadu_ps(row + (q - kFirst) * es);
      // In a register, used three times: GCC otherwise folds the load
      // into each of the three FMAs (three loads of one vector).
      asm("" : "+v"(xv));
      if (q < NP) acc[q] = _mm512_fmadd_ps(xv, w0, acc[q]);
      if (q >= 1 && q - 1 < NP) acc[q - 1] = _mm512_fmadd_ps(xv, w1, acc[q - 1]);
      if (q >= 2) acc[q - 2] = _mm512_fmadd_ps(xv, w2, acc[q - 2]);
    }
  }
  const __m512 lo = _mm512_set1_ps(t.lo), hi = _mm512_set1_ps(t.hi);
#pragma GCC unroll 16
  for (int p = 0; p < NP; ++p) _mm512_storeu_ps(t.d + p * mp, _mm512_min_ps(hi, _mm512_max_ps(lo, acc[p])));  // NaN stays NaN
}

using DwFn = void (*)(const DwTile&);
template <int KW, bool MASKED, int... P>
constexpr std::array<DwFn, kDwPixels + 1> MakeDwTable(std::integer_sequence<int, P...>) {
  return {nullptr, &RunDwTile<P + 1, KW, MASKED>...};
}
// Indexed [masked][KW == 3 ? 1 : KW == 5 ? 2 : 0][pixels].
constexpr auto kPixelSeq = std::make_integer_sequence<int, kDwPixels>();
constexpr std::array<std::array<std::array<DwFn, kDwPixels + 1>, 3>, 2> kDwTiles = {{
    {MakeDwTable<0, false>(kPixelSeq), MakeDwTable<3, false>(kPixelSeq), MakeDwTable<5, false>(kPixelSeq)},
    {MakeDwTable<0, true>(kPixelSeq), MakeDwTable<3, true>(kPixelSeq), MakeDwTable<5, true>(kPixelSeq)},
}};
// Row tiles: 16 accumulators, the three weights of a window row and the
// input vector in the 32 registers; twice the independent FMA chains of
// the tiles above. Indexed [left padding][right padding][pixels].
constexpr int kDwRowPixels = 16;
template <bool kLeft, bool kRight, int... P>
constexpr std::array<DwFn, kDwRowPixels + 1> MakeDwRowTable(std::integer_sequence<int, P...>) {
  return {nullptr, &RunDwRowTile3<P + 1, kLeft, kRight>...};
}
constexpr auto kRowSeq = std::make_integer_sequence<int, kDwRowPixels>();
constexpr std::array<std::array<std::array<DwFn, kDwRowPixels + 1>, 2>, 2> kDwRowTiles3 = {{
    {MakeDwRowTable<false, false>(kRowSeq), MakeDwRowTable<false, true>(kRowSeq)},
    {MakeDwRowTable<true, false>(kRowSeq), MakeDwRowTable<true, true>(kRowSeq)},
}};

// A thread's scratch of at least n floats, kept between runs, 64-byte
// aligned (BigAllocator's buffers are): the tiles' vector loads and stores
// then never split a cache line (split ones made the depthwise tiles about
// 2x slower).
float* Scratch(BigVector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

}  // namespace

bool SeparableConv::Available() { return HasAvx512F(); }

SeparableConv::SeparableConv(const SeparableShape& s, const Step& expand, const Step& depthwise, const Step& project)
    : s_(s), mp_((s.m + 15) / 16 * 16), ocp_((s.oc + 15) / 16 * 16), act_e_(expand.act), act_d_(depthwise.act), act_p_(project.act) {
  band_ = std::clamp<int64_t>((kBandPixels + s.ow - 1) / s.ow, 1, s.oh);
  ring_ = (band_ - 1) * s.sh + s.k;
  if (s.expand) {
    we_.reset(PackGemmPanels(expand.w, s.m, s.ic, mp_));
    be_.reset(AlignedFloats(mp_));
    if (expand.bias) std::copy(expand.bias, expand.bias + s.m, be_.get());
  }
  wd_.reset(AlignedFloats(s.k * s.k * mp_));
  bd_.reset(AlignedFloats(mp_));
  for (int64_t o = 0; o < s.m; ++o)
    for (int64_t t = 0; t < s.k * s.k; ++t) wd_[t * mp_ + o] = depthwise.w[o * s.k * s.k + t];
  if (depthwise.bias) std::copy(depthwise.bias, depthwise.bias + s.m, bd_.get());
  wp_.reset(PackGemmPanels(project.w, s.oc, s.m, ocp_));
  bp_.reset(AlignedFloats(ocp_));
  if (project.bias) std::copy(project.bias, project.bias + s.oc, bp_.get());
}

SeparableConv::Strip SeparableConv::StripOf(int64_t c0, int64_t c1) const {
  const SeparableShape& s = s_;
  const int64_t x0 = std::clamp<int64_t>(c0 * s.sw - s.pad_left, 0, s.iw);
  const int64_t x1 = std::clamp<int64_t>((c1 - 1) * s.sw - s.pad_left + s.k, x0, s.iw);
  return {c0, c1, x0, x1};
}

void SeparableConv::Run(const float* x, float* y, const float* z) const {
  const SeparableShape& s = s_;
  const double pixels_in = static_cast<double>(s.n * s.ih * s.iw), pixels_out = static_cast<double>(s.n * s.oh * s.ow);
  const double flops = 2.0 * ((s.expand ? pixels_in * s.ic * s.m : 0.0) + pixels_out * s.m * (s.k * s.k + s.oc));
  const int64_t work = flops < kSerialFlops ? 0 : kParallelMin;
  const int64_t threads = work ? std::min<int64_t>(omp_get_max_threads(), std::max<int64_t>(1, s.ow / 8)) : 1;
  // A thread's work by rows: its share of the output rows plus the k - sh
  // rows its windows share with the next thread's, expanded twice. By
  // columns: all rows, its share of the columns plus k - sw. A map of few
  // rows splits better by columns: PP-OCRv4 rec's 5x5 blocks at 3x80 (2
  // rows for one thread, 1 for the other) and 12x80 (8 of 12 input rows
  // expanded per thread, against 44 of 80 columns).
  auto cost = [&](int64_t out_rows, int64_t out_cols) {
    const int64_t in_rows = std::min(s.ih, (out_rows - 1) * s.sh + s.k), in_cols = std::min(s.iw, (out_cols - 1) * s.sw + s.k);
    return static_cast<double>(in_rows * in_cols) * static_cast<double>(s.expand ? s.ic * s.m : 0) +
           static_cast<double>(out_rows * out_cols) * static_cast<double>(s.m * (s.k * s.k + s.oc));
  };
  const bool by_columns = threads > 1 && s.n == 1 &&
                          cost(s.oh, (s.ow + threads - 1) / threads) < 0.9 * cost((s.oh + threads - 1) / threads, s.ow);
  if (by_columns) {
    ParallelFor(threads, work, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) RunRows(x, y, z, 0, 0, s.oh, StripOf(s.ow * t / threads, s.ow * (t + 1) / threads));
    });
    return;
  }
  // Each thread takes whole images' row ranges; a range never crosses an image.
  ParallelFor(s.n * s.oh, work, [&](int64_t r0, int64_t r1) {
    while (r0 < r1) {
      const int64_t n = r0 / s.oh, end = std::min(r1, (n + 1) * s.oh);
      RunRows(x, y, z, n, r0 - n * s.oh, end - n * s.oh, StripOf(0, s.ow));
      r0 = end;
    }
  });
}

void SeparableConv::RunRows(const float* x, float* y, const float* z, int64_t n, int64_t r0, int64_t r1, const Strip& st) const {
  const SeparableShape& s = s_;
  const int64_t iw = st.x1 - st.x0, ow = st.c1 - st.c0;  // the strip's input and output widths
  const bool whole = ow == s.ow;  // rows of y and of the band buffer are contiguous runs of pixels
  // Rows of x and the ring likewise, when the strip spans the input's whole
  // width: not for a strip, nor for a map whose last column no window reads
  // (no end padding at stride 2 over an even width), which is expanded row
  // by row as a strip is (it had read the next row's first pixels as that
  // column's).
  const bool whole_in = iw == s.iw;
  thread_local BigVector<float> ring_buf, band_buf;
  float* ring = s.expand ? Scratch(ring_buf, ring_ * s.iw * mp_) : nullptr;
  float* d = Scratch(band_buf, band_ * s.ow * mp_);
  int64_t next = 0;  // the first input row not yet expanded into the ring
  for (int64_t b0 = r0; b0 < r1; b0 += band_) {
    const int64_t b1 = std::min(r1, b0 + band_);
    if (s.expand) {
      // The input rows the band's windows read; the ring keeps those the
      // previous band expanded (at most ring_ rows are live at once).
      const int64_t lo = std::max<int64_t>(0, b0 * s.sh - s.pad_top);
      const int64_t hi = std::min(s.ih, (b1 - 1) * s.sh - s.pad_top + s.k);
      for (int64_t a = std::max(next, lo); a < hi;) {
        const int64_t slot = a % ring_, len = whole_in ? std::min(hi - a, ring_ - slot) : 1;
        float* e = ring + slot * iw * mp_;
        const Clamp c = ClampOf(act_e_);
        for (int64_t b = 0; b * kPanel < mp_; ++b)
          PackedGemm(x + ((n * s.ih + a) * s.iw + st.x0) * s.ic, s.ic, len * iw, s.ic, we_.get() + b * s.ic * kPanel, GemmPanelWidth(mp_, b) / 16,
                     be_.get() + b * kPanel, e + b * kPanel, mp_, {.lo = c.lo, .hi = c.hi, .prefetch = we_.get() + (b + 1) * s.ic * kPanel});
        if (!Clamps(act_e_)) ResidualActivationInPlace(e, nullptr, len * iw * mp_, act_e_);
        a += len;
      }
      next = std::max(next, hi);
    }
    for (int64_t r = b0; r < b1; ++r) Depthwise(x, n, ring, r, d + (r - b0) * ow * mp_, st);
    // The band's output rows: one run of pixels for the whole width, one per
    // row for a strip.
    const Clamp c = ClampOf(act_p_);
    for (int64_t r = b0; r < b1; r += whole ? b1 - b0 : 1) {
      const int64_t rows = whole ? b1 - b0 : 1;
      float* yr = y + ((n * s.oh + r) * s.ow + st.c0) * s.oc;
      const float* zr = z ? z + (yr - y) : nullptr;
      const float* dr = d + (r - b0) * ow * mp_;
      for (int64_t b = 0; b * kPanel < ocp_; ++b) {
        const int64_t o0 = b * kPanel;
        PackedGemm(dr, mp_, rows * ow, s.m, wp_.get() + b * s.m * kPanel, GemmPanelWidth(ocp_, b) / 16, bp_.get() + o0, yr + o0, s.oc,
                   {.z = zr ? zr + o0 : nullptr, .channels = std::min(kPanel, s.oc - o0), .lo = c.lo, .hi = c.hi, .prefetch = wp_.get() + (b + 1) * s.m * kPanel});
      }
      if (!Clamps(act_p_)) ResidualActivationInPlace(yr, nullptr, rows * ow * s.oc, act_p_);
    }
  }
}

// Output row r of image n into d ([ow][mp]), activation applied. The source
// is the ring of expanded rows, or x itself without expansion.
void SeparableConv::Depthwise(const float* x, int64_t n, const float* ring, int64_t r, float* d, const Strip& st) const {
  const SeparableShape& s = s_;
  // The strip as a map of its own: iw input columns from st.x0, ow outputs,
  // pad_left columns of padding left of its first window (0 but at the
  // map's left edge).
  const int64_t iw = st.x1 - st.x0, ow = st.c1 - st.c0, pad_left = st.x0 - (st.c0 * s.sw - s.pad_left);
  const int64_t es = s.expand ? mp_ : s.ic;  // floats between source columns
  const int64_t top = r * s.sh - s.pad_top;
  const int64_t kh0 = std::max<int64_t>(0, -top), kh1 = std::min(s.k, s.ih - top);
  const float* rows[kMaxK];
  for (int64_t i = kh0; i < kh1; ++i) {
    const int64_t a = top + i;
    rows[i - kh0] = s.expand ? ring + (a % ring_) * iw * mp_ : x + ((n * s.ih + a) * s.iw + st.x0) * s.ic;
  }
  // Output columns whose window lies inside the input horizontally.
  const int64_t col_lo = std::min(ow, (pad_left + s.sw - 1) / s.sw);
  const int64_t col_hi = iw + pad_left >= s.k ? std::clamp((iw + pad_left - s.k) / s.sw + 1, col_lo, ow) : col_lo;
  const float* in[kMaxK];
  DwTile t{};
  t.in = in;
  t.taps_h = std::max<int64_t>(0, kh1 - kh0);
  t.x_pixel = s.sw * es;
  t.es = es;
  t.w_row = s.k * mp_;
  t.mp = mp_;
  const Clamp clamp = ClampOf(act_d_);
  t.lo = clamp.lo;
  t.hi = clamp.hi;
  const int64_t vectors = mp_ / 16;
  // Pixels outer, channel vectors inner: a tile's windows (a few KB of each
  // window row) stay in L1 for all the vectors; vectors outer would sweep
  // whole rows (tens of KB each, the ring beyond L1) once per vector.
  auto tile = [&](int64_t c, int64_t np, int64_t j0, int64_t j1) {
    const int64_t left = c * s.sw - pad_left + j0;
    t.taps_w = j1 - j0;
    const int table = t.taps_w == 3 ? 1 : t.taps_w == 5 ? 2 : 0;
    for (int64_t v = 0; v < vectors; ++v) {
      const int64_t rest = s.m - 16 * v;
      // The ring has padded channels; x has none past m, so its last vector is masked.
      t.mask = s.expand ? __mmask16{0xFFFF} : FirstLanes(rest);
      t.bias = bd_.get() + 16 * v;
      for (int64_t i = 0; i < t.taps_h; ++i) in[i] = rows[i] + left * es + 16 * v;
      t.w = wd_.get() + (kh0 * s.k + j0) * mp_ + 16 * v;
      t.d = d + c * mp_ + 16 * v;
      kDwTiles[t.mask != 0xFFFF][table][np](t);
    }
  };
  // 3x3 stride-1 windows over full vectors with at most one column of
  // padding on each side: row tiles of equal width over the whole row.
  // Before, the first and last output columns took the one-pixel path, a
  // seventh of the work at 14x14 and two sevenths at 7x7.
  const int64_t pad_right = std::max<int64_t>(0, ow + s.k - 1 - pad_left - iw);  // missing columns right of the last window
  if (s.k == 3 && s.sw == 1 && t.taps_h > 0 && (s.expand || s.m % 16 == 0) && pad_left <= 1 && pad_right <= 1) {
    const int64_t chunks = (ow + kDwRowPixels - 1) / kDwRowPixels, per = (ow + chunks - 1) / chunks;
    for (int64_t c = 0; c < ow; c += per) {
      const int64_t np = std::min(per, ow - c);
      const bool pl = c == 0 && pad_left == 1, pr = c + np == ow && pad_right == 1;
      const int64_t first = c - pad_left + (pl ? 1 : 0);  // the first input column read
      const DwFn fn = kDwRowTiles3[pl][pr][np];
      for (int64_t v = 0; v < vectors; ++v) {
        t.bias = bd_.get() + 16 * v;
        for (int64_t i = 0; i < t.taps_h; ++i) in[i] = rows[i] + first * es + 16 * v;
        t.w = wd_.get() + kh0 * s.k * mp_ + 16 * v;
        t.d = d + c * mp_ + 16 * v;
        fn(t);
      }
    }
  } else {
    auto border = [&](int64_t c) {
      const int64_t left = c * s.sw - pad_left;
      tile(c, 1, std::max<int64_t>(0, -left), std::min(s.k, iw - left));
    };
    for (int64_t c = 0; c < col_lo; ++c) border(c);
    for (int64_t c = col_lo; c < col_hi; c += kDwPixels) tile(c, std::min<int64_t>(kDwPixels, col_hi - c), 0, s.k);
    for (int64_t c = col_hi; c < ow; ++c) border(c);
  }
  if (!Clamps(act_d_)) ResidualActivationInPlace(d, nullptr, ow * mp_, act_d_);
}

}  // namespace kiln::cpu
