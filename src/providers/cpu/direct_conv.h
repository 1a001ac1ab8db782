// kiln's own direct convolution (2-D, float32, channels-last, group 1,
// undilated) for the shapes where oneDNN 2.6's channels-last kernels are
// weak: short reductions (1x1 convolutions of up to 128 input channels, the
// expansions of inverted-residual blocks; detector stems such as 3->12 and
// 12->24 at 320x320) and narrow outputs (48->24). It is 10-25% faster there
// (direct_conv.cc has the figures).
//
// The kernel computes a tile of NP consecutive output pixels of one row by
// NV vectors of 16 output channels in AVX-512 registers (NP * NV <= 24
// accumulators): for each tap (kh, kw) and input channel it broadcasts one
// input value per pixel and multiplies it into the weight vectors. Weights
// are packed once, [kh][kw][ic][oc rounded up to 16] with zeros in the pad;
// bias initializes the accumulators. For 3-wide kernels at stride 1 with at
// most 32 output channels, interior runs use row tiles instead: each input
// value of the row is broadcast once for all three taps it feeds.
// Pixels whose window crosses the left or
// right border run one at a time with their taps clipped; rows crossing the
// top or bottom border clip their kh range, so padding is never read.
// A residual starts the accumulators with the bias; a Relu or Clip is
// applied in registers, other activations and post_affine to each output
// row while it is in cache. Rows are split across threads; each output
// value is one fixed-order sum, so the thread count changes no result.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>

#include "ops/fused.h"

namespace kiln::cpu {

// Packed weights' storage: n zeroed floats (at least 16), 64-byte aligned so
// the tiles' vector loads never split a cache line; freed with FreeFloats.
float* AlignedFloats(int64_t n);
struct FreeFloats {
  void operator()(float* p) const;
};
using AlignedFloatsPtr = std::unique_ptr<float[], FreeFloats>;

struct DirectConvShape {
  int64_t n = 0, ih = 0, iw = 0, ic = 0;  // input [n, ih, iw, ic] (channels-last)
  int64_t oh = 0, ow = 0, oc = 0;         // output [n, oh, ow, oc]
  int64_t kh = 0, kw = 0, sh = 1, sw = 1;
  int64_t pad_top = 0, pad_left = 0;  // the end pads follow from the output size
};

class DirectConv {
 public:
  // Whether this CPU can run the kernel (AVX-512F), checked at run time.
  static bool Available();
  // Whether the kernel is the faster choice for this shape (measured at 1
  // thread against oneDNN 2.6; see direct_conv.cc). KILN_CPU_DIRECT=0 turns
  // it off, KILN_CPU_DIRECT=all takes every shape it can run (for tests).
  static bool Preferred(const DirectConvShape& s);

  // w: [oc, ic, kh, kw] row-major (ONNX); bias: oc values, or null.
  DirectConv(const DirectConvShape& s, const float* w, const float* bias, const ops::ActivationAttrs& act);
  // x [n, ih, iw, ic], y [n, oh, ow, oc] and residual (like y, or null),
  // all dense channels-last. y may be the residual itself (each residual
  // value is read before the output value at its place is written), not x.
  void Run(const float* x, float* y, const float* residual) const;

 private:
  void RunRow(const float* x, float* y, const float* residual, int64_t n, int64_t r) const;

  DirectConvShape s_;
  int64_t ocp_;  // oc rounded up to 16
  AlignedFloatsPtr w_, bias_;
  ops::ActivationAttrs act_;
};

// None, Relu and Clip (Relu6) without post_affine are a clamp the register
// tiles apply before their stores (DirectConv, PackedGemm's GemmOutput,
// the separable block); anything else runs after them, on rows in cache.
struct Clamp {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
};
bool Clamps(const ops::ActivationAttrs& a);
// The clamp `a` is ([-inf, inf] when it is none or no clamp).
Clamp ClampOf(const ops::ActivationAttrs& a);

// The most output channels PackedGemm computes in one register tile
// (4 vectors of 16); callers that pack weights in panels use this width.
inline constexpr int64_t kGemmTileChannels = 64;

// The width of weight panel b of `padded` output channels packed in panels
// of kGemmTileChannels (the last one may be narrower).
inline int64_t GemmPanelWidth(int64_t padded, int64_t b) { return std::min(kGemmTileChannels, padded - b * kGemmTileChannels); }

// ONNX 1x1 weights w[outs][k] packed for PackedGemm in panels of
// kGemmTileChannels: panel b, at b * k * kGemmTileChannels, holds
// [k][GemmPanelWidth(padded, b)], zeros past outs (padded: outs rounded up
// to 16). Each panel is one contiguous stream from memory.
float* PackGemmPanels(const float* w, int64_t outs, int64_t k, int64_t padded);

// What PackedGemm writes besides the product (all optional).
struct GemmOutput {
  // The residual, rows like y's: z[r][c] is read before y[r][c] is
  // written, so y may be z.
  const float* z = nullptr;
  // Only y[r][0, channels) is written (at most 16 * nv; < 0: all 16 * nv).
  int64_t channels = -1;
  // The result clamped to [lo, hi] (a fused Relu or Clip), NaN kept.
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  // The weights the caller multiplies next ([k][16 * nv] as w), asked for
  // into L2 while the tiles of rows read w, each tile a share: kiln's
  // Winograd and 1x1 weights stream from memory one panel after the other,
  // and the hardware prefetcher alone left the tiles waiting for them.
  // Prefetches never fault, so this may point past the last weights.
  const float* prefetch = nullptr;
  // An activation the register tiles cannot apply (anything but a clamp),
  // run over each tile's rows right after its stores, while they are in L1.
  const ops::ActivationAttrs* act = nullptr;
};

// y[r][0, 16 * nv) = bias + x[r][0, k) . w (+ z) for rows r in [0, rows),
// on the direct kernel's register tiles: w is [k][16 * nv] with each row
// 64-byte aligned, bias 16 * nv aligned values; x and y rows lie x_stride
// and y_stride floats apart. Every value is one fixed-order sum. For kiln's
// Winograd convolution (winograd.h), whose multiplications are such
// products, and the separable block (separable_conv.h). AVX-512 only
// (DirectConv::Available).
void PackedGemm(const float* x, int64_t x_stride, int64_t rows, int64_t k, const float* w, int64_t nv, const float* bias,
                float* y, int64_t y_stride, const GemmOutput& out = {});

}  // namespace kiln::cpu
