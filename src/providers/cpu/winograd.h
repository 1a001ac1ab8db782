// kiln's own Winograd convolution F(4x4, 3x3) or F(2x2, 3x3) (2-D,
// float32, channels-last, group 1, 3x3, stride 1, undilated), for the 3x3
// convolutions that dominate detectors and ResNets. Each 4x4 output tile is
// computed from its 6x6 input window with 36 products per (input, output)
// channel pair instead of 144 (a 2x2 tile from its 4x4 window with 16
// instead of 36): the window is transformed (B^T d B), multiplied position
// by position with the transformed weights (U = G g G^T, made once), and
// the product transformed back (A^T m A). The per-position
// multiplications of a block of tiles are matrix products run on the
// direct kernel's register tiles (PackedGemm), so the heavy part is code
// kiln already has; the transforms are AVX-512 vector arithmetic over 16
// channels at a time, which channels-last data gives directly.
//
// Work is split into blocks of consecutive tiles (row by row), sized
// so the transformed input and products stay in the core's L2 cache; each
// block's output rows are finished there (bias and residual in the inverse
// transform, then the activation). Blocks are split across threads; every
// output value is one fixed-order computation, so the thread count changes
// no result. Rounding differs from a direct sum (the transforms scale by up
// to 8 and back): within 1e-5 relative on typical activations, as oneDNN's
// Winograd is.
#pragma once

#include <cstdint>
#include <memory>

#include "ops/fused.h"
#include "providers/cpu/direct_conv.h"

namespace kiln::cpu {

struct WinogradShape {
  int64_t n = 0, ih = 0, iw = 0, ic = 0;  // input [n, ih, iw, ic] (channels-last)
  int64_t oh = 0, ow = 0, oc = 0;         // output [n, oh, ow, oc]
  int64_t pad_top = 0, pad_left = 0;      // the end pads follow from the output size
};

class WinogradConv {
 public:
  // The output tile (4: F(4x4, 3x3), 2: F(2x2, 3x3)) where the kernel is
  // the faster choice for this shape on this CPU (AVX-512F; measured
  // against oneDNN's kernels, see winograd.cc), else 0.
  // KILN_CPU_WINOGRAD=0 turns it off (as it does oneDNN's Winograd),
  // =onednn leaves only oneDNN's, =kiln / =kiln2 take every shape it can
  // run with tile 4 / 2 (for tests).
  static int PreferredTile(const WinogradShape& s);

  // w: [oc, ic, 3, 3] row-major (ONNX); bias: oc values, or null; tile: 4
  // or 2.
  WinogradConv(const WinogradShape& s, int tile, const float* w, const float* bias, const ops::ActivationAttrs& act);
  // x [n, ih, iw, ic], y [n, oh, ow, oc] and residual (like y, or null),
  // all dense channels-last. y may be the residual itself, not x.
  void Run(const float* x, float* y, const float* residual) const;

 private:
  // Tiles [t0, t1) of image n (numbered row by row), with scratch v
  // (transformed input) and m (products).
  // (AVX-512F code: the attribute must be on the template's declaration.)
  template <int kA>  // kA = tile_ + 2
  __attribute__((target("avx512f"))) void RunBlock(const float* x, float* y, const float* residual, int64_t n, int64_t t0, int64_t t1, float* v, float* m) const;

  WinogradShape s_;
  int tile_, alpha_;     // outputs per tile side; inputs per tile side (tile_ + 2)
  int64_t icp_, ocp_;    // channels rounded up to 16
  int64_t tiles_x_, tiles_y_;
  int64_t block_;        // tiles per block
  AlignedFloatsPtr u_;     // [alpha^2][ocp / 64 panels][ic][64] (the last panel narrower)
  AlignedFloatsPtr bias_;  // ocp values
  AlignedFloatsPtr zero_;  // ocp zeros (the products' bias)
  ops::ActivationAttrs act_;
};

}  // namespace kiln::cpu
